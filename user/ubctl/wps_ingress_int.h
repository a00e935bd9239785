/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ubctl wps ingress: what its files share. wps_ingress.c attaches and
 * detaches and opens an instance; wps_ingress_paths.c and wps_ingress_rules.c
 * edit its paths and rules; wps_ingress_detour.c is the netdev plumbing of
 * the segmentation detour and of DEV's offloads; wps_ingress_stats.c its part
 * of ubctl stats.
 */
#ifndef UBCTL_WPS_INGRESS_INT_H
#define UBCTL_WPS_INGRESS_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "wps_ingress.h"
#include "ubctl/ubctl.h"

/* ---- wps_ingress.c --------------------------------------------------------------- */

/* A pin of dir opened: its fd, or -1 (said). */
int wps_in_open_pin(const char *dir, const char *file);
/* --dev DEV, the one option of the commands that only name an instance. */
extern const struct optab wps_in_dev_opts[];

/* An open instance: the maps paths and rules edit, its cfg read, `live` mapped. */
struct wps_in_inst {
	char dir[PATH_MAX];
	int cfg_fd, paths_fd, rules_fd, pstats_fd, pload_fd, live_fd;
	struct wps_in_live *live;
	struct wps_in_cfg cfg;
};

/* Returns 0, or the exit status (said); wps_in_inst_close() either way. */
int wps_in_inst_open(const char *dev, struct wps_in_inst *in);
void wps_in_inst_close(struct wps_in_inst *in);
/* A slot taken into or out of use: none of its down bits (or learned MTU) outlive it. */
void wps_live_slot_reset(struct wps_in_live *lv, __u32 slot);

/* ---- wps_ingress_detour.c -------------------------------------------------------- */

/* DEV's MAC and MTU (either NULL: not asked); non-zero with errno on failure. */
int wps_dev_info(const char *dev, unsigned char mac[6], unsigned *mtu);
/* TSO, GSO, GRO (with their sub-features) all off; non-zero with the reason in err. */
int wps_offloads_off(const char *dev, char *err, size_t errlen);
/* DEV's requested features (ETHTOOL_GFEATURES), WPS_IN_FEAT_WORDS words; non-zero if unreadable. */
int wps_features_get(const char *dev, __u32 *req);
/* The features attach changed back to what they were (cfg->dev_feat_*); non-zero on failure. */
int wps_features_restore(const char *dev, const struct wps_in_cfg *cfg);
/*
 * The detour for DEV: a veth pair of one queue each, every GSO kind off on
 * the sending end, RPS on the receiving end; *a_if, *b_if their ifindexes.
 * A failure leaves no pair behind: -1: the pair, -2: its features, -3: RPS;
 * err says the kernel's reason for the first two.
 */
int wps_seg_create(unsigned dev_if, unsigned mtu, unsigned *a_if, unsigned *b_if, char *err, size_t errlen);
/* The detour of DEV deleted (its filter goes with it), if there is one. */
void wps_seg_delete(unsigned dev_if);

/* ---- wps_ingress_stats.c --------------------------------------------------------- */

/* The role's stats_more: an instance's paths and flows, as text (inst NULL) or into inst. */
void wps_ingress_stats_more(const char *dir, struct json_object *inst);

#endif
