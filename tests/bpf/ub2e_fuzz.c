// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzzer of the UB2E XDP programs: seeded random and mutated frames (bit
 * flips, truncations, random bytes in every header, lengths that lie) through
 * BPF_PROG_TEST_RUN in the switch namespace of tests/bpf/run, each checked by
 * a decoder that is not the code under test (ubref.c, from WIRE.md):
 *
 *  - every frame moves exactly one verdict counter, and the rx counter of its
 *    direction unless it is foreign (not UB): rx = tx + pass + drop;
 *  - the verdict agrees with that counter, and is one the frame allows: a
 *    frame that must be dropped is dropped, one that is not UB passes as is;
 *  - what is forwarded is a well-formed frame of the other domain (EtherType
 *    matches the IP version, lengths agree, IPv4 checksum and ICRC valid when
 *    they were, CCI in FECN mode, Partition ID not 0, the VLAN / NPI the
 *    configuration asks for), and from the UDP header on it is the input's bytes;
 *  - what is handed to the kernel is the input, or its IP packet behind the
 *    input's MAC addresses.
 *
 * Frame i of program P under seed S is a function of (S, P, i) alone, and so
 * is the configuration in force, so any failure replays on its own:
 *
 *   ub2e_testrun fuzz [--seed S] [--count N] [--prog to_uboe|to_ub|both]
 *                     [--replay I] [--receive-checks] [--egress-mtu] [--raw-maps] [--max-fail N]
 *                     [--fixtures FILE] [--topo FILE] [--ub-dev D] [--ip-dev D]
 *
 * --receive-checks expects the RFC 1812 receive checks of issue 7 §3 (bad
 * IPv4 checksum, martian source and VLAN 4095 dropped, frames for another MAC
 * passed untouched); without it those frames may go either way. --egress-mtu
 * expects §2: nothing is forwarded whose IP packet, with the LPH+NTH that
 * UBoE -> UB adds, exceeds the egress port's MTU. --raw-maps adds a configuration
 * whose tables were written as bpftool may (VLAN values above 12 bits, VLAN
 * 4095, Partition ID 0): VLANs are masked to 12 bits, 4095 and PID 0 dropped.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "ub2e.skel.h"
#include "ub2e_cfg.h"
#include "ub2e_harness.h"
#include "ub2e_maps.h"
#include "ub2e_stats.h"
#include "npimap.h"
#include "ubmutate.h"
#include "ubref.h"

#define FRAME_MAX	1600
#define BLOCK		256	/* frames per configuration */

enum dir { TO_UBOE, TO_UB };
static const char *const dir_name[] = { "to_uboe", "to_ub" };

/* Configurations the fuzzer cycles through, as ubctl options. */
static const char *const profiles[] = {
	"--map 4097=100 --map 7/0=70 --map 7/1=71",
	"--strict --map 4097=100 --map 5=5 --map 7/1=71 --map 9",
	"--untagged --no-ttl-dec --cci-policy drop --rt 1 --vl 9",
	"--default-pid 9 --default-perm 1 --light-ce ect1 --markable ect1 --ce-to light --ect1-to light --rt 3",
	"(tables written raw, as with bpftool)",	/* only with --raw-maps */
};
#define NPROFILES (sizeof(profiles) / sizeof(profiles[0]))
#define RAW_PROFILE (NPROFILES - 1)

/*
 * What bpftool may write into the tables that ubctl would refuse (README:
 * "bpftool map update pinned .../npi2vlan ..."): VLAN IDs with bits above the
 * 12 of a VID, VLAN 4095, Partition ID 0. Masked to 12 bits, the VLANs here are
 * never 0, so "0 = no entry" stays unambiguous.
 */
static const struct {
	uint32_t pid;
	struct ub2e_npi_vlans v;
} raw_npi[] = {
	{ 5, { .any = 0xa005 } },
	{ 7, { .perm = { 0x3046, 0xffff } } },
	{ 4097, { .any = 0x0fff } },
	{ 9, { .any = 0x5009, .perm = { 0, 0x8063 } } },
};
static const struct {
	uint32_t vid, val;
} raw_vlan[] = {
	{ 5, UB2E_VLAN_VALID | UB2E_VLAN_ANY_PERM | 5 },
	{ 70, UB2E_VLAN_VALID | 0x7c000000 | 7 },	/* bits no field uses */
	{ 71, UB2E_VLAN_VALID | 1u << UB2E_VLAN_PERM_SHIFT | 0x123456 },
	{ 100, UB2E_VLAN_VALID | UB2E_VLAN_ANY_PERM },	/* Partition ID 0 */
	{ 4095, UB2E_VLAN_VALID | UB2E_VLAN_ANY_PERM | 4095 },
};

/* ub2e_tables_clear() walks the tables as ubctl wrote them and stops at these. */
static void clear_raw_tables(void)
{
	__u32 zero = 0;

	for (size_t i = 0; i < sizeof(raw_npi) / sizeof(raw_npi[0]); i++)
		bpf_map_delete_elem(bpf_map__fd(skel->maps.ub2e_npi2vlan), &raw_npi[i].pid);
	for (size_t i = 0; i < sizeof(raw_vlan) / sizeof(raw_vlan[0]); i++)
		bpf_map_update_elem(bpf_map__fd(skel->maps.ub2e_vlan2npi), &raw_vlan[i].vid, &zero, BPF_ANY);
}

static int write_raw_tables(void)
{
	for (size_t i = 0; i < sizeof(raw_npi) / sizeof(raw_npi[0]); i++)
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.ub2e_npi2vlan), &raw_npi[i].pid, &raw_npi[i].v, BPF_ANY))
			return -1;
	for (size_t i = 0; i < sizeof(raw_vlan) / sizeof(raw_vlan[0]); i++)
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.ub2e_vlan2npi), &raw_vlan[i].vid, &raw_vlan[i].val, BPF_ANY))
			return -1;
	return 0;
}

/* The configuration as the checker sees it. */
struct model {
	struct ub2e_cfg cfg;
	struct npimap_entry map[16];
	size_t nmap;
	bool raw;		/* the tables hold raw_npi and raw_vlan instead */
};

/* Outcomes a frame may have. */
enum {
	O_FWD = 1,	/* converted and redirected */
	O_PUNT = 2,	/* received, handed to the kernel */
	O_DROP = 4,
	O_FOREIGN = 8,	/* not UB: to the kernel untouched, not received */
	O_ASIS = 16,	/* to the kernel untouched, received or not */
};

struct opts {
	uint64_t seed;
	long count, replay;
	int progs;		/* bit per enum dir */
	bool receive_checks;	/* issue 7 §3 */
	bool egress_mtu;	/* issue 7 §2 */
	bool raw_maps;		/* issue 7 §3, tables written with bpftool */
	int max_fail;
	const char *fixtures, *topo;
};

