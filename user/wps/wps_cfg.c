// SPDX-License-Identifier: BSD-2-Clause
#include "wps/wps_cfg.h"
#include "lib/parse_num.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

void wps_in_cfg_defaults(struct wps_in_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->version = WPS_IN_CFG_VERSION;
	c->hop_limit = 64;
	/* The most the close-time ring keeps: at 8, a flow of 16-frame groups was held to
	 * 94 Mbit/s over 10 ms of path delay, and the groups extended at the bound loaded the
	 * paths unevenly (bench/README.md, WPS headline with defaults). */
	c->max_inflight = WPS_IN_INFLIGHT_RING;
	c->fid_pool = WPS_IN_FID_SLOTS - 1;
	c->quarantine_ns = 1000000000ULL;	/* 1 s: well above any path delay */
	c->idle_ns = 5000000000ULL;		/* 5 s */
	c->max_delay_ns = 10000000ULL;		/* 10 ms */
	c->load_window_ns = 1000000ULL;		/* 1 ms */
	for (int i = 0; i < WPS_IN_MAX_PATHS; i++) {
		c->weight[i] = 1;
		c->path_slot[i] = (__u8)i;
	}
}

void wps_in_cfg_tick(struct wps_in_cfg *c)
{
	struct timespec res;

	if (!clock_getres(CLOCK_MONOTONIC_COARSE, &res))
		c->coarse_tick_ns = (__u64)res.tv_sec * 1000000000ULL + (__u64)res.tv_nsec;
}

void wps_in_cfg_sync_rules(struct wps_in_cfg *c, const struct wps_in_rule *rules, int n)
{
	c->flags &= ~WPS_IN_F_LEAST_LOADED;
	for (int i = 0; i < n; i++)
		if (rules[i].used && rules[i].sched == WPS_SCHED_LEAST_LOADED)
			c->flags |= WPS_IN_F_LEAST_LOADED;
}

__u32 wps_in_pow2(__u32 n)
{
	__u32 p = 1;

	while (p < n && p < (1u << 31))
		p <<= 1;
	return p;
}

void wps_in_cfg_sync_paths(struct wps_in_cfg *c)
{
	c->path_mask = 0;
	for (__u32 i = 0; i < c->npaths && i < WPS_IN_MAX_PATHS; i++)
		c->path_mask |= 1u << (c->path_slot[i] & (WPS_IN_MAX_PATHS - 1));
}

void wps_path_state(const struct wps_in_live *lv, __u32 slot, char *buf, size_t len)
{
	__u32 b = 1u << (slot & (WPS_IN_MAX_PATHS - 1));
	bool a = lv && (lv->admin_down & b), l = lv && (lv->link_down & b), n = lv && (lv->neigh_down & b);

	if (!a && !l && !n)
		snprintf(buf, len, "up");
	else
		snprintf(buf, len, "down:%s%s%s%s%s", a ? "admin" : "", a && (l || n) ? "," : "", l ? "link" : "",
			 l && n ? "," : "", n ? "neigh" : "");
}

void wps_path_nexthop(const struct wps_in_path *p, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?", m[24];
	static const __u8 zero[6];

	snprintf(m, sizeof(m), "%02x:%02x:%02x:%02x:%02x:%02x", p->dmac[0], p->dmac[1], p->dmac[2], p->dmac[3],
		 p->dmac[4], p->dmac[5]);
	if (!(p->flags & WPS_PATH_F_NEXTHOP)) {
		snprintf(buf, len, "%s", m);
		return;
	}
	inet_ntop(p->nh_family == 4 ? AF_INET : AF_INET6, p->nh_family == 4 ? p->nexthop + 12 : p->nexthop, a,
		  sizeof(a));
	snprintf(buf, len, "%s=%s", a, memcmp(p->dmac, zero, 6) ? m : "?");
}

int wps_parse_uint(const char *s, unsigned long long lo, unsigned long long hi, unsigned long long *out,
		   const char *what, char *err, size_t errlen)
{
	uint64_t v;

	if (pn_uint(what, s, lo, hi, &v, err, errlen))
		return -1;
	*out = v;
	return 0;
}

