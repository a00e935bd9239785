// SPDX-License-Identifier: BSD-2-Clause
#include "io/ub2e_tables.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ub2e_blocks.skel.h"

/* ---- npi2vlan: blocks of 4096 Partition IDs (bpf/ub2e_common.bpf.h) ------- */

/* The block holding `pid`, as an fd; -ENOENT when there is none (and !create). */
static int npi_block(int npi_fd, __u32 pid, bool create)
{
	__u32 hi = pid >> 12, id;
	int fd;

	if (!bpf_map_lookup_elem(npi_fd, &hi, &id)) {
		fd = bpf_map_get_fd_by_id(id);
		return fd < 0 ? -errno : fd;
	}
	if (!create)
		return -ENOENT;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "ub2e_npi_block", sizeof(__u32),
			    sizeof(struct ub2e_npi_vlans), UB2E_NPI_BLOCK, NULL);
	if (fd < 0)
		return -errno;
	if (bpf_map_update_elem(npi_fd, &hi, &fd, BPF_ANY)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

int ub2e_npi_get(int npi_fd, __u32 pid, struct ub2e_npi_vlans *v)
{
	__u32 lo = pid & 0xfff;
	int fd = npi_block(npi_fd, pid, false), rc;

	if (fd < 0)
		return fd;
	rc = bpf_map_lookup_elem(fd, &lo, v) ? -errno : 0;
	close(fd);
	if (!rc && !v->any && !v->perm[0] && !v->perm[1])
		rc = -ENOENT;
	return rc;
}

int ub2e_npi_put(int npi_fd, __u32 pid, const struct ub2e_npi_vlans *v)
{
	__u32 lo = pid & 0xfff;
	int fd = npi_block(npi_fd, pid, true), rc;

	if (fd < 0)
		return fd;
	rc = bpf_map_update_elem(fd, &lo, v, BPF_ANY) ? -errno : 0;
	close(fd);
	return rc;
}

int ub2e_tables_write(int npi_fd, int vlan_fd, const struct npimap_entry *plan, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct ub2e_npi_vlans v = {};
		__u32 pid = plan[i].pid, vid = plan[i].vlan, back = npimap_vlan_value(&plan[i]);

		int rc;

		if (ub2e_npi_get(npi_fd, pid, &v))	/* absent: starts empty */
			memset(&v, 0, sizeof(v));
		npimap_value_set(&v, &plan[i]);
		rc = ub2e_npi_put(npi_fd, pid, &v);
		if (rc)
			return errno = -rc, rc;
		if (bpf_map_update_elem(vlan_fd, &vid, &back, BPF_ANY))
			return -errno;
	}
	return 0;
}

/*
 * The slots of npi2vlan that hold a block, as a bitmap (bit hi % 32 of
 * found[hi / 32]), from inside the kernel: bpf/ub2e_blocks.bpf.c, run once on
 * the switch's map. Returns 0 or -1 (it could not be loaded or run).
 */
static int npi_slots_probe(int npi_fd, __u32 found[UB2E_NPI_BLOCKS / 32])
{
	unsigned char frame[64] = {};
	struct ub2e_blocks *skel = ub2e_blocks__open();
	int rc = -1;

	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = sizeof(frame), .repeat = 1);
	if (!skel)
		return -1;
	if (!bpf_map__reuse_fd(skel->maps.ub2e_npi2vlan, npi_fd) && !ub2e_blocks__load(skel) &&
	    !bpf_prog_test_run_opts(bpf_program__fd(skel->progs.ub2e_blocks), &o)) {
		memcpy(found, skel->bss->found, sizeof(skel->bss->found));
		rc = 0;
	}
	ub2e_blocks__destroy(skel);
	return rc;
}

/*
 * The blocks that exist, in few bpf() calls: on kernels before 6.8 every
 * lookup of the outer map-in-map from user space waits for a
 * synchronize_rcu() (~18 ms a slot on 6.1 under qemu TCG: 72 s for the 4096,
 * batch or one by one). First through vlan2npi (one batch lookup of a plain
 * array): every entry written through these functions has its VLAN there,
 * pointing at its Partition ID, so its VALID values name the blocks in use.
 * Then the blocks no VLAN points into (made with bpftool alone): the probe
 * program names the slots that hold one, and only those not seen yet are
 * looked up; should it not load, every slot not seen. Without vlan2npi: the
 * outer batch, then one by one.
 */