/* ---- topology and seeds --------------------------------------------------- */

struct addr {
	bool v6;
	uint8_t a[16];
};

static struct {
	uint8_t ub_port_mac[6], ip_port_mac[6], ubpu_mac[6], iphost_mac[6];
	unsigned ub_mtu, ip_mtu;
	struct addr src[2][2];			/* [dir][v6] */
	struct addr dst[2][16];			/* [dir][] */
	size_t ndst[2];
} topo;

static struct {
	uint8_t *buf;
	size_t len;
} *seeds;
static size_t nseeds;

static int topo_get(const char *path, const char *key, char *val, size_t len)
{
	char line[256];
	FILE *f = fopen(path, "r");
	size_t k = strlen(key);

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, k) && line[k] == '=') {
			line[strcspn(line, "\n")] = '\0';
			snprintf(val, len, "%s", line + k + 1);
			fclose(f);
			return 0;
		}
	}
	fclose(f);
	return -1;
}

static int topo_addr(const char *path, const char *key, struct addr *a)
{
	char v[64];

	if (topo_get(path, key, v, sizeof(v)))
		return -1;
	memset(a, 0, sizeof(*a));
	a->v6 = strchr(v, ':') != NULL;
	return inet_pton(a->v6 ? AF_INET6 : AF_INET, v, a->a) == 1 ? 0 : -1;
}

static int topo_mac(const char *path, const char *key, uint8_t *mac)
{
	char v[64];
	unsigned m[6];

	if (topo_get(path, key, v, sizeof(v)) ||
	    sscanf(v, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) != 6)
		return -1;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)m[i];
	return 0;
}

static int port_info(unsigned ifindex, uint8_t *mac, unsigned *mtu)
{
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM, 0), rc;

	if (fd < 0 || !if_indextoname(ifindex, ifr.ifr_name)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	rc = ioctl(fd, SIOCGIFHWADDR, &ifr);
	if (!rc)
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	if (!rc)
		rc = ioctl(fd, SIOCGIFMTU, &ifr);
	if (!rc)
		*mtu = (unsigned)ifr.ifr_mtu;
	close(fd);
	return rc;
}

static int load_topo(const char *path)
{
	/* Destinations the switch namespace's FIB answers differently for. */
	static const char *const dst_uboe[] = { "IPHOST_IP4", "IPHOST_IP6", "IPHOST_IP4", "IPHOST_IP6",
		"NO_NEIGH_IP4", "NO_NEIGH_IP6", "UNREACH_IP4", "UNREACH_IP6", "SMALL_MTU_IP4",
		"OTHER_PORT_IP4", "SW_IP_IP4", "SW_UB_IP6", "UBPU_IP4", NULL };
	static const char *const dst_ub[] = { "UBPU_IP4", "UBPU_IP6", "UBPU_IP4", "UBPU_IP6",
		"UB_NO_NEIGH_IP4", "UNREACH_IP4", "UNREACH_IP6", "OTHER_PORT_IP4", "SW_UB_IP4",
		"SW_IP_IP6", "IPHOST_IP4", NULL };
	const char *const *lists[2] = { dst_uboe, dst_ub };

	if (topo_addr(path, "UBPU_IP4", &topo.src[TO_UBOE][0]) ||
	    topo_addr(path, "UBPU_IP6", &topo.src[TO_UBOE][1]) ||
	    topo_addr(path, "IPHOST_IP4", &topo.src[TO_UB][0]) ||
	    topo_addr(path, "IPHOST_IP6", &topo.src[TO_UB][1]) ||
	    topo_mac(path, "UBPU_MAC", topo.ubpu_mac) || topo_mac(path, "IPHOST_MAC", topo.iphost_mac))
		return -1;
	for (int d = 0; d < 2; d++)
		for (const char *const *k = lists[d]; *k; k++)
			if (topo_addr(path, *k, &topo.dst[d][topo.ndst[d]++]))
				return -1;
	if (port_info(ub_if, topo.ub_port_mac, &topo.ub_mtu) || port_info(ip_if, topo.ip_port_mac, &topo.ip_mtu))
		return -1;
	return 0;
}

static int unhex(const char *s, uint8_t *buf, size_t cap, size_t *len)
{
	size_t n = strlen(s) / 2;

	if (n > cap)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		buf[i] = (uint8_t)v;
	}
	*len = n;
	return 0;
}

/* Every input and output frame of the scapy fixtures is a seed. */
static int load_seeds(const char *path)
{
	static char line[2 * 4096 + 64];
	uint8_t buf[4096];
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		size_t len;

		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "in ", 3) && strncmp(line, "out ", 4))
			continue;
		if (unhex(strchr(line, ' ') + 1, buf, sizeof(buf), &len) || len > FRAME_MAX)
			continue;
		seeds = realloc(seeds, (nseeds + 1) * sizeof(*seeds));
		seeds[nseeds].buf = malloc(len ? len : 1);
		memcpy(seeds[nseeds].buf, buf, len);
		seeds[nseeds++].len = len;
	}
	fclose(f);
	return nseeds ? 0 : -1;
}

/* ---- the configuration ---------------------------------------------------- */

static int model_from_opts(const char *opts, struct model *m, char *err, size_t errlen)
{
	char buf[512], *save, *tok;

	memset(m, 0, sizeof(*m));
	ub2e_cfg_defaults(&m->cfg);
	snprintf(buf, sizeof(buf), "%s", opts);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		const char *name = tok + 2;

		if (!strcmp(name, "map") || !strcmp(name, "partition")) {
			tok = strtok_r(NULL, " ", &save);
			if (!tok || m->nmap == 16 || npimap_parse(tok, &m->map[m->nmap++], err, errlen))
				return -1;
		} else if (!strcmp(name, "untagged") || !strcmp(name, "strict") || !strcmp(name, "no-ttl-dec")) {
			if (ub2e_cfg_set(&m->cfg, name, NULL, err, errlen))
				return -1;
		} else if (ub2e_cfg_set(&m->cfg, name, strtok_r(NULL, " ", &save), err, errlen)) {
			return -1;
		}
	}
	return 0;
}

