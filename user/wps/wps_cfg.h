/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * WPS ingress configuration as text: attach options, classification rules,
 * member paths, quanta; the overlap check between rules; counter names.
 * Pure (no BPF, no I/O but the clock's resolution) so ubctl, the BPF harness,
 * the bench and the unit tests share it.
 */
#ifndef UBXDP_WPS_CFG_H
#define UBXDP_WPS_CFG_H

#include <stdbool.h>
#include <stddef.h>
#include "wps_ingress.h"

void wps_in_cfg_defaults(struct wps_in_cfg *c);
/* cfg.coarse_tick_ns: the coarse clock's tick on this host (its resolution), as attach sets it. */
void wps_in_cfg_tick(struct wps_in_cfg *c);

/*
 * One attach option (without the leading --) and its value (NULL for flags).
 * Returns 0, 1 when `name` is not an attach option, -1 with err on a bad value.
 */
int wps_in_cfg_set(struct wps_in_cfg *c, const char *name, const char *val, char *err, size_t errlen);
/* cfg.path_mask from cfg.path_slot[0..npaths-1]: call after changing the paths in use. */
void wps_in_cfg_sync_paths(struct wps_in_cfg *c);
/* A path slot's state: "up", or "down:" and why (admin, link, neigh), from the live map. */
void wps_path_state(const struct wps_in_live *lv, __u32 slot, char *buf, size_t len);
/* A path's next hop: its static MAC, or "ADDR=MAC" ("ADDR=?" unresolved) from the neighbour table. */
void wps_path_nexthop(const struct wps_in_path *p, char *buf, size_t len);
/* cfg.flags from the rules in use, rules[0..n-1]: WPS_IN_F_LEAST_LOADED. Call after changing them. */
void wps_in_cfg_sync_rules(struct wps_in_cfg *c, const struct wps_in_rule *rules, int n);
/* n rounded up to a power of 2. */
__u32 wps_in_pow2(__u32 n);
struct bpf_object;
/*
 * The flow table of a WPS ingress object not yet loaded, sized for n flows
 * (rounded up to a power of 2): the max_entries of flows and flow_cache (n),
 * flow_hot and flow_state (2n slots). The caller sets the object's max_flows
 * to the same n (its rodata). Defined in user/wps/wps_cfg_bpf.c (libbpf).
 */
void wps_in_flow_table_size(struct bpf_object *obj, __u32 n);
/* Whole-configuration checks (required fields present). */
int wps_in_cfg_check(const struct wps_in_cfg *c, char *err, size_t errlen);
/* Does the option take a value? -1 when it is not an attach option. */
int wps_in_cfg_takes_value(const char *name);
/* The i-th attach option's name (from 0), NULL past the last: the keys of a config file. */
const char *wps_in_cfg_opt_name(size_t i);

/* "10.0.0.0/8", "fd00::/16", "10.1.2.3" (host). IPv4 is stored IPv4-mapped, plen + 96. */
int wps_parse_prefix(const char *s, __u8 addr[16], __u8 *plen, __u8 *family, char *err, size_t errlen);
int wps_parse_addr6(const char *s, __u8 addr[16], char *err, size_t errlen);
/* "16" packets, "64000b" bytes, "500us" / "2ms" time. 0 is refused. */
int wps_parse_quantum(const char *s, __u8 *kind, __u64 *q, char *err, size_t errlen);
int wps_parse_mac(const char *s, __u8 mac[6], char *err, size_t errlen);
/* Decimal or 0x hex within [lo, hi]. */
int wps_parse_uint(const char *s, unsigned long long lo, unsigned long long hi, unsigned long long *out,
		   const char *what, char *err, size_t errlen);

/*
 * `rule add` options: --dst P [--src P] [--proto tcp|udp|N] [--dport N]
 * --quantum Q [--no-reorder] [--sched rr|weighted|least-loaded].
 * argv holds only these options. Returns 0 or -1 with err.
 */
int wps_rule_parse(int argc, char **argv, struct wps_in_rule *r, char *err, size_t errlen);
/* Do two rules match a common packet? */
bool wps_rules_overlap(const struct wps_in_rule *a, const struct wps_in_rule *b);
/* "--dst 10.2.0.0/24 --src 0.0.0.0/0 --proto tcp --dport 5201 --quantum 16 --sched rr" */
void wps_rule_format(const struct wps_in_rule *r, char *buf, size_t len);
/* Same key (family, prefixes, proto, dport): what `rule del` matches on. */
bool wps_rule_same_match(const struct wps_in_rule *a, const struct wps_in_rule *b);

const char *wps_in_counter_name(unsigned id);
int wps_in_counter_id(const char *name);
const char *wps_bnd_counter_name(unsigned id);
int wps_bnd_counter_id(const char *name);

#endif