static __u32 npi_blocks(int npi_fd, int vlan_fd, __u32 his[UB2E_NPI_BLOCKS], __u32 ids[UB2E_NPI_BLOCKS])
{
	static __u32 vids[UB2E_VLAN_MAX], vals[UB2E_VLAN_MAX], found[UB2E_NPI_BLOCKS / 32];
	static bool seen[UB2E_NPI_BLOCKS];
	__u32 count = UB2E_VLAN_MAX, batch = 0, n = 0;

	if (vlan_fd >= 0 && (!bpf_map_lookup_batch(vlan_fd, NULL, &batch, vids, vals, &count, NULL) || errno == ENOENT)) {
		memset(seen, 0, sizeof(seen));
		for (__u32 i = 0; i < count; i++) {
			__u32 hi = (vals[i] & 0xffffffu) >> 12;

			if (!(vals[i] & UB2E_VLAN_VALID) || seen[hi])
				continue;
			seen[hi] = true;
			if (!bpf_map_lookup_elem(npi_fd, &hi, &ids[n]))
				his[n++] = hi;
		}
		if (npi_slots_probe(npi_fd, found)) {
			/* Still correct, but each slot may cost a synchronize_rcu(): say why it is slow. */
			fprintf(stderr, "ub2e: the NPI block probe did not load (%s); looking up every slot, slow before kernel 6.8\n",
				strerror(errno));
			memset(found, 0xff, sizeof(found));
		}
		for (__u32 hi = 0; hi < UB2E_NPI_BLOCKS; hi++)
			if (!seen[hi] && (found[hi / 32] >> (hi % 32) & 1) && !bpf_map_lookup_elem(npi_fd, &hi, &ids[n]))
				his[n++] = hi;
		return n;
	}
	count = UB2E_NPI_BLOCKS;
	batch = 0;
	if (!bpf_map_lookup_batch(npi_fd, NULL, &batch, his, ids, &count, NULL) || errno == ENOENT)
		return count;
	for (__u32 hi = 0; hi < UB2E_NPI_BLOCKS; hi++)
		if (!bpf_map_lookup_elem(npi_fd, &hi, &ids[n]))
			his[n++] = hi;
	return n;
}

int ub2e_tables_read(int npi_fd, int vlan_fd, struct npimap_entry *plan, size_t max, size_t *n)
{
	static struct ub2e_npi_vlans v[UB2E_NPI_BLOCK];
	static __u32 his[UB2E_NPI_BLOCKS], ids[UB2E_NPI_BLOCKS];
	struct npimap_entry e[3];
	__u32 nb = npi_blocks(npi_fd, vlan_fd, his, ids);

	*n = 0;
	for (__u32 b = 0; b < nb && *n < max; b++) {
		__u32 hi = his[b], keys[UB2E_NPI_BLOCK], count = UB2E_NPI_BLOCK, batch = 0;
		int fd = bpf_map_get_fd_by_id(ids[b]);

		if (fd < 0)
			continue;
		if (bpf_map_lookup_batch(fd, NULL, &batch, keys, v, &count, NULL) && errno != ENOENT)
			count = 0;
		close(fd);
		for (__u32 k = 0; k < count; k++) {
			__u32 pid = hi << 12 | keys[k];

			if (!v[k].any && !v[k].perm[0] && !v[k].perm[1])
				continue;
			for (size_t i = 0, m = npimap_value_entries(pid, &v[k], e); i < m && *n < max; i++)
				plan[(*n)++] = e[i];
		}
	}
	return 0;
}

int ub2e_tables_del(int npi_fd, int vlan_fd, uint32_t pid, int perm)
{
	struct ub2e_npi_vlans v;
	__u32 key = pid, vid, zero = 0;

	int rc;

	if (ub2e_npi_get(npi_fd, key, &v))
		return -ENOENT;
	vid = npimap_value_take(&v, perm);
	if (!vid)
		return -ENOENT;
	rc = ub2e_npi_put(npi_fd, key, &v);	/* all zero when empty: no entry */
	if (rc)
		return rc;
	if (bpf_map_update_elem(vlan_fd, &vid, &zero, BPF_ANY))
		return -errno;
	return 0;
}

void ub2e_tables_clear(int npi_fd, int vlan_fd)
{
	static __u32 keys[UB2E_VLAN_MAX], zeros[UB2E_VLAN_MAX];
	__u32 count = UB2E_VLAN_MAX;

	static __u32 his[UB2E_NPI_BLOCKS], ids[UB2E_NPI_BLOCKS];
	__u32 nb = npi_blocks(npi_fd, vlan_fd, his, ids);

	/* Dropping the blocks drops their entries; the VLAN side is a plain array. */
	for (__u32 b = 0; b < nb; b++)
		bpf_map_delete_elem(npi_fd, &his[b]);
	for (__u32 vid = 0; vid < UB2E_VLAN_MAX; vid++)
		keys[vid] = vid;
	bpf_map_update_batch(vlan_fd, keys, zeros, &count, NULL);
}