/* draft-li-uboe-00 §5.3, UB -> UBoE: the VLAN for an NPI, 0 untagged, -1 drop. */
static int model_vlan(const struct model *m, uint32_t pid, unsigned perm, const char **why)
{
	int any = 0, own = 0;
	unsigned v;

	if (m->cfg.flags & UB2E_F_UNTAGGED)
		return 0;
	for (size_t i = 0; m->raw && i < sizeof(raw_npi) / sizeof(raw_npi[0]); i++) {
		const struct ub2e_npi_vlans *e = &raw_npi[i].v;

		if (raw_npi[i].pid != pid)
			continue;
		v = e->perm[perm & 1] ? e->perm[perm & 1] : e->any;
		if (!v)
			break;
		if ((v & 0xfff) == 0xfff) {
			*why = "the table maps the NPI to VLAN 4095 (raw, masked to 12 bits)";
			return -1;
		}
		return (int)(v & 0xfff);
	}
	for (size_t i = 0; i < m->nmap; i++) {
		if (m->map[i].pid != pid)
			continue;
		if (m->map[i].perm == NPIMAP_ANY_PERM)
			any = m->map[i].vlan;
		else if ((unsigned)m->map[i].perm == perm)
			own = m->map[i].vlan;
	}
	if (own || any)
		return own ? own : any;
	if (m->cfg.flags & UB2E_F_STRICT_VLAN) {
		*why = "NPI not in the table under --strict";
		return -1;
	}
	v = pid & 0xfff;
	if (v == 0 || v == 0xfff) {
		*why = "lower 12 bits of the Partition ID are a reserved VLAN";
		return -1;
	}
	return (int)v;
}

/* UBoE -> UB: the NPI for a VLAN ID (0 untagged). Returns 0, or -1 to drop. */
static int model_npi(const struct model *m, unsigned vid, uint32_t *pid, unsigned *perm, const char **why)
{
	*pid = m->cfg.default_pid;
	*perm = m->cfg.default_perm;
	if (!vid)
		return 0;
	for (size_t i = 0; m->raw && i < sizeof(raw_vlan) / sizeof(raw_vlan[0]); i++) {
		uint32_t val = raw_vlan[i].val;

		if (raw_vlan[i].vid != vid)
			continue;
		*pid = val & 0xffffff;
		if (!(val & UB2E_VLAN_ANY_PERM))
			*perm = val >> UB2E_VLAN_PERM_SHIFT & 1;
		if (!*pid) {
			*why = "the table maps the VLAN to Partition ID 0 (raw)";
			return -1;
		}
		return 0;
	}
	for (size_t i = 0; i < m->nmap; i++) {
		if (m->map[i].vlan != vid)
			continue;
		*pid = m->map[i].pid;
		if (m->map[i].perm != NPIMAP_ANY_PERM)
			*perm = (unsigned)m->map[i].perm;
		return 0;
	}
	if (m->cfg.flags & UB2E_F_STRICT_VLAN) {
		*why = "VLAN not in the table under --strict";
		return -1;
	}
	*pid = vid;
	*perm = 0;
	return 0;
}

/* ---- frames --------------------------------------------------------------- */

static const uint8_t *peer_mac(enum dir d)
{
	return d == TO_UBOE ? topo.ubpu_mac : topo.iphost_mac;
}

/* A valid UB (to_uboe) or UBoE (to_ub) frame, built from WIRE.md by hand. */
static size_t build_valid(struct fz_rng *g, enum dir d, const struct model *m, uint8_t *f)
{
	static const uint32_t pids[] = { 1, 5, 7, 9, 4097, 0x123456, 100, 0xfff, 4096, 70 };
	static const unsigned vids[] = { 0, 5, 9, 70, 71, 100, 4095, 1234 };
	static const unsigned ttls[] = { 64, 64, 64, 255, 2, 1, 0 };
	static const unsigned ops[] = { 0, 1, 1, 1, 2, 3, 5, 6, 8 };
	const struct addr *dst = &topo.dst[d][fz_rnd(g, (uint32_t)topo.ndst[d])];
	bool v6 = dst->v6;
	const struct addr *src = &topo.src[d][v6];
	size_t hl = v6 ? 40 : 20, off, ip_len, payload = fz_rnd(g, 200);

	unsigned ecn = fz_rnd(g, 4), dscp = fz_rnd(g, 64), ttl = ttls[fz_rnd(g, 7)];
	uint8_t *ip, *u;

	/* Sizes: mostly small, some up to and around the MTU with and without the 10 bytes of LPH+NTH. */
	if (fz_chance(g, 10))
		payload = 400 + fz_rnd(g, 1100);
	else if (fz_chance(g, 6))
		payload = 1500 - hl - 28 - fz_rnd(g, 16);

	if (fz_chance(g, 90))
		memcpy(f, d == TO_UBOE ? topo.ub_port_mac : topo.ip_port_mac, 6);
	else
		memcpy(f, (const uint8_t *[]){ (const uint8_t *)"\xff\xff\xff\xff\xff\xff",
			(const uint8_t *)"\x01\x00\x5e\x00\x00\x01", (const uint8_t *)"\x33\x33\x00\x00\x00\x01",
			(const uint8_t *)"\x02\x00\x00\x00\x09\x09" }[fz_rnd(g, 4)], 6);
	memcpy(f + 6, peer_mac(d), 6);
	if (d == TO_UBOE) {
		uint32_t pid = pids[fz_rnd(g, 10)];
		unsigned cci = fz_chance(g, 80) ? 0x4000 | fz_rnd(g, 4) | (fz_rnd(g, 2) << 11) : fz_rnd(g, 0x10000);

		ref_put16(f + 12, m->cfg.ub_ethertype);
		f[14] = (uint8_t)fz_rnd(g, 2);
		f[15] = (uint8_t)(fz_rnd(g, 8) << 5 | (v6 ? 4 : 3));
		f[16] = (uint8_t)(fz_rnd(g, 4) << 6);
		f[17] = 0;
		ref_put16(f + 18, cci);
		f[20] = (uint8_t)fz_rnd(g, 2);
		f[21] = (uint8_t)(pid >> 16);
		f[22] = (uint8_t)(pid >> 8);
		f[23] = (uint8_t)pid;
		off = 24;
	} else if (fz_chance(g, 50)) {
		ref_put16(f + 12, 0x8100);
		ref_put16(f + 14, fz_rnd(g, 8) << 13 | vids[fz_rnd(g, 8)]);
		ref_put16(f + 16, v6 ? 0x86dd : 0x0800);
		off = 18;
	} else {
		ref_put16(f + 12, v6 ? 0x86dd : 0x0800);
		off = 14;
	}

	ip = f + off;
	ip_len = hl + 8 + 16 + payload + 4;
	if (!v6) {
		ip[0] = 0x45;
		ip[1] = (uint8_t)(dscp << 2 | ecn);
		ref_put16(ip + 2, (unsigned)ip_len);
		ref_put16(ip + 4, fz_rnd(g, 0x10000));
		ref_put16(ip + 6, 0x4000);	/* DF */
		ip[8] = (uint8_t)ttl;
		ip[9] = 17;
		memcpy(ip + 12, src->a, 4);
		memcpy(ip + 16, dst->a, 4);
		if (fz_chance(g, 3))
			memcpy(ip + 12, (const uint8_t *[]){ (const uint8_t *)"\xe0\0\0\1", (const uint8_t *)"\xff\xff\xff\xff",
				(const uint8_t *)"\x7f\0\0\1", (const uint8_t *)"\0\0\0\0" }[fz_rnd(g, 4)], 4);
		ref_ipv4_csum_fix(ip, 20);
	} else {
		unsigned tc = dscp << 2 | ecn;
		uint32_t fl = fz_rnd(g, 1u << 20);

		ip[0] = (uint8_t)(0x60 | tc >> 4);
		ip[1] = (uint8_t)((tc & 15) << 4 | fl >> 16);
		ip[2] = (uint8_t)(fl >> 8);
		ip[3] = (uint8_t)fl;
		ref_put16(ip + 4, (unsigned)(ip_len - 40));
		ip[6] = 17;
		ip[7] = (uint8_t)ttl;
		memcpy(ip + 8, src->a, 16);
		memcpy(ip + 24, dst->a, 16);
		if (fz_chance(g, 3))
			memcpy(ip + 8, (const uint8_t *[]){ (const uint8_t *)"\xff\x02\0\0\0\0\0\0\0\0\0\0\0\0\0\1",
				(const uint8_t *)"\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\1",
				(const uint8_t *)"\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0" }[fz_rnd(g, 3)], 16);
	}
	u = ip + hl;
	ref_put16(u, 0xc000 | fz_rnd(g, 0x4000));
	ref_put16(u + 2, 4792);
	ref_put16(u + 4, (unsigned)(ip_len - hl));
	ref_put16(u + 6, fz_chance(g, 90) ? 0 : fz_rnd(g, 0x10000));
	fz_bytes(g, u + 8, 16 + payload);
	u[8] = (uint8_t)(fz_rnd(g, 2) << 7 | ops[fz_rnd(g, 9)]);
	ref_icrc_fix(ip, ip_len);
	return off + ip_len;
}

