/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ubxdp's URMA: UnifiedBus user-space API over the UBoE endpoint (liburma).
 *
 * Source compatible with the public API of openEuler UMDK's liburma for the
 * calls below (same names and signatures); the implementation runs the
 * ubxdp transport core over AF_XDP, no UB hardware, no kernel module.
 * Supported values, and what returns URMA_ENOPERM: docs/URMA.md.
 *
 * Return conventions: urma_status_t calls return URMA_SUCCESS (0) or an
 * errno-valued code (URMA_EINVAL, URMA_ENOPERM, URMA_ETIMEOUT, ...); calls
 * returning a pointer return NULL on failure with errno set. Every call may
 * be made from any thread (docs/URMA.md, "Threads").
 */
#ifndef URMA_API_H
#define URMA_API_H

#include <stdbool.h>
#include <stdint.h>

#include "urma_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- library and devices ------------------------------------------------- */

urma_status_t urma_init(urma_init_attr_t *conf);
urma_status_t urma_uninit(void);

/* The devices (an array of num_devices pointers, free with urma_free_device_list). */
urma_device_t **urma_get_device_list(int *num_devices);
void urma_free_device_list(urma_device_t **device_list);
urma_device_t *urma_get_device_by_name(char *dev_name);
urma_device_t *urma_get_device_by_eid(urma_eid_t eid, urma_transport_type_t type);
urma_status_t urma_query_device(urma_device_t *dev, urma_device_attr_t *dev_attr);

/* The device's EIDs (*cnt of them; free with urma_free_eid_list). */
urma_eid_info_t *urma_get_eid_list(urma_device_t *dev, uint32_t *cnt);
void urma_free_eid_list(urma_eid_info_t *eid_list);

urma_context_t *urma_create_context(urma_device_t *dev, uint32_t eid_index);
urma_status_t urma_delete_context(urma_context_t *ctx);

/* ---- completion ------------------------------------------------------------ */

urma_jfce_t *urma_create_jfce(urma_context_t *ctx);
urma_status_t urma_delete_jfce(urma_jfce_t *jfce);

urma_jfc_t *urma_create_jfc(urma_context_t *ctx, urma_jfc_cfg_t *jfc_cfg);
urma_status_t urma_delete_jfc(urma_jfc_t *jfc);

/* Up to cr_cnt records into cr; the number taken, or < 0 (-1, errno
 * EOVERFLOW: the JFC overflowed and lost records; EINVAL: bad arguments). */
int urma_poll_jfc(urma_jfc_t *jfc, int cr_cnt, urma_cr_t *cr);
/* The next completion of jfc makes its JFCE readable (once). */
urma_status_t urma_rearm_jfc(urma_jfc_t *jfc, bool solicited_only);
/* Up to jfc_cnt JFCs whose event came, waiting up to time_out ms (-1: no
 * limit, 0: not at all); the number, or -1. */
int urma_wait_jfc(urma_jfce_t *jfce, uint32_t jfc_cnt, int time_out, urma_jfc_t *jfc[]);
void urma_ack_jfc(urma_jfc_t *jfc[], uint32_t nevents[], uint32_t jfc_cnt);

/* ---- queues ---------------------------------------------------------------- */

urma_jfs_t *urma_create_jfs(urma_context_t *ctx, urma_jfs_cfg_t *jfs_cfg);
urma_status_t urma_delete_jfs(urma_jfs_t *jfs);

urma_jfr_t *urma_create_jfr(urma_context_t *ctx, urma_jfr_cfg_t *jfr_cfg);
urma_status_t urma_delete_jfr(urma_jfr_t *jfr);

urma_jetty_t *urma_create_jetty(urma_context_t *ctx, urma_jetty_cfg_t *jetty_cfg);
urma_status_t urma_delete_jetty(urma_jetty_t *jetty);