int wps_parse_addr6(const char *s, __u8 addr[16], char *err, size_t errlen)
{
	if (!s || inet_pton(AF_INET6, s, addr) != 1) {
		snprintf(err, errlen, "'%s' is not an IPv6 address", s ? s : "");
		return -1;
	}
	return 0;
}

int wps_parse_prefix(const char *s, __u8 addr[16], __u8 *plen, __u8 *family, char *err, size_t errlen)
{
	char buf[64], *slash;
	unsigned long long n;
	unsigned max;

	if (!s || strlen(s) >= sizeof(buf)) {
		snprintf(err, errlen, "bad prefix '%s'", s ? s : "");
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", s);
	slash = strchr(buf, '/');
	if (slash)
		*slash++ = '\0';
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, buf, addr + 12) == 1) {
		addr[10] = addr[11] = 0xff;
		*family = 4;
		max = 32;
	} else if (inet_pton(AF_INET6, buf, addr) == 1) {
		*family = 6;
		max = 128;
	} else {
		snprintf(err, errlen, "'%s' is not an IPv4 or IPv6 prefix", s);
		return -1;
	}
	n = max;
	if (slash && wps_parse_uint(slash, 0, max, &n, "prefix length", err, errlen))
		return -1;
	*plen = (__u8)(n + (max == 32 ? 96 : 0));
	/* Host bits must be zero: a prefix written with them is probably a typo. */
	for (unsigned i = *plen; i < 128; i++)
		if (addr[i / 8] & (0x80 >> (i % 8))) {
			snprintf(err, errlen, "prefix '%s' has host bits set", s);
			return -1;
		}
	return 0;
}

int wps_parse_quantum(const char *s, __u8 *kind, __u64 *q, char *err, size_t errlen)
{
	char num[32];
	const char *unit;
	unsigned long long v, mul = 1;
	size_t n;

	if (!s || !*s) {
		snprintf(err, errlen, "missing quantum");
		return -1;
	}
	n = strspn(s, "0123456789");
	unit = s + n;
	if (n == 0 || n >= sizeof(num)) {
		snprintf(err, errlen, "quantum '%s': want N (packets), Nb (bytes) or Nus/Nms (time)", s);
		return -1;
	}
	memcpy(num, s, n);
	num[n] = '\0';
	if (!*unit) {
		*kind = WPS_Q_PACKETS;
	} else if (!strcmp(unit, "b")) {
		*kind = WPS_Q_BYTES;
	} else if (!strcmp(unit, "us")) {
		*kind = WPS_Q_TIME;
		mul = 1000;
	} else if (!strcmp(unit, "ms")) {
		*kind = WPS_Q_TIME;
		mul = 1000000;
	} else {
		snprintf(err, errlen, "quantum '%s': unknown unit '%s' (b, us, ms)", s, unit);
		return -1;
	}
	if (wps_parse_uint(num, 1, 0xffffffffULL, &v, "quantum", err, errlen))
		return -1;
	*q = v * mul;
	return 0;
}

int wps_parse_mac(const char *s, __u8 mac[6], char *err, size_t errlen)
{
	unsigned b[6];
	char tail;

	if (!s || sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &tail) != 6 ||
	    strlen(s) != 17) {
		snprintf(err, errlen, "'%s' is not a MAC address (aa:bb:cc:dd:ee:ff)", s ? s : "");
		return -1;
	}
	for (int i = 0; i < 6; i++)
		mac[i] = (__u8)b[i];
	return 0;
}

static const struct {
	const char *name;
	bool value;
} attach_opts[] = {
	{ "node-id", true }, { "egress-node-id", true }, { "src", true }, { "egress-addr", true },
	{ "hbh", false }, { "hop-limit", true }, { "ecmp", true }, { "mtu", true },
	{ "ingress-port", true }, { "egress-port", true }, { "max-inflight", true },
	{ "max-delay", true }, { "max-delay-us", true }, { "quarantine", true }, { "quarantine-ms", true },
	{ "idle-ms", true }, { "idle-timeout", true }, { "load-window", true }, { "load-window-us", true }, { "mtu-drop", false }, { "fid-pool", true }, { "icmp-src4", true },
};

int wps_in_cfg_takes_value(const char *name)
{
	for (size_t i = 0; i < sizeof(attach_opts) / sizeof(attach_opts[0]); i++)
		if (!strcmp(attach_opts[i].name, name))
			return attach_opts[i].value;
	return -1;
}