static size_t make_frame(struct fz_rng *g, enum dir d, const struct model *m, uint8_t *f)
{
	unsigned kind = fz_rnd(g, 100);
	size_t len;

	if (kind < 8) {		/* random bytes behind a plausible EtherType */
		len = fz_rnd(g, 160);
		fz_bytes(g, f, len);
		if (len >= 14 && fz_chance(g, 70))
			ref_put16(f + 12, (unsigned[]){ 0x88b5, 0x0800, 0x86dd, 0x8100 }[fz_rnd(g, 4)]);
	} else if (kind < 40) {
		size_t i = fz_rnd(g, (uint32_t)nseeds);

		len = seeds[i].len;
		memcpy(f, seeds[i].buf, len);
	} else {
		len = build_valid(g, d, m, f);
	}
	if (kind >= 8 && fz_chance(g, 75))
		len = fz_mutate(g, f, len, FRAME_MAX, d == TO_UBOE);
	/* BPF_PROG_TEST_RUN refuses XDP frames shorter than an Ethernet header. */
	return len < 14 ? 14 : len;
}

/* ---- the check ------------------------------------------------------------ */

struct result {
	__u32 verdict;
	uint8_t out[FRAME_MAX + 64];
	size_t out_len;
	__u64 delta[UB2E_CNT__MAX];
};

struct verdict_ctx {
	char msg[512];
	size_t n;
};

#define FAIL(c, ...) do {								\
	if ((c)->n < sizeof((c)->msg))							\
		(c)->n += (size_t)snprintf((c)->msg + (c)->n, sizeof((c)->msg) - (c)->n, __VA_ARGS__); \
	if ((c)->n < sizeof((c)->msg))							\
		(c)->n += (size_t)snprintf((c)->msg + (c)->n, sizeof((c)->msg) - (c)->n, "; "); \
} while (0)

static const char *outcome_name(unsigned o)
{
	switch (o) {
	case O_FWD: return "forwarded";
	case O_PUNT: return "handed to the kernel";
	case O_DROP: return "dropped";
	case O_FOREIGN: return "passed as not UB";
	case O_ASIS: return "passed untouched";
	default: return "?";
	}
}

static bool mac_eq(const uint8_t *a, const uint8_t *b)
{
	return !memcmp(a, b, 6);
}

/* Which outcomes the reference decoder and the configuration allow. */
static unsigned allowed(enum dir d, const uint8_t *in, const struct ref_frame *r, const struct model *m,
			bool rc, bool mtu, int *vid, uint32_t *pid, unsigned *perm, const char **why)
{
	const uint8_t *port = d == TO_UBOE ? topo.ub_port_mac : topo.ip_port_mac;
	bool drop = false, other_mac = !mac_eq(in, port);
	unsigned ok;

	if (r->kind == REF_FOREIGN) {
		*why = r->why;
		return O_FOREIGN;
	}
	*why = r->why;
	if (r->kind == REF_DROP) {
		drop = true;
	} else if (d == TO_UBOE) {
		*vid = model_vlan(m, r->pid, r->perm, why);
		drop = *vid < 0;
		if ((r->cci >> 12 & 7) != 4 && m->cfg.cci_policy == UB2E_CCI_DROP) {
			drop = true;
			*why = "CCI not in FECN mode under --cci-policy drop";
		}
	} else {
		drop = model_npi(m, r->tagged ? r->tci & 0xfff : 0, pid, perm, why) < 0;
	}
	if (rc && !drop && r->kind == REF_VALID) {
		if (!r->csum_ok)
			drop = true, *why = "IPv4 header checksum bad (receive checks)";
		else if (r->martian_src)
			drop = true, *why = "martian source address (receive checks)";
		else if (d == TO_UB && r->tagged && (r->tci & 0xfff) == 0xfff)
			drop = true, *why = "VLAN 4095 reserved (receive checks)";
	}
	if (drop)
		ok = O_DROP;
	else if (rc && r->martian_maybe)
		ok = O_DROP | O_FWD | O_PUNT, *why = "0/8 or 240/4 source: may be dropped (receive checks)";
	else if (!(m->cfg.flags & UB2E_F_NO_TTL_DEC) && r->ttl <= 1)
		ok = O_PUNT, *why = "TTL expires here";
	else if (mtu && (d == TO_UB ? 10 + r->ip_len > topo.ub_mtu : r->ip_len > topo.ip_mtu))
		ok = O_PUNT, *why = "too big for the egress MTU with LPH+NTH (egress MTU check)";
	else
		ok = O_FWD | O_PUNT;
	if (rc && other_mac) {	/* not routed: to the kernel untouched, or dropped as it would be */
		ok = O_ASIS | (ok & O_DROP);
		if (!(ok & O_DROP))
			*why = "destination MAC is not the port's (receive checks)";
	}
	return ok;
}

