// SPDX-License-Identifier: BSD-2-Clause
/*
 * What a frame may become, and the check that it did: the configuration as
 * ubctl options (ub2e_cfg.c, npimap.c parse them: configuration, not packets),
 * the reference decoder (ubref.c) for the frame itself, the rules of
 * draft-li-uboe-00 §5 and the switch's own (docs/UB2E.md: the slow path, the
 * receive checks, the egress MTU) for the rest. Nothing here reads the
 * programs under test or the project's packet parser.
 */
#include <string.h>

#include <linux/bpf.h>

#include "lib/ub2e_cfg.h"
#include "ub2e_fuzz.h"
#include "ub2e_harness.h"
#include "io/ub2e_stats.h"
#include "ub_wire.h"

const char *const dir_name[] = { "to_uboe", "to_ub" };

/*
 * What bpftool may write into the tables that ubctl would refuse (docs/UB2E.md:
 * "bpftool map update pinned .../npi2vlan ..."): VLAN IDs with bits above the
 * 12 of a VID, VLAN 4095, Partition ID 0. Masked to 12 bits, the VLANs here are
 * never 0, so "0 = no entry" stays unambiguous.
 */
const struct raw_npi_entry raw_npi[] = {
	{ 5, { .any = 0xa005 } },
	{ 7, { .perm = { 0x3046, 0xffff } } },
	{ 4097, { .any = 0x0fff } },
	{ 9, { .any = 0x5009, .perm = { 0, 0x8063 } } },
};
const struct raw_vlan_entry raw_vlan[] = {
	{ 5, UB2E_VLAN_VALID | UB2E_VLAN_ANY_PERM | 5 },
	{ 70, UB2E_VLAN_VALID | 0x7c000000 | 7 },	/* bits no field uses */
	{ 71, UB2E_VLAN_VALID | 1u << UB2E_VLAN_PERM_SHIFT | 0x123456 },
	{ 100, UB2E_VLAN_VALID | UB2E_VLAN_ANY_PERM },	/* Partition ID 0 */
	{ 4095, UB2E_VLAN_VALID | UB2E_VLAN_ANY_PERM | 4095 },
};

const size_t n_raw_npi = sizeof(raw_npi) / sizeof(raw_npi[0]), n_raw_vlan = sizeof(raw_vlan) / sizeof(raw_vlan[0]);

int fuzz_model(const char *opts, struct model *m, char *err, size_t errlen)
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
		} else if (!strcmp(name, "untagged") || !strcmp(name, "strict") || !strcmp(name, "no-ttl-dec") ||
			   !strcmp(name, "caqm-tag")) {
			if (ub2e_cfg_set(&m->cfg, name, NULL, err, errlen))
				return -1;
		} else if (ub2e_cfg_set(&m->cfg, name, strtok_r(NULL, " ", &save), err, errlen)) {
			return -1;
		}
	}
	return 0;
}

/* UB -> UBoE: does this CCI cross in a CAQM tag? Mode 000 (bits 14-12), with --caqm-tag. */
static bool caqm_tag_out(const struct ref_frame *r, const struct model *m)
{
	return (m->cfg.flags & UB2E_F_CAQM_TAG) && (r->cci >> 12 & 7) == 0;
}

/* The tag's info for a CCI, and back (docs/WIRE.md §5: cc_type = Mode, is_last_hop = LoC, bits 10-0 as they are). */
static unsigned cci_to_tag(unsigned cci) { return (cci >> 12 & 7) << 13 | (cci >> 11 & 1) << 12 | (cci & 0x7ff); }
static unsigned tag_to_cci(unsigned t) { return (t >> 13) << 12 | (t >> 12 & 1) << 11 | (t & 0x7ff); }

static void expect_drop(struct expect *e, const char *counter, const char *why)
{
	e->counter = counter;
	e->why = why;
}