const char *wps_in_cfg_opt_name(size_t i)
{
	return i < sizeof(attach_opts) / sizeof(attach_opts[0]) ? attach_opts[i].name : NULL;
}

int wps_in_cfg_set(struct wps_in_cfg *c, const char *name, const char *v, char *err, size_t errlen)
{
	unsigned long long n;
	uint64_t ns;
	char opt[40];

	if (wps_in_cfg_takes_value(name) < 0)
		return 1;
	snprintf(opt, sizeof(opt), "--%s", name);
	if (wps_in_cfg_takes_value(name) && !v) {
		snprintf(err, errlen, "--%s needs a value", name);
		return -1;
	}
	if (!strcmp(name, "node-id") || !strcmp(name, "egress-node-id")) {
		if (wps_parse_uint(v, 0, 0xffff, &n, opt, err, errlen))
			return -1;
		if (name[0] == 'n')
			c->node_id = (__u16)n;
		else
			c->egress_node_id = (__u16)n;
	} else if (!strcmp(name, "src")) {
		return wps_parse_addr6(v, c->src, err, errlen);
	} else if (!strcmp(name, "egress-addr")) {
		return wps_parse_addr6(v, c->dst, err, errlen);
	} else if (!strcmp(name, "hbh")) {
		c->flags |= WPS_IN_F_HBH;
	} else if (!strcmp(name, "mtu-drop")) {
		c->flags |= WPS_IN_F_MTU_DROP;
	} else if (!strcmp(name, "hop-limit")) {
		if (wps_parse_uint(v, 1, 255, &n, opt, err, errlen))
			return -1;
		c->hop_limit = (__u8)n;
	} else if (!strcmp(name, "ecmp")) {
		if (wps_parse_uint(v, 1, WPS_IN_MAX_PATHS, &n, opt, err, errlen))
			return -1;
		c->ecmp = (__u8)n;
	} else if (!strcmp(name, "mtu")) {
		if (wps_parse_uint(v, 1280, 65535, &n, opt, err, errlen))
			return -1;
		c->path_mtu = (__u16)n;
	} else if (!strcmp(name, "ingress-port") || !strcmp(name, "egress-port")) {
		if (wps_parse_uint(v, 0, 255, &n, opt, err, errlen))
			return -1;
		if (name[0] == 'i')
			c->ingress_port = (__u8)n;
		else
			c->egress_port = (__u8)n;
	} else if (!strcmp(name, "max-inflight")) {
		if (wps_parse_uint(v, 2, WPS_IN_INFLIGHT_RING, &n, opt, err, errlen))
			return -1;
		c->max_inflight = (__u8)n;
	} else if (!strcmp(name, "max-delay") || !strcmp(name, "max-delay-us")) {
		if (pn_time(opt, v, PN_US, 0, 10 * PN_S, &ns, err, errlen))
			return -1;
		c->max_delay_ns = ns;
	} else if (!strcmp(name, "quarantine") || !strcmp(name, "quarantine-ms")) {
		if (pn_time(opt, v, PN_MS, 0, 3600 * PN_S, &ns, err, errlen))
			return -1;
		c->quarantine_ns = ns;
	} else if (!strcmp(name, "idle-ms") || !strcmp(name, "idle-timeout")) {
		if (pn_time(opt, v, name[5] == 'm' ? PN_MS : PN_S, PN_MS, 3600 * PN_S, &ns, err, errlen))
			return -1;
		c->idle_ns = ns;
	} else if (!strcmp(name, "load-window") || !strcmp(name, "load-window-us")) {
		if (pn_time(opt, v, PN_US, PN_US, 10 * PN_S, &ns, err, errlen))
			return -1;
		c->load_window_ns = ns;
	} else if (!strcmp(name, "fid-pool")) {
		if (wps_parse_uint(v, 1, WPS_IN_FID_SLOTS - 1, &n, opt, err, errlen))
			return -1;
		c->fid_pool = (__u32)n;
	} else if (!strcmp(name, "icmp-src4")) {
		if (inet_pton(AF_INET, v, &c->icmp_src4) != 1) {
			snprintf(err, errlen, "--icmp-src4: '%s' is not an IPv4 address", v);
			return -1;
		}
	}
	return 0;
}