/* What left: the IP packet and all that follows must be the input's, but for TTL, ECN and checksum. */
static void check_ip_bytes(struct verdict_ctx *c, const uint8_t *in, size_t in_len, const uint8_t *out,
			   size_t out_len, const struct ref_frame *r, unsigned want_ecn, bool no_ttl_dec)
{
	size_t n = in_len - r->l2_len;
	const uint8_t *a = in + r->l2_len, *b;

	if (out_len < n) {
		FAIL(c, "output too short for the IP packet");
		return;
	}
	b = out + (out_len - n);
	for (size_t i = 0; i < n; i++) {
		bool mutable_byte = r->v6 ? (i <= 1 || i == 7) : (i == 1 || i == 8 || i == 10 || i == 11);

		if (!mutable_byte && a[i] != b[i]) {
			FAIL(c, "byte %zu of the IP packet changed (%02x -> %02x)%s", i, a[i], b[i],
			     i >= (r->v6 ? 40u : 20u) ? " in UDP/TPH/payload/ICRC" : "");
			return;
		}
	}
	if (!r->v6) {
		if (b[1] >> 2 != a[1] >> 2)
			FAIL(c, "DSCP changed");
		if ((b[1] & 3) != want_ecn)
			FAIL(c, "ECN %u, want %u", b[1] & 3, want_ecn);
		if (b[8] != a[8] - (no_ttl_dec ? 0 : 1))
			FAIL(c, "TTL %u from %u", b[8], a[8]);
		if (r->csum_ok && !ref_ipv4_csum_ok(b, 20))
			FAIL(c, "IPv4 header checksum wrong after forwarding");
	} else {
		unsigned tca = (a[0] & 15u) << 4 | a[1] >> 4, tcb = (b[0] & 15u) << 4 | b[1] >> 4;

		if (b[0] >> 4 != 6 || (a[1] & 15) != (b[1] & 15))
			FAIL(c, "IPv6 version or flow label changed");
		if (tcb >> 2 != tca >> 2)
			FAIL(c, "DSCP changed");
		if ((tcb & 3) != want_ecn)
			FAIL(c, "ECN %u, want %u", tcb & 3, want_ecn);
		if (b[7] != a[7] - (no_ttl_dec ? 0 : 1))
			FAIL(c, "hop limit %u from %u", b[7], a[7]);
	}
}

static void check_fwd_to_uboe(struct verdict_ctx *c, const uint8_t *in, size_t in_len, const struct result *res,
			      const struct ref_frame *r, const struct model *m, int vid, bool rc)
{
	const uint8_t *o = res->out;
	size_t want_len = in_len - 10 + (vid ? 4 : 0);
	unsigned ip_type = r->v6 ? 0x86dd : 0x0800, want_ecn = r->ecn;
	struct ref_frame q;

	if (res->out_len != want_len) {
		FAIL(c, "forwarded %zu bytes, want %zu", res->out_len, want_len);
		return;
	}
	/* The only neighbour the IP side has in the FIB is the IP host. */
	if (!mac_eq(o + 6, topo.ip_port_mac) || !mac_eq(o, topo.iphost_mac))
		FAIL(c, "MAC addresses are not the IP-side port's and the IP host's");
	if (vid && m->raw && ref_get16(o + 14) >> 12)
		FAIL(c, "TCI %04x: bits of the table value above the VID reached PCP/DEI", ref_get16(o + 14));
	if (vid) {
		if (ref_get16(o + 12) != 0x8100 || (ref_get16(o + 14) & 0xfff) != (unsigned)vid ||
		    ref_get16(o + 16) != ip_type)
			FAIL(c, "want 802.1Q VLAN %d and EtherType %04x, got %04x tci %04x type %04x", vid, ip_type,
			     ref_get16(o + 12), ref_get16(o + 14), ref_get16(o + 16));
	} else if (ref_get16(o + 12) != ip_type) {
		FAIL(c, "EtherType %04x for IPv%d, want untagged %04x", ref_get16(o + 12), r->v6 ? 6 : 4, ip_type);
	}
	if ((r->cci >> 12 & 7) == 4)
		want_ecn = m->cfg.fecn_to_ecn[r->cci & 3] & 3;
	check_ip_bytes(c, in, in_len, o, res->out_len, r, want_ecn, m->cfg.flags & UB2E_F_NO_TTL_DEC);
	ref_decode_uboe(o, res->out_len, &q);
	if (q.kind != REF_VALID)
		FAIL(c, "forwarded frame is not valid UBoE: %s", q.why);
	else if ((q.tagged && ((q.tci & 0xfff) == 0 || (q.tci & 0xfff) == 0xfff)) ||
		 (r->icrc_ok && !q.icrc_ok) || (rc && !q.csum_ok))
		FAIL(c, "forwarded UBoE has a reserved VLAN, a broken ICRC or a bad IPv4 checksum");
}

static void check_fwd_to_ub(struct verdict_ctx *c, const uint8_t *in, size_t in_len, const struct result *res,
			    const struct ref_frame *r, const struct model *m, uint32_t pid, unsigned perm, bool rc)
{
	const uint8_t *o = res->out;
	size_t want_len = in_len + 10 - (r->tagged ? 4 : 0);
	unsigned cfgv = r->v6 ? 4 : 3, cci, vl = m->cfg.vl, rt = m->cfg.rt;
	struct ref_frame q;

	if (res->out_len != want_len) {
		FAIL(c, "forwarded %zu bytes, want %zu", res->out_len, want_len);
		return;
	}
	if (!mac_eq(o + 6, topo.ub_port_mac) || !mac_eq(o, topo.ubpu_mac))
		FAIL(c, "MAC addresses are not the UB-side port's and the UBPU's");
	if (ref_get16(o + 12) != m->cfg.ub_ethertype)
		FAIL(c, "EtherType %04x, want native UB %04x", ref_get16(o + 12), m->cfg.ub_ethertype);
	/* LPH: only VL, Config and RT set; link length fields 0 (WIRE.md §5). */
	if (o[14] != (vl >> 3 & 1) || o[15] != ((vl & 7) << 5 | cfgv) ||
	    o[16] != ((rt & 1) << 7 | (rt >> 1 & 1) << 6) || o[17])
		FAIL(c, "LPH %02x%02x%02x%02x, want VL %u Config %u RT %u", o[14], o[15], o[16], o[17], vl, cfgv, rt);
	cci = ref_get16(o + 18);
	if (cci >> 12 != 4 || (cci & 0x0ffc))
		FAIL(c, "CCI %04x is not FECN mode with LoC 0", cci);
	if ((cci & 3) != (m->cfg.ecn_to_fecn[r->ecn] & 3u))
		FAIL(c, "FECN %u for ECN %u, want %u", cci & 3, r->ecn, m->cfg.ecn_to_fecn[r->ecn] & 3u);
	if (o[20] != perm || (((uint32_t)o[21] << 16 | (uint32_t)o[22] << 8 | o[23]) != pid) || !pid)
		FAIL(c, "NTH Permission/Partition %u/%u, want %u/%u", o[20],
		     (uint32_t)o[21] << 16 | (uint32_t)o[22] << 8 | o[23], perm, pid);
	check_ip_bytes(c, in, in_len, o, res->out_len, r, r->ecn, m->cfg.flags & UB2E_F_NO_TTL_DEC);
	ref_decode_native(o, res->out_len, m->cfg.ub_ethertype, &q);
	if (q.kind != REF_VALID)
		FAIL(c, "forwarded frame is not valid native UB: %s", q.why);
	else if ((r->icrc_ok && !q.icrc_ok) || (rc && !q.csum_ok))
		FAIL(c, "forwarded UB frame has a broken ICRC or a bad IPv4 checksum");
}