/* draft-li-uboe-00 §5.3, UB -> UBoE: the VLAN for an NPI, 0 untagged, -1 drop. */
static int model_vlan(const struct model *m, uint32_t pid, unsigned perm, struct expect *e)
{
	int any = 0, own = 0;
	unsigned v;

	if (m->cfg.flags & UB2E_F_UNTAGGED)
		return 0;
	for (size_t i = 0; m->raw && i < n_raw_npi; i++) {
		const struct ub2e_npi_vlans *t = &raw_npi[i].v;

		if (raw_npi[i].pid != pid)
			continue;
		v = t->perm[perm & 1] ? t->perm[perm & 1] : t->any;
		if (!v)
			break;
		if ((v & 0xfff) == 0xfff) {
			expect_drop(e, NULL, "the table maps the NPI to VLAN 4095 (raw, masked to 12 bits)");
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
		expect_drop(e, "drop_npi_unmapped", "NPI not in the table under --strict");
		return -1;
	}
	v = pid & 0xfff;
	if (v == 0 || v == 0xfff) {
		expect_drop(e, "drop_vlan_reserved", "lower 12 bits of the Partition ID are a reserved VLAN");
		return -1;
	}
	return (int)v;
}

/* UBoE -> UB: the NPI for a VLAN ID (0 untagged). Returns 0, or -1 to drop. */
static int model_npi(const struct model *m, unsigned vid, uint32_t *pid, unsigned *perm, struct expect *e)
{
	*pid = m->cfg.default_pid;
	*perm = m->cfg.default_perm;
	if (!vid)
		return 0;
	for (size_t i = 0; m->raw && i < n_raw_vlan; i++) {
		uint32_t val = raw_vlan[i].val;

		if (raw_vlan[i].vid != vid)
			continue;
		*pid = val & 0xffffff;
		if (!(val & UB2E_VLAN_ANY_PERM))
			*perm = val >> UB2E_VLAN_PERM_SHIFT & 1;
		if (!*pid) {
			/* Found only when the NTH is written, after the FIB lookup. */
			expect_drop(e, NULL, "the table maps the VLAN to Partition ID 0 (raw)");
			e->local_ok = true;
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
		expect_drop(e, "drop_vlan_unmapped", "VLAN not in the table under --strict");
		return -1;
	}
	*pid = vid;
	*perm = 0;
	return 0;
}

const char *fuzz_outcome_name(unsigned o)
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
/* The counter of each rule the reference decoder names. */
static const char *const defect_counter[] = {
	[REF_TRUNCATED] = "drop_truncated",
	[REF_LPH_CONFIG] = "drop_lph_config_not_ip",
	[REF_IP_VERSION] = "drop_ip_version_mismatch",
	[REF_NOT_UB_PAYLOAD] = "drop_not_uboe_payload",
	[REF_FRAGMENT] = "drop_ipv4_fragment",
	[REF_OPTIONS] = "drop_ipv4_options",
	[REF_LENGTH] = "drop_ip_bad_length",
	[REF_TP_OPCODE] = "drop_tp_opcode_invalid",
	[REF_PARTITION_ZERO] = "drop_partition_zero",
};

void fuzz_expect(enum dir d, const uint8_t *in, const struct ref_frame *r, const struct model *m, bool rc,
		 bool mtu, struct expect *e)
{
	const uint8_t *port = d == TO_UBOE ? topo.ub_port_mac : topo.ip_port_mac;
	bool drop = false, other_mac = !mac_eq(in, port);

	memset(e, 0, sizeof(*e));
	e->why = r->why;
	if (r->kind == REF_FOREIGN) {
		e->ok = O_FOREIGN;
		return;
	}
	if (r->kind == REF_DROP) {
		drop = true;
		e->counter = defect_counter[r->defect];
	} else if (d == TO_UBOE) {
		e->vid = model_vlan(m, r->pid, r->perm, e);
		drop = e->vid < 0;
		if (!drop && (r->cci >> 12 & 7) != 4 && !caqm_tag_out(r, m) && m->cfg.cci_policy == UB2E_CCI_DROP) {
			drop = true;
			expect_drop(e, "drop_cci_not_fecn", "CCI not in FECN mode under --cci-policy drop");
		}
	} else if (rc && r->kind == REF_VALID && r->tagged && (r->tci & 0xfff) == 0xfff) {
		/* Reserved before any table is consulted, --strict or not. */
		drop = true;
		expect_drop(e, "drop_vlan_reserved", "VLAN 4095 reserved (receive checks)");
	} else {
		drop = model_npi(m, r->tagged ? r->tci & 0xfff : 0, &e->pid, &e->perm, e) < 0;
	}
	if (rc && !drop && r->kind == REF_VALID) {
		if (!r->csum_ok)
			drop = true, expect_drop(e, NULL, "IPv4 header checksum bad (receive checks)");
		else if (r->martian_src)
			drop = true, expect_drop(e, NULL, "martian source address (receive checks)");
		else if (d == TO_UB && r->tagged && (r->tci & 0xfff) == 0xfff)
			drop = true, expect_drop(e, NULL, "VLAN 4095 reserved (receive checks)");
	}
	if (drop) {
		e->ok = O_DROP;
	} else if (rc && r->martian_maybe) {
		e->ok = O_DROP | O_FWD | O_PUNT;
		e->why = "0/8 or 240/4 source: may be dropped (receive checks)";
	} else if (!(m->cfg.flags & UB2E_F_NO_TTL_DEC) && r->ttl <= 1) {
		e->ok = O_PUNT;
		e->why = "TTL expires here";
		e->counter = "pass_ttl_expired";
	} else if (mtu && (d == TO_UB ? 10 + r->ip_len > topo.ub_mtu : r->ip_len > topo.ip_mtu)) {
		e->ok = O_PUNT;
		e->why = "too big for the egress MTU with LPH+NTH (egress MTU check)";
	} else {
		e->ok = O_FWD | O_PUNT;
	}
	if (rc && other_mac) {	/* not routed: to the kernel untouched, or dropped as it would be */
		e->ok = O_ASIS | (e->ok & O_DROP);
		if (!(e->ok & O_DROP))
			e->why = "destination MAC is not the port's (receive checks)", e->counter = NULL;
	}
}

/*
 * Is `name` the counter the rule calls for? Counters the fuzzer does not know
 * (added with new rules, e.g. the RFC 1812 receive checks) are taken on trust, so that a new
 * check placed before an old one does not fail frames with both defects.
 */
static bool counter_fits(const char *name, const char *want)
{
	static const char *const known[] = { "drop_truncated", "drop_lph_config_not_ip", "drop_ip_version_mismatch",
		"drop_ip_bad_length", "drop_ipv4_options", "drop_ipv4_fragment", "drop_not_uboe_payload",
		"drop_tp_opcode_invalid", "drop_partition_zero", "drop_cci_not_fecn", "drop_npi_unmapped",
		"drop_vlan_reserved", "drop_vlan_unmapped", "pass_ttl_expired" };
	bool is_known = false;

	if (!want || !strcmp(name, want))
		return true;
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		is_known |= !strcmp(name, known[i]);
	return !is_known;
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
	bool tag = caqm_tag_out(r, m);
	size_t want_len = in_len - 10 + (vid ? 4 : 0) + (tag ? 4 : 0), t = vid ? 18 : 14;
	unsigned ip_type = r->v6 ? 0x86dd : 0x0800, want_ecn = r->ecn, inner = tag ? m->cfg.caqm_ethertype : ip_type;
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
		    ref_get16(o + 16) != inner)
			FAIL(c, "want 802.1Q VLAN %d and EtherType %04x, got %04x tci %04x type %04x", vid, inner,
			     ref_get16(o + 12), ref_get16(o + 14), ref_get16(o + 16));
	} else if (ref_get16(o + 12) != inner) {
		FAIL(c, "EtherType %04x for IPv%d, want untagged %04x", ref_get16(o + 12), r->v6 ? 6 : 4, inner);
	}
	if (tag && (ref_get16(o + t) != cci_to_tag(r->cci) || ref_get16(o + t + 2) != ip_type))
		FAIL(c, "CAQM tag %04x %04x for CCI %04x, want %04x %04x", ref_get16(o + t), ref_get16(o + t + 2),
		     r->cci, cci_to_tag(r->cci), ip_type);
	if ((r->cci >> 12 & 7) == 4)
		want_ecn = m->cfg.fecn_to_ecn[r->cci & 3] & 3;
	check_ip_bytes(c, in, in_len, o, res->out_len, r, want_ecn, m->cfg.flags & UB2E_F_NO_TTL_DEC);
	ref_decode_uboe_caqm(o, res->out_len, tag ? m->cfg.caqm_ethertype : 0, &q);
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
	size_t want_len = in_len + 10 - (r->tagged ? 4 : 0) - (r->caqm_tagged ? 4 : 0);
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
	/* LPH: only VL, Config and RT set; link length fields 0 (docs/WIRE.md §5). */
	if (o[14] != (vl >> 3 & 1) || o[15] != ((vl & 7) << 5 | cfgv) ||
	    o[16] != ((rt & 1) << 7 | (rt >> 1 & 1) << 6) || o[17])
		FAIL(c, "LPH %02x%02x%02x%02x, want VL %u Config %u RT %u", o[14], o[15], o[16], o[17], vl, cfgv, rt);
	cci = ref_get16(o + 18);
	if (r->caqm_tagged && r->caqm_info >> 13 == 0) {
		/* A CAQM tag's request goes on in the CCI. */
		if (cci != tag_to_cci(r->caqm_info))
			FAIL(c, "CCI %04x from CAQM tag %04x, want %04x", cci, r->caqm_info, tag_to_cci(r->caqm_info));
	} else if (cci >> 12 != 4 || (cci & 0x0ffc)) {
		FAIL(c, "CCI %04x is not FECN mode with LoC 0", cci);
	} else if ((cci & 3) != (m->cfg.ecn_to_fecn[r->ecn] & 3u)) {
		FAIL(c, "FECN %u for ECN %u, want %u", cci & 3, r->ecn, m->cfg.ecn_to_fecn[r->ecn] & 3u);
	}
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
	if (r->kind == REF_FOREIGN)
		return false;
	/*
	 * The IP packet goes up with the NPI (and FECN) and any CAQM request in
	 * 8 bytes of XDP metadata ahead of it (headers/ub2e_maps.h, UB2E_MARK_*,
	 * UB2E_SLOW_CAQM), so that the TC slow path can convert what the kernel
	 * forwards: a valid mark with a Partition ID that is not 0, and a CAQM
	 * word that is 0 or a cc_type 000 tag's info (UB -> UBoE: exactly the
	 * CCI's, when the switch tags and the CCI is a CAQM one). In header mode
	 * (punt_key) the words follow the MACs instead, with the key.
	 */
	size_t hdr = punt_key && res->out_len == 14 + sizeof(struct ub2e_punt_hdr) + n ?
		     sizeof(struct ub2e_punt_hdr) : 0;

	if (res->out_len == 8 + 14 + n || hdr) {
		struct ub2e_punt_meta pm;
		struct ub2e_punt_hdr h;

		if (hdr) {
			memcpy(&h, o + 14, sizeof(h));
			if (h.key != punt_key || h.not_ip[0] || h.not_ip[UB2E_PUNT_NOT_IP6_NH] != 0xff)
				return false;
			pm = h.m;
		} else {
			memcpy(&pm, o, sizeof(pm));
		}
		if ((pm.mark & UB2E_MARK_MAGIC_MASK) != UB2E_MARK_MAGIC || !(pm.mark & 0xffffffu) ||
		    (pm.caqm & ~(UB2E_SLOW_CAQM | UB2E_SLOW_CAQM_INFO)) || (pm.caqm && !(pm.caqm & UB2E_SLOW_CAQM)))
			return false;
		if (d == TO_UBOE && pm.caqm != ((m->cfg.flags & UB2E_F_CAQM_TAG) && ub_cci_mode(r->cci) == UB_CCI_MODE_CAQM ?
						UB2E_SLOW_CAQM | ub_cci_to_caqm_tag(r->cci) : 0))
			return false;
		if (!hdr) {
			o += sizeof(pm);
			b += sizeof(pm);
		}
		b += hdr;
	}
	if (o + 14 + hdr + n != res->out + res->out_len || memcmp(o, in, 12) ||
	    ref_get16(o + 12) != (r->v6 ? 0x86dd : 0x0800))
		return false;
	for (size_t i = 0; i < n; i++) {
		bool ecn_byte = r->v6 ? i == 1 : (i == 1 || i == 10 || i == 11);
		/* A punt may set DF (then the checksum follows): the kernel answers
		 * Fragmentation Needed instead of fragmenting. */
		bool df_byte = !r->v6 && (i == 6 || i == 10 || i == 11);

		if (a[i] != b[i] && !(d == TO_UBOE && ecn_byte) && !df_byte)
			return false;
	}
	if (!r->v6 && a[6] != b[6] && ((a[6] | 0x40) != b[6] || ref_ipv4_csum_ok(b, 20) != r->csum_ok))
		return false;
	if (!r->v6 && !(a[10] == b[10] && a[11] == b[11]) && a[1] == b[1] && a[6] == b[6])
		return false;	/* the checksum moved with nothing it covers */
	if (d == TO_UB || !memcmp(a, b, n))
		return true;
	/* Beyond DF, only the ECN may differ, only to what the CCI says, and the checksum must follow. */
	if (a[1] != b[1]) {
		ecn_b = r->v6 ? (b[1] >> 4) & 3 : b[1] & 3;
		if ((r->cci >> 12 & 7) != 4 || ecn_b != (m->cfg.fecn_to_ecn[r->cci & 3] & 3u))
			return false;
		if ((r->v6 ? (a[1] ^ b[1]) & 0xcf : (a[1] ^ b[1]) & 0xfc) != 0)
			return false;
	}
	return r->v6 || ref_ipv4_csum_ok(b, 20) == r->csum_ok;
}

