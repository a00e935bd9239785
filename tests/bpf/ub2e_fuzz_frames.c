// SPDX-License-Identifier: BSD-2-Clause
/*
 * Frames for the UB2E fuzzer: the scapy fixtures as seeds, valid UB and UBoE
 * frames built here from docs/WIRE.md towards every kind of destination the switch
 * namespace's FIB knows, random bytes; then ubmutate.c's damage.
 */
#include <arpa/inet.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ub2e_fuzz.h"
#include "ub2e_harness.h"

struct fuzz_topo topo;

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

int fuzz_load_topo(const char *path)
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
int fuzz_load_seeds(const char *path)
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

static const uint8_t *peer_mac(enum dir d)
{
	return d == TO_UBOE ? topo.ubpu_mac : topo.iphost_mac;
}

/* A valid UB (to_uboe) or UBoE (to_ub) frame, built from docs/WIRE.md by hand. */
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
		unsigned cci = fz_chance(g, 70) ? 0x4000 | fz_rnd(g, 4) | (fz_rnd(g, 2) << 11) :
			       fz_chance(g, 50) ? fz_rnd(g, 0x1000) | (fz_rnd(g, 2) << 15) : fz_rnd(g, 0x10000);

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
	} else {
		if (fz_chance(g, 50)) {
			ref_put16(f + 12, 0x8100);
			ref_put16(f + 14, fz_rnd(g, 8) << 13 | vids[fz_rnd(g, 8)]);
			off = 16;
		} else {
			off = 12;
		}
		/* The CAQM tag (docs/WIRE.md §5) after the 802.1Q one: cc_type mostly 000. */
		if (fz_chance(g, 30)) {
			unsigned info = fz_rnd(g, 0x10000);

			ref_put16(f + off, fz_chance(g, 90) ? m->cfg.caqm_ethertype : 0x88b6);
			ref_put16(f + off + 2, fz_chance(g, 80) ? info & 0x1fff : info);
			off += 4;
		}
		ref_put16(f + off, v6 ? 0x86dd : 0x0800);
		off += 2;
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

size_t fuzz_make_frame(struct fz_rng *g, enum dir d, const struct model *m, uint8_t *f)
{
	unsigned kind = fz_rnd(g, 100);
	size_t len;

	if (kind < 8) {		/* random bytes behind a plausible EtherType */
		len = fz_rnd(g, 160);
		fz_bytes(g, f, len);
		if (len >= 14 && fz_chance(g, 70))
			ref_put16(f + 12, (unsigned[]){ 0x88b5, 0x0800, 0x86dd, 0x8100, 0x88b6 }[fz_rnd(g, 5)]);
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