/*
 * To the kernel: the input as it is, or its IP packet behind the same MACs,
 * where UB -> UBoE may already carry the ECN the CCI asks for (and the IPv4
 * checksum that goes with it).
 */
static bool punt_shape_ok(enum dir d, const uint8_t *in, size_t in_len, const struct result *res,
			  const struct ref_frame *r, const struct model *m)
{
	const uint8_t *o = res->out, *a = in + r->l2_len, *b = o + 14;
	size_t n = in_len - r->l2_len;
	unsigned ecn_b;

	if (res->out_len == in_len && !memcmp(o, in, in_len))
		return true;
	if (r->kind == REF_FOREIGN || (d == TO_UB && !r->tagged))
		return false;
	if (res->out_len != 14 + n || memcmp(o, in, 12) || ref_get16(o + 12) != (r->v6 ? 0x86dd : 0x0800))
		return false;
	for (size_t i = 0; i < n; i++) {
		bool ecn_byte = r->v6 ? i == 1 : (i == 1 || i == 10 || i == 11);

		if (a[i] != b[i] && !(d == TO_UBOE && ecn_byte))
			return false;
	}
	if (d == TO_UB || !memcmp(a, b, n))
		return true;
	/* Only the ECN may differ, only to what the CCI says, and the checksum must follow. */
	ecn_b = r->v6 ? (b[1] >> 4) & 3 : b[1] & 3;
	if ((r->cci >> 12 & 7) != 4 || ecn_b != (m->cfg.fecn_to_ecn[r->cci & 3] & 3u))
		return false;
	if ((r->v6 ? (a[1] ^ b[1]) & 0xcf : (a[1] ^ b[1]) & 0xfc) != 0)
		return false;
	return r->v6 || ref_ipv4_csum_ok(b, 20) == r->csum_ok;
}

static void check(struct verdict_ctx *c, enum dir d, const uint8_t *in, size_t in_len, const struct result *res,
		  const struct model *m, bool rc, const struct ref_frame *r, unsigned ok, int vid, uint32_t pid,
		  unsigned perm, unsigned *outcome)
{
	int nverdict = 0, nrx = 0, cls = -1;
	const char *rx_name = d == TO_UBOE ? "rx_ub" : "rx_uboe", *tx_name = d == TO_UBOE ? "tx_uboe" : "tx_ub";
	bool info = false;

	for (unsigned i = 0; i < UB2E_CNT__MAX; i++) {
		enum ub2e_counter_class k = ub2e_counter_class(i);

		if (!res->delta[i])
			continue;
		if (res->delta[i] > 1)
			FAIL(c, "counter %s moved by %llu", ub2e_counter_name(i), (unsigned long long)res->delta[i]);
		if (k == UB2E_CLASS_RX) {
			nrx++;
			if (strcmp(ub2e_counter_name(i), rx_name))
				FAIL(c, "%s moved on %s", ub2e_counter_name(i), dir_name[d]);
		} else if (k == UB2E_CLASS_INFO) {
			info = true;
		} else {
			nverdict++;
			cls = (int)k;
			if (k == UB2E_CLASS_TX && strcmp(ub2e_counter_name(i), tx_name))
				FAIL(c, "%s moved on %s", ub2e_counter_name(i), dir_name[d]);
		}
	}
	if (nverdict != 1) {
		FAIL(c, "%d verdict counters moved, want exactly 1", nverdict);
		return;
	}
	if (nrx != (cls == UB2E_CLASS_FOREIGN ? 0 : 1))
		FAIL(c, "%d rx counters moved with a %s counter", nrx, ub2e_class_name((enum ub2e_counter_class)cls));

	switch (res->verdict) {
	case XDP_REDIRECT:
	case XDP_TX:
		*outcome = O_FWD;
		if (cls != UB2E_CLASS_TX)
			FAIL(c, "forwarded, but a %s counter moved", ub2e_class_name((enum ub2e_counter_class)cls));
		break;
	case XDP_DROP:
		*outcome = O_DROP;
		if (cls != UB2E_CLASS_DROP)
			FAIL(c, "dropped, but a %s counter moved", ub2e_class_name((enum ub2e_counter_class)cls));
		break;
	case XDP_PASS: {
		bool same = res->out_len == in_len && !memcmp(res->out, in, in_len);

		if (cls == UB2E_CLASS_FOREIGN)
			*outcome = same ? O_FOREIGN : O_PUNT;
		else if (cls == UB2E_CLASS_PASS)
			*outcome = same && (ok & O_ASIS) ? O_ASIS : O_PUNT;
		else
			FAIL(c, "passed, but a %s counter moved", ub2e_class_name((enum ub2e_counter_class)cls));
		if (cls == UB2E_CLASS_FOREIGN && !same)
			FAIL(c, "not UB, but changed on the way to the kernel");
		break;
	}
	default:
		FAIL(c, "verdict %u", res->verdict);
		return;
	}
	if (*outcome == O_FOREIGN && !(ok & O_FOREIGN) && (ok & O_ASIS))
		*outcome = O_ASIS;
	if (!(ok & *outcome)) {
		char want[96] = "";

		for (unsigned b = 1; b <= O_ASIS; b <<= 1)
			if (ok & b)
				snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%s", want[0] ? " or " : "",
					 outcome_name(b));
		FAIL(c, "%s, but the reference allows only: %s (%s)", outcome_name(*outcome), want, r->why ? r->why : "?");
		return;
	}
	if (info && !(d == TO_UBOE && r->kind == REF_VALID && (r->cci >> 12 & 7) != 4))
		FAIL(c, "cci_not_fecn_forwarded moved for a packet whose CCI is FECN (or not UB)");
	if (*outcome == O_FWD && d == TO_UBOE && (r->cci >> 12 & 7) != 4 && !info)
		FAIL(c, "non-FECN CCI forwarded without cci_not_fecn_forwarded");
	if (*outcome == O_PUNT && !punt_shape_ok(d, in, in_len, res, r, m))
		FAIL(c, "handed to the kernel as neither the input nor its IP packet");
	if (*outcome == O_FWD) {
		if (d == TO_UBOE)
			check_fwd_to_uboe(c, in, in_len, res, r, m, vid, rc);
		else
			check_fwd_to_ub(c, in, in_len, res, r, m, pid, perm, rc);
	}
}

