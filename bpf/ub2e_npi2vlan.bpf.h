/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * NPI -> VLAN: an array of arrays, indexed by the Partition ID's upper and
 * lower 12 bits, so the lookup costs two inlined array lookups whatever the
 * table's size (a hash lookup grows with it). A block exists only where some
 * Partition ID of its 4096 is mapped (user/io/ub2e_tables.c makes them).
 * Apart from the other maps so that the block probe (bpf/ub2e_blocks.bpf.c)
 * declares the same map.
 */
#ifndef UB2E_NPI2VLAN_BPF_H
#define UB2E_NPI2VLAN_BPF_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "ub2e_maps.h"

struct ub2e_npi_block {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, UB2E_NPI_BLOCK);
	/* Sizes, not BTF types: the blocks are made by user space (libbpf 1.1's
	 * linker cannot size a struct type of an inner map). */
	__uint(key_size, sizeof(__u32));	/* Partition ID & 0xfff */
	__uint(value_size, sizeof(struct ub2e_npi_vlans));
};

/* __weak: both conversion objects define it; the static linker keeps one. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, UB2E_NPI_BLOCKS);
	__type(key, __u32);		/* Partition ID >> 12 */
	__array(values, struct ub2e_npi_block);
} ub2e_npi2vlan SEC(".maps") __weak;

#endif
