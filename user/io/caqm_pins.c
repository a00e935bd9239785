// SPDX-License-Identifier: BSD-2-Clause
#include "io/caqm_pins.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "caqm_stage.h"
#include "io/percpu.h"

static const char *const cnt_names[CAQM_CNT_MAX] = {
	[CAQM_CNT_OTHER] = "other", [CAQM_CNT_TRUNCATED] = "truncated",
	[CAQM_CNT_NOT_CAQM] = "not_caqm", [CAQM_CNT_REQUESTS] = "requests",
	[CAQM_CNT_GRANTED] = "granted", [CAQM_CNT_TRIMMED] = "trimmed",
	[CAQM_CNT_REFUSED] = "refused", [CAQM_CNT_CONGESTED] = "congested",
	[CAQM_CNT_ECN_SEEN] = "ecn_seen", [CAQM_CNT_ECN_MARKED] = "ecn_marked",
	[CAQM_CNT_TAGGED] = "tagged",
};

/* A pinned map that is what the stage made: a stale or foreign pin gives nonsense. */
static int open_one(const char *dir, const char *name, __u32 value_size, char *err, size_t errlen)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = bpf_obj_get(path);
	if (fd < 0) {
		fd = -errno;
		snprintf(err, errlen, "no CAQM stage pinned in %s (%s: %s)", dir, name, strerror(-fd));
		return fd;
	}
	if (bpf_obj_get_info_by_fd(fd, &info, &len) || info.value_size != value_size ||
	    info.key_size != sizeof(__u32)) {
		snprintf(err, errlen, "%s is not a CAQM stage's %s map", path, name);
		close(fd);
		return -EINVAL;
	}
	return fd;
}

int caqm_pins_open(const char *dir, int *budget_fd, int *stats_fd, char *err, size_t errlen)
{
	*budget_fd = open_one(dir, CAQM_PIN_BUDGET, sizeof(struct caqm_budget), err, errlen);
	if (*budget_fd < 0)
		return *budget_fd;
	*stats_fd = open_one(dir, CAQM_PIN_STATS, sizeof(__u64), err, errlen);
	if (*stats_fd < 0) {
		close(*budget_fd);
		return *stats_fd;
	}
	return 0;
}

struct json_object *caqm_stage_json(int budget_fd, int stats_fd)
{
	struct caqm_budget b;
	__u64 cnt[CAQM_CNT_MAX];
	__u32 zero = 0;
	struct json_object *o;
	int rc = percpu_counters_sum(stats_fd, CAQM_CNT_MAX, cnt);

	if (rc) {
		errno = -rc;
		return NULL;
	}
	if (bpf_map_lookup_elem_flags(budget_fd, &zero, &b, BPF_F_LOCK))
		return NULL;
	o = json_object_new_object();
	for (int k = 0; k < CAQM_CNT_MAX; k++)
		json_object_object_add(o, cnt_names[k], json_object_new_uint64(cnt[k]));
	json_object_object_add(o, "queue_bytes", json_object_new_uint64(b.vq));
	json_object_object_add(o, "queue_high_bytes", json_object_new_uint64(b.vq_high));
	return o;
}