/* ---- driver ----------------------------------------------------------------- */

static int current_profile = -1;
static struct model models[NPROFILES];
static size_t nprofiles = NPROFILES - 1;	/* RAW_PROFILE with --raw-maps */

static int run_one(enum dir d, const uint8_t *in, size_t len, struct result *res, __u64 *ctr)
{
	struct bpf_program *prog = d == TO_UBOE ? skel->progs.ub2e_to_uboe : skel->progs.ub2e_to_ub;
	struct xdp_md ctx = { .data_end = (__u32)len, .ingress_ifindex = d == TO_UBOE ? ub_if : ip_if };
	__u64 after[UB2E_CNT__MAX];
	uint8_t buf[FRAME_MAX];

	memcpy(buf, in, len);
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = buf, .data_size_in = (__u32)len, .data_out = res->out,
		    .data_size_out = sizeof(res->out), .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .repeat = 1);
	if (bpf_prog_test_run_opts(bpf_program__fd(prog), &o))
		return -errno;
	if (ub2e_counters_read(bpf_map__fd(skel->maps.ub2e_stats), after))
		return -EIO;
	for (int i = 0; i < UB2E_CNT__MAX; i++) {
		res->delta[i] = after[i] - ctr[i];
		ctr[i] = after[i];
	}
	res->verdict = o.retval;
	res->out_len = o.data_size_out;
	return 0;
}

static void print_hex(const char *tag, const uint8_t *p, size_t n)
{
	printf("#   %s ", tag);
	for (size_t i = 0; i < n; i++)
		printf("%02x", p[i]);
	printf("\n");
}

struct tally {
	unsigned long frames, failed, outcome[17];
};

/* Frame i of direction d under seed s: generate, run, check. Returns false on failure. */
static bool fuzz_one(const struct opts *op, enum dir d, long i, __u64 *ctr, struct tally *t, bool verbose)
{
	static uint8_t in[FRAME_MAX];
	static struct result res;
	int p = (int)((i / BLOCK) % (long)nprofiles);
	struct fz_rng g = { op->seed ^ (0x5851f42d4c957f2dull * (uint64_t)(i + 1)) ^ ((uint64_t)d << 62) };
	struct verdict_ctx c = { .n = 0 };
	struct ref_frame r;
	const struct model *m = &models[p];
	unsigned ok, outcome = 0, perm = 0;
	uint32_t pid = 0;
	int vid = 0, rc;
	const char *why = "";
	size_t len;
	char err[256];

	fz_splitmix(&g.s);
	if (p != current_profile) {
		if (current_profile == (int)RAW_PROFILE)
			clear_raw_tables();
		if (configure(p == RAW_PROFILE ? "" : profiles[p], err, sizeof(err)) ||
		    (p == RAW_PROFILE && write_raw_tables() && snprintf(err, sizeof(err), "%s", strerror(errno)))) {
			printf("#   configure '%s': %s\n", profiles[p], err);
			return false;
		}
		current_profile = p;
	}
	len = make_frame(&g, d, m, in);
	if (d == TO_UBOE)
		ref_decode_native(in, len, m->cfg.ub_ethertype, &r);
	else
		ref_decode_uboe(in, len, &r);
	ok = allowed(d, in, &r, m, op->receive_checks, op->egress_mtu, &vid, &pid, &perm, &why);
	if (!r.why || (r.kind == REF_VALID && why))
		r.why = why;
	rc = run_one(d, in, len, &res, ctr);
	t->frames++;
	if (rc) {
		FAIL(&c, "BPF_PROG_TEST_RUN: %s", strerror(-rc));
	} else {
		check(&c, d, in, len, &res, m, op->receive_checks, &r, ok, vid, pid, perm, &outcome);
		t->outcome[outcome]++;
	}
	if (c.n || verbose) {
		if (c.n) {
			t->failed++;
			if (t->failed > (unsigned long)op->max_fail)
				return false;
		}
		printf("# %s %s frame %ld (seed %llu, profile '%s'): %s\n", c.n ? "FAIL" : "ok", dir_name[d], i,
		       (unsigned long long)op->seed, profiles[p], c.n ? c.msg : "all invariants hold");
		printf("#   reference: %s; verdict %u, output %zu bytes\n", r.why ? r.why : "?", res.verdict, res.out_len);
		print_hex("in ", in, len);
		print_hex("out", res.out, res.out_len);
		if (c.n)
			printf("#   replay: UB2E_FUZZ_SEED=%llu UB2E_FUZZ_ARGS='--prog %s --replay %ld%s%s%s' tests/bpf/run\n",
			       (unsigned long long)op->seed, dir_name[d], i, op->receive_checks ? " --receive-checks" : "",
			       op->egress_mtu ? " --egress-mtu" : "", op->raw_maps ? " --raw-maps" : "");
	}
	return !c.n;
}

static int setup(const char *ub_dev, const char *ip_dev, const struct opts *op)
{
	char err[256];

	ub_if = if_nametoindex(ub_dev);
	ip_if = if_nametoindex(ip_dev);
	if (!ub_if || !ip_if) {
		fprintf(stderr, "ub2e_testrun fuzz: need devices %s and %s in this namespace\n", ub_dev, ip_dev);
		return -1;
	}
	if (load_topo(op->topo)) {
		fprintf(stderr, "ub2e_testrun fuzz: cannot read the topology from %s or the port MACs\n", op->topo);
		return -1;
	}
	if (load_seeds(op->fixtures)) {
		fprintf(stderr, "ub2e_testrun fuzz: no seed frames in %s\n", op->fixtures);
		return -1;
	}
	for (size_t p = 0; p < NPROFILES; p++)
		if (model_from_opts(p == RAW_PROFILE ? "" : profiles[p], &models[p], err, sizeof(err))) {
			fprintf(stderr, "ub2e_testrun fuzz: profile '%s': %s\n", profiles[p], err);
			return -1;
		}
	models[RAW_PROFILE].raw = true;
	if (op->raw_maps)
		nprofiles = NPROFILES;
	skel = ub2e__open_and_load();
	if (!skel) {
		fprintf(stderr, "ub2e_testrun fuzz: loading the programs: %s\n", strerror(errno));
		return -1;
	}
	bpf_map_update_elem(bpf_map__fd(skel->maps.ub2e_tx_ip), &ip_if, &ip_if, BPF_ANY);
	bpf_map_update_elem(bpf_map__fd(skel->maps.ub2e_tx_ub), &ub_if, &ub_if, BPF_ANY);
	return 0;
}

