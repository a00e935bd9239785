// SPDX-License-Identifier: BSD-2-Clause
#include "ub2e_tables.h"

#include <errno.h>
#include <bpf/bpf.h>

int ub2e_tables_write(int npi_fd, int vlan_fd, const struct npimap_entry *plan, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct ub2e_npi_vlans v = {};
		__u32 pid = plan[i].pid, vid = plan[i].vlan, back = npimap_vlan_value(&plan[i]);

		bpf_map_lookup_elem(npi_fd, &pid, &v);	/* absent: starts empty */
		npimap_value_set(&v, &plan[i]);
		if (bpf_map_update_elem(npi_fd, &pid, &v, BPF_ANY) ||
		    bpf_map_update_elem(vlan_fd, &vid, &back, BPF_ANY))
			return -errno;
	}
	return 0;
}

int ub2e_tables_read(int npi_fd, struct npimap_entry *plan, size_t max, size_t *n)
{
	__u32 key, next, *prev = NULL;
	struct ub2e_npi_vlans v;
	struct npimap_entry e[3];

	*n = 0;
	while (!bpf_map_get_next_key(npi_fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(npi_fd, &key, &v))
			continue;
		for (size_t i = 0, k = npimap_value_entries(key, &v, e); i < k && *n < max; i++)
			plan[(*n)++] = e[i];
	}
	return 0;
}

int ub2e_tables_del(int npi_fd, int vlan_fd, uint32_t pid, int perm)
{
	struct ub2e_npi_vlans v;
	__u32 key = pid, vid, zero = 0;

	if (bpf_map_lookup_elem(npi_fd, &key, &v))
		return -ENOENT;
	vid = npimap_value_take(&v, perm);
	if (!vid)
		return -ENOENT;
	if (npimap_value_empty(&v) ? bpf_map_delete_elem(npi_fd, &key) : bpf_map_update_elem(npi_fd, &key, &v, BPF_ANY))
		return -errno;
	if (bpf_map_update_elem(vlan_fd, &vid, &zero, BPF_ANY))
		return -errno;
	return 0;
}

void ub2e_tables_clear(int npi_fd, int vlan_fd)
{
	struct npimap_entry e;
	size_t n;

	/* One at a time: deleting while iterating a hash map restarts the walk anyway. */
	while (!ub2e_tables_read(npi_fd, &e, 1, &n) && n == 1)
		if (ub2e_tables_del(npi_fd, vlan_fd, e.pid, e.perm))
			break;
}
