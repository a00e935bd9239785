// SPDX-License-Identifier: BSD-2-Clause
/*
 * Which network namespace an instance's ports live in.
 *
 * Devmaps and XDP attachments are keyed by ifindex, which only means
 * something inside one network namespace: detach or status run from another
 * would query (or detach!) whatever device has that number here. So attach
 * records the namespace (inode of /proc/self/ns/net) in a small pinned array,
 * and commands that touch ports enter that namespace first, found through
 * /run/netns or any process living in it, or refuse.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "ubctl/ubctl.h"

struct netns_id {
	__u64 ino;
	__u64 dev;
};

static int netns_of(const char *path, struct netns_id *id)
{
	struct stat st;

	if (stat(path, &st))
		return -1;
	id->ino = st.st_ino;
	id->dev = st.st_dev;
	return 0;
}

int netns_record(const char *dir, char *err, size_t errlen)
{
	struct netns_id id;
	char p[PATH_MAX];
	__u32 zero = 0;
	int fd, rc;

	if (netns_of("/proc/self/ns/net", &id)) {
		snprintf(err, errlen, "cannot identify our network namespace: %s", strerror(errno));
		return -1;
	}
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "ubctl_netns", sizeof(__u32), sizeof(id), 1, NULL);
	if (fd < 0) {
		snprintf(err, errlen, "cannot create the netns record: %s", strerror(errno));
		return -1;
	}
	snprintf(p, sizeof(p), "%s/%s", dir, PIN_NETNS);
	rc = bpf_map_update_elem(fd, &zero, &id, BPF_ANY) || bpf_obj_pin(fd, p);
	if (rc)
		snprintf(err, errlen, "pin %s: %s", p, strerror(errno));
	close(fd);
	return rc ? -1 : 0;
}

/* A file whose namespace is `want`: /run/netns/<name>, else /proc/<pid>/ns/net. */
static int find_netns(const struct netns_id *want, char *out, size_t len)
{
	static const char *const dirs[] = { "/run/netns", "/proc" };
	struct netns_id id;
	struct dirent *de;

	for (int i = 0; i < 2; i++) {
		DIR *d = opendir(dirs[i]);

		while (d && (de = readdir(d))) {
			if (de->d_name[0] == '.' || (i == 1 && (de->d_name[0] < '0' || de->d_name[0] > '9')))
				continue;
			snprintf(out, len, i ? "%s/%s/ns/net" : "%s/%s", dirs[i], de->d_name);
			if (!netns_of(out, &id) && id.ino == want->ino && id.dev == want->dev) {
				closedir(d);
				return 0;
			}
		}
		if (d)
			closedir(d);
	}
	return -1;
}

int netns_enter_instance(const char *dir, int *saved, char *err, size_t errlen)
{
	struct netns_id want, self;
	char p[PATH_MAX];
	__u32 zero = 0;
	int fd;

	*saved = -1;
	snprintf(p, sizeof(p), "%s/%s", dir, PIN_NETNS);
	fd = bpf_obj_get(p);
	if (fd < 0) {
		snprintf(err, errlen, "%s has no netns record: cannot tell which namespace its ports are in", pin_display(dir));
		return -1;
	}
	if (bpf_map_lookup_elem(fd, &zero, &want)) {
		snprintf(err, errlen, "%s: reading the netns record: %s", pin_display(p), strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	if (netns_of("/proc/self/ns/net", &self)) {
		snprintf(err, errlen, "cannot identify our network namespace: %s", strerror(errno));
		return -1;
	}
	if (self.ino == want.ino && self.dev == want.dev)
		return 0;
	if (find_netns(&want, p, sizeof(p))) {
		snprintf(err, errlen, "the instance's ports are in network namespace net:[%llu], which is not reachable from here "
			 "(no /run/netns entry, no process in it): nothing done; run this inside that namespace",
			 (unsigned long long)want.ino);
		return -1;
	}
	if (netns_enter_file(p, saved)) {
		snprintf(err, errlen, "cannot enter the instance's network namespace (%s): %s", p, strerror(errno));
		return -1;
	}
	if (ubctl_verbose)
		fprintf(stderr, "ubctl: entered the instance's network namespace through %s\n", p);
	return 0;
}

int netns_enter_file(const char *path, int *saved)
{
	int ns = open(path, O_RDONLY | O_CLOEXEC);

	*saved = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (ns < 0 || *saved < 0 || setns(ns, CLONE_NEWNET)) {
		int e = errno;

		if (ns >= 0)
			close(ns);
		if (*saved >= 0)
			close(*saved);
		*saved = -1;
		errno = e;
		return -1;
	}
	close(ns);
	return 0;
}

void netns_leave(int saved)
{
	if (saved < 0)
		return;
	if (setns(saved, CLONE_NEWNET))
		warnx_("cannot return to our network namespace: %s", strerror(errno));
	close(saved);
}