static bool zero16(const __u8 *a)
{
	for (int i = 0; i < 16; i++)
		if (a[i])
			return false;
	return true;
}

int wps_in_cfg_check(const struct wps_in_cfg *c, char *err, size_t errlen)
{
	if (zero16(c->src)) {
		snprintf(err, errlen, "--src ADDR (this ingress node's IPv6 address) is required");
		return -1;
	}
	if (zero16(c->dst)) {
		snprintf(err, errlen, "--egress-addr ADDR (the egress node's IPv6 address) is required");
		return -1;
	}
	return 0;
}

static int parse_proto(const char *s, __u8 *p, char *err, size_t errlen)
{
	unsigned long long n;

	if (!strcasecmp(s, "tcp"))
		*p = 6;
	else if (!strcasecmp(s, "udp"))
		*p = 17;
	else if (!strcasecmp(s, "sctp"))
		*p = 132;
	else if (wps_parse_uint(s, 1, 255, &n, "--proto", err, errlen))
		return -1;
	else
		*p = (__u8)n;
	return 0;
}

int wps_rule_parse(int argc, char **argv, struct wps_in_rule *r, char *err, size_t errlen)
{
	bool have_dst = false, have_src = false, have_q = false;
	__u8 sfam = 0;
	unsigned long long n;

	memset(r, 0, sizeof(*r));
	r->used = 1;
	r->reorder = 1;
	for (int i = 0; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(o, "--no-reorder")) {
			r->reorder = 0;
			continue;
		}
		if (strncmp(o, "--", 2) || !v) {
			snprintf(err, errlen, "rule: %s '%s'", strncmp(o, "--", 2) ? "unexpected" : "missing value for", o);
			return -1;
		}
		i++;
		if (!strcmp(o, "--dst")) {
			if (wps_parse_prefix(v, r->dst, &r->dst_plen, &r->family, err, errlen))
				return -1;
			have_dst = true;
		} else if (!strcmp(o, "--src")) {
			if (wps_parse_prefix(v, r->src, &r->src_plen, &sfam, err, errlen))
				return -1;
			have_src = true;
		} else if (!strcmp(o, "--proto")) {
			if (parse_proto(v, &r->proto, err, errlen))
				return -1;
		} else if (!strcmp(o, "--dport")) {
			if (wps_parse_uint(v, 1, 65535, &n, "--dport", err, errlen))
				return -1;
			r->dport = (__u16)n;
		} else if (!strcmp(o, "--quantum")) {
			if (wps_parse_quantum(v, &r->qkind, &r->quantum, err, errlen))
				return -1;
			have_q = true;
		} else if (!strcmp(o, "--sched")) {
			if (!strcmp(v, "rr"))
				r->sched = WPS_SCHED_RR;
			else if (!strcmp(v, "weighted"))
				r->sched = WPS_SCHED_WEIGHTED;
			else if (!strcmp(v, "least-loaded"))
				r->sched = WPS_SCHED_LEAST_LOADED;
			else {
				snprintf(err, errlen, "--sched '%s': rr, weighted or least-loaded", v);
				return -1;
			}
		} else {
			snprintf(err, errlen, "rule: unknown option '%s'", o);
			return -1;
		}
	}
	if (!have_dst) {
		snprintf(err, errlen, "rule: --dst PREFIX is required");
		return -1;
	}
	if (have_src && sfam != r->family) {
		snprintf(err, errlen, "rule: --src and --dst are of different address families");
		return -1;
	}
	if (!have_src) {
		memset(r->src, 0, 16);
		if (r->family == 4) {
			r->src[10] = r->src[11] = 0xff;
			r->src_plen = 96;
		}
	}
	if (r->dport && r->proto != 6 && r->proto != 17 && r->proto != 132) {
		snprintf(err, errlen, "rule: --dport needs --proto tcp, udp or sctp");
		return -1;
	}
	/* Last, so that a caller matching on the classifier alone has it complete. */
	if (!have_q) {
		snprintf(err, errlen, "rule: --quantum N|Nb|Nus is required");
		return -1;
	}
	return 0;
}

