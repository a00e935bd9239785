// SPDX-License-Identifier: BSD-2-Clause
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "ubctl/ubctl.h"

const char *pin_display(const char *path)
{
	const char *p = path;

	if (strncmp(p, "/proc/", 6))
		return path;
	p += 6;
	while (*p >= '0' && *p <= '9')
		p++;
	return strncmp(p, "/root/", 6) ? path : p + 5;
}

void pin_netns_name(char *out, size_t len)
{
	struct stat self, st;
	struct dirent *de;
	DIR *d;

	/* Like `ip netns identify`: a bind mount under /run/netns has the ns inode.
	 * A namespace without a name there (the host's) gets no prefix. */
	out[0] = '\0';
	if (stat("/proc/self/ns/net", &self))
		return;
	d = opendir("/run/netns");
	while (d && (de = readdir(d))) {
		char p[PATH_MAX];

		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "/run/netns/%s", de->d_name);
		if (!stat(p, &st) && st.st_ino == self.st_ino && st.st_dev == self.st_dev) {
			snprintf(out, len, "%s", de->d_name);
			break;
		}
	}
	if (d)
		closedir(d);
}

int pin_open(const char *dir, const char *file)
{
	char p[PATH_MAX + 300];

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	return bpf_obj_get(p);
}

int pin_role_dir(const char *role, char *out, size_t len, char *err, size_t errlen)
{
	char root[PATH_MAX];

	if (pin_bpffs_root(root, sizeof(root), err, errlen))
		return -1;
	snprintf(out, len, "%s/ubxdp/%s", root, role);
	return 0;
}

int array_room(void *arr, size_t *cap, size_t n, size_t elem)
{
	void *p, *cur;

	if (n < *cap)
		return 0;
	memcpy(&cur, arr, sizeof(cur));
	p = realloc(cur, (*cap ? 2 * *cap : 16) * elem);
	if (!p)
		return -1;
	memcpy(arr, &p, sizeof(p));
	*cap = *cap ? 2 * *cap : 16;
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

int pin_list_instances(const char *role, char (**names)[256])
{
	char dir[PATH_MAX], err[256];
	struct dirent *de;
	size_t cap = 0;
	int n = 0;
	DIR *d;

	*names = NULL;
	if (pin_role_dir(role, dir, sizeof(dir), err, sizeof(err)))
		return -1;
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (array_room(names, &cap, (size_t)n, sizeof(**names)))
			break;
		snprintf((*names)[n++], 256, "%s", de->d_name);
	}
	closedir(d);
	if (n)
		qsort(*names, (size_t)n, sizeof(**names), name_cmp);
	return n;
}

int pin_instance_dir(const char *role, const struct instance_sel *sel, bool must_exist,
		     char *out, size_t len, char *err, size_t errlen)
{
	char base[PATH_MAX], ns[128], (*names)[256];
	struct stat st;
	int n;

	if (sel->pin_path) {
		snprintf(out, len, "%s", sel->pin_path);
	} else {
		if (pin_role_dir(role, base, sizeof(base), err, errlen))
			return UB_EXIT_FAIL;
		if (sel->name) {
			/* bpffs refuses names with a dot. */
			if (!*sel->name || strpbrk(sel->name, "/.")) {
				snprintf(err, errlen, "--name '%s': must be non-empty, without '/' or '.'", sel->name);
				return UB_EXIT_USAGE;
			}
			snprintf(out, len, "%s/%s", base, sel->name);
		} else if (sel->ub_dev && sel->ip_dev) {
			/* Two switches in two netns must not share pins: the netns is in the name. */
			pin_netns_name(ns, sizeof(ns));
			snprintf(out, len, "%s/%s%s%s-%s", base, ns, *ns ? ":" : "", sel->ub_dev, sel->ip_dev);
		} else if (must_exist) {
			n = pin_list_instances(role, &names);
			if (n == 1)
				snprintf(out, len, "%s/%s", base, names[0]);
			free(names);
			if (n <= 0) {
				snprintf(err, errlen, "no %s instance is attached", role);
				return UB_EXIT_NOTFOUND;
			} else if (n > 1) {
				snprintf(err, errlen, "%d %s instances are attached: name one with --name", n, role);
				return UB_EXIT_USAGE;
			}
		} else {
			snprintf(err, errlen, "give --ub-dev and --ip-dev, --name or --pin-path");
			return UB_EXIT_USAGE;
		}
	}
	if (must_exist && stat(out, &st) && (errno == EACCES || errno == EPERM)) {
		snprintf(err, errlen, "%s: permission denied (ubctl needs root: CAP_BPF, CAP_NET_ADMIN)", out);
		return UB_EXIT_KERNEL;
	}
	if (must_exist && (stat(out, &st) || !S_ISDIR(st.st_mode))) {
		snprintf(err, errlen, "no %s instance at %s", role, out);
		return UB_EXIT_NOTFOUND;
	}
	return 0;
}

int pin_dev_instance_dir(const char *role, const char *dev, bool must_exist, char *out, size_t len)
{
	char ns[128], name[300], err[256];
	struct instance_sel sel = { .name = name };
	int rc;

	pin_netns_name(ns, sizeof(ns));
	snprintf(name, sizeof(name), "%s%s%s", ns, *ns ? ":" : "", dev);
	rc = pin_instance_dir(role, &sel, must_exist, out, len, err, sizeof(err));
	return rc ? fail(rc, "%s", err) : 0;
}

void pin_remove_dir(const char *dir)
{
	char p[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(dir);

	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		unlink(p);
	}
	if (d)
		closedir(d);
	rmdir(dir);
	/* Parents (<role>, ubxdp) go too once empty; rmdir refuses otherwise. */
	snprintf(p, sizeof(p), "%s", dir);
	for (int i = 0; i < 2; i++) {
		char *slash = strrchr(p, '/');

		if (!slash)
			break;
		*slash = '\0';
		if (rmdir(p))
			break;
	}
}

/* mkdir that is content with an existing directory (procfs says EPERM, not EEXIST). */
static int mkdir_one(const char *p)
{
	struct stat st;

	if (!mkdir(p, 0700) || (!stat(p, &st) && S_ISDIR(st.st_mode)))
		return 0;
	return -1;
}

static int mkdir_walk(const char *dir)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s", dir);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir_one(p))
			return -1;
		*s = '/';
	}
	return mkdir_one(p);
}

int pin_mkdir_p(const char *dir)
{
	/* Another ubctl's detach removes a parent (<role>, ubxdp) the moment it is
	 * empty, which it is between our mkdir of it and of the next level: walk
	 * again. Each round that loses means another instance went away meanwhile. */
	for (int tries = 0; tries < 16; tries++) {
		if (!mkdir_walk(dir))
			return 0;
		if (errno != ENOENT)
			return -1;
	}
	return -1;
}
