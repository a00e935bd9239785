/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Reading and writing the UB2E NPI<->VLAN maps (ub2e_npi2vlan, ub2e_vlan2npi)
 * through their fds, keeping both directions consistent. Used by ubctl and the
 * BPF test harness; plans are checked with npimap_check() before writing.
 */
#ifndef UBXDP_UB2E_TABLES_H
#define UBXDP_UB2E_TABLES_H

#include <stddef.h>
#include <linux/types.h>
#include "lib/npimap.h"
#include "ub2e_maps.h"

/*
 * One Partition ID's value in npi2vlan (an array of 4096 blocks of 4096),
 * creating its block when needed. get: 0, -ENOENT (no block or all zero) or -errno.
 */
int ub2e_npi_get(int npi_fd, __u32 pid, struct ub2e_npi_vlans *v);
int ub2e_npi_put(int npi_fd, __u32 pid, const struct ub2e_npi_vlans *v);

/* Add entries (merging into existing Partition IDs). Returns 0 or -errno. */
int ub2e_tables_write(int npi_fd, int vlan_fd, const struct npimap_entry *plan, size_t n);
/* Every entry in the tables (vlan_fd finds the blocks where the kernel cannot
 * batch map-in-map; -1: probe every block). Returns 0; *n <= max. */
int ub2e_tables_read(int npi_fd, int vlan_fd, struct npimap_entry *plan, size_t max, size_t *n);
/* Remove one entry (perm NPIMAP_ANY_PERM: the baseline one). Returns 0, -ENOENT or -errno. */
int ub2e_tables_del(int npi_fd, int vlan_fd, uint32_t pid, int perm);
/* Remove every entry. */
void ub2e_tables_clear(int npi_fd, int vlan_fd);

#endif