void fuzz_check(struct verdict_ctx *c, enum dir d, const uint8_t *in, size_t in_len, const struct result *res,
		const struct model *m, bool rc, const struct ref_frame *r, const struct expect *e, unsigned *outcome)
{
	const char *verdict_counter = "?";
	unsigned ok = e->ok;
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
			verdict_counter = ub2e_counter_name(i);
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
	/*
	 * Like a punt, this one depends on the FIB, which the reference does not
	 * model: a valid frame routed out of a port that is not the other side's
	 * is dropped (passing it up would forward it unconverted).
	 */
	if (*outcome == O_DROP && (ok & O_FWD) && !strcmp(verdict_counter, "drop_not_egress_port"))
		ok |= O_DROP;
	if (e->local_ok && !strcmp(verdict_counter, "pass_local") && res->out_len == in_len &&
	    !memcmp(res->out, in, in_len)) {
		*outcome = O_ASIS;
		ok |= O_ASIS;
	}
	if (!(ok & *outcome)) {
		char want[96] = "";

		for (unsigned b = 1; b <= O_ASIS; b <<= 1)
			if (ok & b)
				snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%s", want[0] ? " or " : "",
					 fuzz_outcome_name(b));
		FAIL(c, "%s, but the reference allows only: %s (%s)", fuzz_outcome_name(*outcome), want, e->why ? e->why : "?");
		return;
	}
	/* Counted per reason: the first rule the frame breaks, or TTL expiry. */
	if ((*outcome == O_DROP || (*outcome == O_PUNT && !(ok & O_FWD))) && !counter_fits(verdict_counter, e->counter))
		FAIL(c, "counted as %s, the reference says %s (%s)", verdict_counter, e->counter, e->why);
	if (!strcmp(verdict_counter, "pass_ttl_expired") && (ok & O_FWD) && r->ttl > 1)
		FAIL(c, "pass_ttl_expired for TTL %u", r->ttl);
	if (info && !(d == TO_UBOE && r->kind == REF_VALID && (r->cci >> 12 & 7) != 4 && !caqm_tag_out(r, m)))
		FAIL(c, "cci_not_fecn_forwarded moved for a packet whose CCI is FECN, or CAQM in a tag (or not UB)");
	if (*outcome == O_FWD && d == TO_UBOE && (r->cci >> 12 & 7) != 4 && !caqm_tag_out(r, m) && !info)
		FAIL(c, "non-FECN CCI forwarded without cci_not_fecn_forwarded");
	if (*outcome == O_PUNT && !punt_shape_ok(d, in, in_len, res, r, m))
		FAIL(c, "handed to the kernel as neither the input nor its IP packet");
	if (*outcome == O_FWD) {
		if (d == TO_UBOE)
			check_fwd_to_uboe(c, in, in_len, res, r, m, e->vid, rc);
		else
			check_fwd_to_ub(c, in, in_len, res, r, m, e->pid, e->perm, rc);
	}
}