static int parse_num(const char *s, unsigned long long *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || !*s || *end || *s == '-' ? -1 : 0;
}

int ub2e_fuzz_main(int argc, char **argv)
{
	struct opts op = { .seed = 1, .count = 20000, .replay = -1, .progs = 3, .max_fail = 5,
			   .fixtures = "tests/bpf/fixtures/ub2e.txt", .topo = "tests/lib/topo.env" };
	const char *ub_dev = "sw-ub", *ip_dev = "sw-ip";
	__u64 ctr[UB2E_CNT__MAX];
	int tap = 0, failed = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		unsigned long long n = 0;
		bool takes = strcmp(a, "--receive-checks") && strcmp(a, "--egress-mtu") && strcmp(a, "--raw-maps");

		if (takes && !v) {
			fprintf(stderr, "ub2e_testrun fuzz: %s needs a value\n", a);
			return 2;
		}
		if (!strcmp(a, "--receive-checks")) {
			op.receive_checks = true;
		} else if (!strcmp(a, "--egress-mtu")) {
			op.egress_mtu = true;
		} else if (!strcmp(a, "--raw-maps")) {
			op.raw_maps = true;
		} else if (!strcmp(a, "--seed") && !parse_num(v, &n)) {
			op.seed = n;
		} else if (!strcmp(a, "--count") && !parse_num(v, &n) && n <= 1000000000ull) {
			op.count = (long)n;
		} else if (!strcmp(a, "--replay") && !parse_num(v, &n) && n <= 1000000000ull) {
			op.replay = (long)n;
		} else if (!strcmp(a, "--max-fail") && !parse_num(v, &n) && n <= 1000000) {
			op.max_fail = (int)n;
		} else if (!strcmp(a, "--prog") && (!strcmp(v, "to_uboe") || !strcmp(v, "to_ub") || !strcmp(v, "both"))) {
			op.progs = !strcmp(v, "both") ? 3 : !strcmp(v, "to_uboe") ? 1 : 2;
		} else if (!strcmp(a, "--fixtures")) {
			op.fixtures = v;
		} else if (!strcmp(a, "--topo")) {
			op.topo = v;
		} else if (!strcmp(a, "--ub-dev")) {
			ub_dev = v;
		} else if (!strcmp(a, "--ip-dev")) {
			ip_dev = v;
		} else {
			fprintf(stderr, "ub2e_testrun fuzz: bad option '%s%s%s'\n", a, takes ? " " : "", takes ? v : "");
			return 2;
		}
		i += takes;
	}
	if (setup(ub_dev, ip_dev, &op))
		return 2;
	if (ub2e_counters_read(bpf_map__fd(skel->maps.ub2e_stats), ctr)) {
		fprintf(stderr, "ub2e_testrun fuzz: reading counters: %s\n", strerror(errno));
		return 2;
	}

	for (int d = TO_UBOE; d <= TO_UB; d++) {
		struct tally t = {};
		__u64 start[UB2E_CNT__MAX], sum[6] = {};
		bool cover = true;

		if (!(op.progs & (1 << d)))
			continue;
		if (op.replay >= 0) {
			bool ok = fuzz_one(&op, (enum dir)d, op.replay, ctr, &t, true);

			printf("%sok %d - fuzz %s replay of frame %ld (seed %llu)\n", ok ? "" : "not ", ++tap, dir_name[d],
			       op.replay, (unsigned long long)op.seed);
			failed += !ok;
			continue;
		}
		memcpy(start, ctr, sizeof(start));
		for (long i = 0; i < op.count; i++)
			if (!fuzz_one(&op, (enum dir)d, i, ctr, &t, false) && t.failed > (unsigned long)op.max_fail) {
				printf("#   (stopping %s after %d failures)\n", dir_name[d], op.max_fail + 1);
				break;
			}
		printf("%sok %d - fuzz %s: %lu frames, seed %llu, %lu failed (forwarded %lu, punted %lu, dropped %lu, "
		       "not UB %lu, passed as is %lu)\n", t.failed ? "not " : "", ++tap, dir_name[d], t.frames,
		       (unsigned long long)op.seed, t.failed, t.outcome[O_FWD], t.outcome[O_PUNT], t.outcome[O_DROP],
		       t.outcome[O_FOREIGN], t.outcome[O_ASIS]);
		failed += t.failed != 0;

		/* Over the whole run: rx = tx + pass + drop. */
		for (unsigned i = 0; i < UB2E_CNT__MAX; i++)
			sum[ub2e_counter_class(i)] += ctr[i] - start[i];
		printf("%sok %d - fuzz %s counters: rx %llu = tx %llu + pass %llu + drop %llu; not UB %llu; "
		       "%llu frames\n", sum[UB2E_CLASS_RX] == sum[UB2E_CLASS_TX] + sum[UB2E_CLASS_PASS] +
		       sum[UB2E_CLASS_DROP] && sum[UB2E_CLASS_RX] + sum[UB2E_CLASS_FOREIGN] == t.frames ? "" : "not ",
		       ++tap, dir_name[d], (unsigned long long)sum[UB2E_CLASS_RX], (unsigned long long)sum[UB2E_CLASS_TX],
		       (unsigned long long)sum[UB2E_CLASS_PASS], (unsigned long long)sum[UB2E_CLASS_DROP],
		       (unsigned long long)sum[UB2E_CLASS_FOREIGN], (unsigned long long)t.frames);
		failed += !(sum[UB2E_CLASS_RX] == sum[UB2E_CLASS_TX] + sum[UB2E_CLASS_PASS] + sum[UB2E_CLASS_DROP] &&
			    sum[UB2E_CLASS_RX] + sum[UB2E_CLASS_FOREIGN] == t.frames);

		/* A fuzzer that never forwards tests nothing: every outcome must be reached. */
		if (op.count >= 2000) {
			cover = t.outcome[O_FWD] && t.outcome[O_PUNT] && t.outcome[O_DROP] && t.outcome[O_FOREIGN] &&
				t.outcome[O_FWD] * 20 >= t.frames;
			printf("%sok %d - fuzz %s reaches every outcome, >= 5%% forwarded\n", cover ? "" : "not ", ++tap,
			       dir_name[d]);
			failed += !cover;
		}
	}
	ub2e__destroy(skel);
	return failed ? 1 : 0;
}
