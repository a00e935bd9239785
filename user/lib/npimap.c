// SPDX-License-Identifier: BSD-2-Clause
#include "lib/npimap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/parse_num.h"
#include "ub2e_maps.h"
#include "ub_wire.h"

static int parse_num(const char *s, const char *end, unsigned long max, unsigned long *out)
{
	return parse_uint(s, (size_t)(end - s), max, out);
}

int npimap_parse(const char *s, struct npimap_entry *e, char *err, size_t errlen)
{
	const char *slash = strchr(s, '/'), *eq = strchr(s, '=');
	const char *pid_end = slash ? slash : eq ? eq : s + strlen(s);
	unsigned long v;

	memset(e, 0, sizeof(*e));
	e->perm = NPIMAP_ANY_PERM;
	if (parse_num(s, pid_end, UB_PID_MASK, &v) || v == UB_PID_INVALID) {
		snprintf(err, errlen, "'%s': Partition ID must be 1..%u", s, UB_PID_MASK);
		return -1;
	}
	e->pid = (uint32_t)v;
	if (slash) {
		if (!eq || eq < slash || parse_num(slash + 1, eq, 1, &v)) {
			snprintf(err, errlen, "'%s': expected PID/PERM=VLAN with PERM 0 or 1", s);
			return -1;
		}
		e->perm = (int)v;
	}
	if (eq) {
		if (parse_num(eq + 1, eq + 1 + strlen(eq + 1), 4094, &v) || v == 0) {
			snprintf(err, errlen, "'%s': VLAN ID must be 1..4094", s);
			return -1;
		}
		e->vlan = (uint16_t)v;
	} else {
		e->vlan = e->pid & 0xfff;
		e->truncated = true;
		if (e->vlan == 0 || e->vlan == 0xfff) {
			snprintf(err, errlen, "'%s': lower 12 bits of Partition ID %u give reserved VLAN %u; map it explicitly",
				 s, e->pid, e->vlan);
			return -1;
		}
	}
	return 0;
}

const char *npimap_format(const struct npimap_entry *e, char *buf, size_t len)
{
	if (e->perm == NPIMAP_ANY_PERM)
		snprintf(buf, len, "%u=%u", e->pid, e->vlan);
	else
		snprintf(buf, len, "%u/%d=%u", e->pid, e->perm, e->vlan);
	return buf;
}

int npimap_check(const struct npimap_entry *v, size_t n, char *err, size_t errlen)
{
	char a[32], b[32];

	for (size_t i = 0; i < n; i++) {
		for (size_t j = i + 1; j < n; j++) {
			const struct npimap_entry *x = &v[i], *y = &v[j];
			bool same_pid = x->pid == y->pid;

			if (same_pid && x->perm == y->perm) {
				if (x->vlan == y->vlan)
					continue;	/* the same entry twice */
				snprintf(err, errlen, "Partition ID %u is mapped twice: %s and %s",
					 x->pid, npimap_format(x, a, sizeof(a)), npimap_format(y, b, sizeof(b)));
				return -1;
			}
			if (same_pid && (x->perm == NPIMAP_ANY_PERM || y->perm == NPIMAP_ANY_PERM)) {
				snprintf(err, errlen, "Partition ID %u has both a baseline and an enhanced mapping (%s, %s)",
					 x->pid, npimap_format(x, a, sizeof(a)), npimap_format(y, b, sizeof(b)));
				return -1;
			}
			if (x->vlan != y->vlan)
				continue;
			if (same_pid)
				snprintf(err, errlen, "Partition ID %u: Permission 0 and 1 must map to distinct VLAN IDs (both %u)",
					 x->pid, x->vlan);
			else if (x->truncated || y->truncated)
				snprintf(err, errlen, "Partition IDs %u and %u collide on VLAN %u after 12-bit truncation",
					 x->pid, y->pid, x->vlan);
			else
				snprintf(err, errlen, "Partition IDs %u and %u are both mapped to VLAN %u",
					 x->pid, y->pid, x->vlan);
			return -1;
		}
	}
	return 0;
}

uint32_t npimap_vlan_value(const struct npimap_entry *e)
{
	if (e->perm == NPIMAP_ANY_PERM)
		return UB2E_VLAN_VALID | UB2E_VLAN_ANY_PERM | e->pid;
	return UB2E_VLAN_VALID | ((uint32_t)e->perm << UB2E_VLAN_PERM_SHIFT) | e->pid;
}

void npimap_value_set(struct ub2e_npi_vlans *v, const struct npimap_entry *e)
{
	if (e->perm == NPIMAP_ANY_PERM)
		v->any = e->vlan;
	else
		v->perm[e->perm & 1] = e->vlan;
}

uint16_t npimap_value_take(struct ub2e_npi_vlans *v, int perm)
{
	uint16_t *slot = perm == NPIMAP_ANY_PERM ? &v->any : &v->perm[perm & 1];
	uint16_t vlan = *slot;

	*slot = 0;
	return vlan;
}

bool npimap_value_empty(const struct ub2e_npi_vlans *v)
{
	return !v->any && !v->perm[0] && !v->perm[1];
}

size_t npimap_value_entries(uint32_t pid, const struct ub2e_npi_vlans *v, struct npimap_entry out[3])
{
	const int perms[3] = { NPIMAP_ANY_PERM, 0, 1 };
	const uint16_t vlans[3] = { v->any, v->perm[0], v->perm[1] };
	size_t n = 0;

	for (int i = 0; i < 3; i++) {
		if (!vlans[i])
			continue;
		out[n] = (struct npimap_entry){ .pid = pid, .perm = perms[i], .vlan = vlans[i],
						.truncated = vlans[i] == (pid & 0xfff) };
		n++;
	}
	return n;
}

int npimap_parse_key(const char *s, struct npimap_entry *e, char *err, size_t errlen)
{
	char buf[48];

	/* "PID[/PERM]" is an entry without its VLAN: parse it with a dummy one. */
	if (strchr(s, '=') || strlen(s) > 32 ||
	    (snprintf(buf, sizeof(buf), "%s=1", s), npimap_parse(buf, e, err, errlen))) {
		snprintf(err, errlen, "'%s' is not PID or PID/PERM", s);
		return -1;
	}
	e->vlan = 0;
	return 0;
}

const struct npimap_entry *npimap_find(const struct npimap_entry *v, size_t n, uint32_t pid, int perm)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].pid == pid && v[i].perm == perm)
			return &v[i];
	return NULL;
}