/* A chain of work requests (wr->next); on failure *bad_wr is the first not posted. */
urma_status_t urma_post_jfs_wr(urma_jfs_t *jfs, urma_jfs_wr_t *wr, urma_jfs_wr_t **bad_wr);
urma_status_t urma_post_jfr_wr(urma_jfr_t *jfr, urma_jfr_wr_t *wr, urma_jfr_wr_t **bad_wr);
urma_status_t urma_post_jetty_send_wr(urma_jetty_t *jetty, urma_jfs_wr_t *wr, urma_jfs_wr_t **bad_wr);
urma_status_t urma_post_jetty_recv_wr(urma_jetty_t *jetty, urma_jfr_wr_t *wr, urma_jfr_wr_t **bad_wr);

/* One-call forms: one work request, one SGE. */
urma_status_t urma_write(urma_jfs_t *jfs, urma_target_jetty_t *target_jfr, urma_target_seg_t *dst_tseg,
			 urma_target_seg_t *src_tseg, uint64_t dst, uint64_t src, uint32_t len,
			 urma_jfs_wr_flag_t flag, uint64_t user_ctx);
urma_status_t urma_read(urma_jfs_t *jfs, urma_target_jetty_t *target_jfr, urma_target_seg_t *dst_tseg,
			urma_target_seg_t *src_tseg, uint64_t dst, uint64_t src, uint32_t len,
			urma_jfs_wr_flag_t flag, uint64_t user_ctx);
urma_status_t urma_send(urma_jfs_t *jfs, urma_target_jetty_t *target_jfr, urma_target_seg_t *src_tseg,
			uint64_t src, uint32_t len, urma_jfs_wr_flag_t flag, uint64_t user_ctx);
urma_status_t urma_recv(urma_jfr_t *jfr, urma_target_seg_t *recv_tseg, uint64_t buf, uint32_t len,
			uint64_t user_ctx);

/* ---- remote jetties -------------------------------------------------------- */

/* Asks the remote side (in band) whether the JFR or jetty exists, takes this
 * mode and the token: NULL with errno ETIMEDOUT when it does not answer in
 * time (UBXDP_URMA_TIMEOUT_MS, default 2000), or its refusal. */
urma_target_jetty_t *urma_import_jfr(urma_context_t *ctx, urma_rjfr_t *rjfr, urma_token_t *token_value);
urma_status_t urma_unimport_jfr(urma_target_jetty_t *target_jfr);
urma_target_jetty_t *urma_import_jetty(urma_context_t *ctx, urma_rjetty_t *rjetty, urma_token_t *token_value);
urma_status_t urma_unimport_jetty(urma_target_jetty_t *tjetty);

/* Set up the transport channel now rather than at the first work request. */
urma_status_t urma_advise_jfr(urma_jfs_t *jfs, urma_target_jetty_t *tjfr);
urma_status_t urma_unadvise_jfr(urma_jfs_t *jfs, urma_target_jetty_t *tjfr);
urma_status_t urma_advise_jetty(urma_jetty_t *jetty, urma_target_jetty_t *tjetty);
urma_status_t urma_unadvise_jetty(urma_jetty_t *jetty, urma_target_jetty_t *tjetty);

/* RC: connect a jetty to one remote jetty. */
urma_status_t urma_bind_jetty(urma_jetty_t *jetty, urma_target_jetty_t *tjetty);
urma_status_t urma_unbind_jetty(urma_jetty_t *jetty);

/* ---- memory ---------------------------------------------------------------- */

urma_target_seg_t *urma_register_seg(urma_context_t *ctx, urma_seg_cfg_t *seg_cfg);
urma_status_t urma_unregister_seg(urma_target_seg_t *target_seg);
urma_target_seg_t *urma_import_seg(urma_context_t *ctx, urma_seg_t *seg, urma_token_t *token_value,
				   uint64_t addr, urma_import_seg_flag_t flag);
urma_status_t urma_unimport_seg(urma_target_seg_t *tseg);

/* ---- logging ----------------------------------------------------------------- */

/* By default, lines at URMA_VLOG_LEVEL_WARNING and above go to stderr
 * (UBXDP_URMA_LOG=0..7 sets the level). */
urma_status_t urma_register_log_func(urma_log_cb_t func);
urma_status_t urma_unregister_log_func(void);
urma_vlog_level_t urma_log_get_level(void);
void urma_log_set_level(urma_vlog_level_t level);

#ifdef __cplusplus
}
#endif

#endif
