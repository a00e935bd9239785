/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * NPI <-> VLAN mapping plans (draft-li-uboe-00 §5.3), as pure logic: parse
 * entries, refuse plans that would make two partitions share a VLAN, and
 * encode entries for the BPF maps (headers/ub2e_maps.h).
 */
#ifndef UBXDP_NPIMAP_H
#define UBXDP_NPIMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ub2e_maps.h"

#define NPIMAP_ANY_PERM (-1)

struct npimap_entry {
	uint32_t pid;		/* Partition ID, 1..0xffffff */
	int perm;		/* 0 high, 1 low, NPIMAP_ANY_PERM for a baseline entry */
	uint16_t vlan;		/* 1..4094 */
	bool truncated;		/* no VLAN given: the lower 12 bits of the PID */
};

/* "PID", "PID=VLAN", "PID/PERM=VLAN". Returns 0, or -1 with a message in err. */
int npimap_parse(const char *s, struct npimap_entry *e, char *err, size_t errlen);

/* "PID" or "PID/PERM" (the key of map del). Returns 0, or -1 with a message in err. */
int npimap_parse_key(const char *s, struct npimap_entry *e, char *err, size_t errlen);
/* The entry of (pid, perm) in v, or NULL. */
const struct npimap_entry *npimap_find(const struct npimap_entry *v, size_t n, uint32_t pid, int perm);

/*
 * A plan is valid when every VLAN stands for exactly one (partition,
 * permission) and no partition has both a baseline and an enhanced entry.
 * Returns 0, or -1 naming the colliding IDs in err.
 */
int npimap_check(const struct npimap_entry *v, size_t n, char *err, size_t errlen);

/* ub2e_vlan2npi value of an entry. */
uint32_t npimap_vlan_value(const struct npimap_entry *e);
/* Put an entry into its Partition ID's ub2e_npi2vlan value. */
void npimap_value_set(struct ub2e_npi_vlans *v, const struct npimap_entry *e);
/* Remove the entry of `perm` (or the baseline one) from a value; returns its VLAN, 0 if none. */
uint16_t npimap_value_take(struct ub2e_npi_vlans *v, int perm);
bool npimap_value_empty(const struct ub2e_npi_vlans *v);
/* The entries a value holds (at most 3); returns how many. */
size_t npimap_value_entries(uint32_t pid, const struct ub2e_npi_vlans *v, struct npimap_entry out[3]);
/* "4097/1=5" or "7=7"; returns buf. */
const char *npimap_format(const struct npimap_entry *e, char *buf, size_t len);

#endif