/* Two prefixes overlap when the shorter one contains the other's network. */
static bool prefixes_overlap(const __u8 *a, __u8 alen, const __u8 *b, __u8 blen)
{
	return wps_prefix_match(b, a, alen < blen ? alen : blen);
}

bool wps_rules_overlap(const struct wps_in_rule *a, const struct wps_in_rule *b)
{
	if (a->family != b->family)
		return false;
	if (a->proto && b->proto && a->proto != b->proto)
		return false;
	if (a->dport && b->dport && a->dport != b->dport)
		return false;
	return prefixes_overlap(a->dst, a->dst_plen, b->dst, b->dst_plen) &&
	       prefixes_overlap(a->src, a->src_plen, b->src, b->src_plen);
}

bool wps_rule_same_match(const struct wps_in_rule *a, const struct wps_in_rule *b)
{
	return a->family == b->family && a->proto == b->proto && a->dport == b->dport &&
	       a->dst_plen == b->dst_plen && a->src_plen == b->src_plen && !memcmp(a->dst, b->dst, 16) &&
	       !memcmp(a->src, b->src, 16);
}

static void fmt_prefix(const __u8 *a, __u8 plen, __u8 family, char *buf, size_t len)
{
	char s[INET6_ADDRSTRLEN];

	if (family == 4) {
		inet_ntop(AF_INET, a + 12, s, sizeof(s));
		snprintf(buf, len, "%s/%u", s, plen - 96);
	} else {
		inet_ntop(AF_INET6, a, s, sizeof(s));
		snprintf(buf, len, "%s/%u", s, plen);
	}
}

void wps_rule_format(const struct wps_in_rule *r, char *buf, size_t len)
{
	static const char *const sched[] = { "rr", "weighted", "least-loaded" };
	char dst[64], src[64], q[32], proto[16] = "any", dport[16] = "any";

	fmt_prefix(r->dst, r->dst_plen, r->family, dst, sizeof(dst));
	fmt_prefix(r->src, r->src_plen, r->family, src, sizeof(src));
	if (r->qkind == WPS_Q_BYTES)
		snprintf(q, sizeof(q), "%llub", (unsigned long long)r->quantum);
	else if (r->qkind == WPS_Q_TIME)
		snprintf(q, sizeof(q), "%lluus", (unsigned long long)(r->quantum / 1000));
	else
		snprintf(q, sizeof(q), "%llu", (unsigned long long)r->quantum);
	if (r->proto == 6)
		snprintf(proto, sizeof(proto), "tcp");
	else if (r->proto == 17)
		snprintf(proto, sizeof(proto), "udp");
	else if (r->proto)
		snprintf(proto, sizeof(proto), "%u", r->proto);
	if (r->dport)
		snprintf(dport, sizeof(dport), "%u", r->dport);
	snprintf(buf, len, "--dst %s --src %s --proto %s --dport %s --quantum %s --sched %s%s", dst, src, proto,
		 dport, q, r->sched < 3 ? sched[r->sched] : "?", r->reorder ? "" : " --no-reorder");
}

#define WPS_IN_CNT_NAME(id, name) [WPS_IN_CNT_##id] = name,
static const char *const in_names[WPS_IN_CNT__MAX] = { WPS_IN_COUNTERS(WPS_IN_CNT_NAME) };
#define WPS_BND_CNT_NAME(id, name) [WPS_BND_CNT_##id] = name,
static const char *const bnd_names[WPS_BND_CNT__MAX] = { WPS_BND_COUNTERS(WPS_BND_CNT_NAME) };

const char *wps_in_counter_name(unsigned id)
{
	return id < WPS_IN_CNT__MAX ? in_names[id] : "?";
}

int wps_in_counter_id(const char *name)
{
	for (int i = 0; i < WPS_IN_CNT__MAX; i++)
		if (!strcmp(in_names[i], name))
			return i;
	return -1;
}

const char *wps_bnd_counter_name(unsigned id)
{
	return id < WPS_BND_CNT__MAX ? bnd_names[id] : "?";
}

int wps_bnd_counter_id(const char *name)
{
	for (int i = 0; i < WPS_BND_CNT__MAX; i++)
		if (!strcmp(bnd_names[i], name))
			return i;
	return -1;
}
