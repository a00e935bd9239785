// SPDX-License-Identifier: BSD-2-Clause
/*
 * Finding (or making) the bpffs that instances are pinned on.
 *
 * /sys/fs/bpf is used when it is a bpffs. Otherwise ubctl mounts one, as
 * bpftool and iproute2 do, and says so once (the next run finds it mounted).
 * Under `ip netns exec` ubctl runs in a throw-away mount namespace with a
 * fresh /sys: a bpffs mounted there would vanish with the command, and the
 * switch with nothing left to manage it. So the bpffs is taken from, or
 * mounted in, the mount namespace of the nearest ancestor outside ours (the
 * shell that ran `ip netns exec`) and reached through /proc/PID/root.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "ubctl/ubctl.h"

#define BPF_FS_MAGIC 0xcafe4a11
#define BPFFS "/sys/fs/bpf"

static bool is_bpffs(const char *path)
{
	struct statfs st;

	return statfs(path, &st) == 0 && (unsigned long)st.f_type == BPF_FS_MAGIC;
}

static pid_t parent_of(pid_t pid)
{
	char p[64], buf[512], *rp;
	int ppid = 0;
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	f = fopen(p, "r");
	if (!f)
		return 0;
	/* "pid (comm) state ppid": comm may hold spaces, so parse after the last ')'. */
	if (fgets(buf, sizeof(buf), f) && (rp = strrchr(buf, ')')))
		sscanf(rp + 1, " %*c %d", &ppid);
	fclose(f);
	return ppid;
}

static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return !stat(a, &sa) && !stat(b, &sb) && sa.st_ino == sb.st_ino && sa.st_dev == sb.st_dev;
}

/* The nearest ancestor in another mount namespace, or 0. PID 1 counts: in a
 * PID namespace the shell itself may be PID 1. */
static pid_t outer_ancestor(void)
{
	char p[64];

	for (pid_t pid = parent_of(getpid()); pid > 0; pid = parent_of(pid)) {
		snprintf(p, sizeof(p), "/proc/%d/ns/mnt", (int)pid);
		if (access(p, F_OK))
			return 0;	/* cannot see it (other PID namespace, no /proc) */
		if (!same_file(p, "/proc/self/ns/mnt"))
			return pid;
		if (pid == 1)
			break;
	}
	return 0;
}

static int mount_here(char *err, size_t errlen)
{
	if (mount("bpf", BPFFS, "bpf", 0, "mode=0700")) {
		snprintf(err, errlen, "no bpffs at " BPFFS " and mounting one failed: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* Mount a bpffs at /sys/fs/bpf in the mount namespace of pid, then come back.
 * setns() moves the working directory to the namespace's root: keep it. */
static int mount_in(pid_t pid, char *err, size_t errlen)
{
	char p[64];
	int self = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC), cwd = open(".", O_RDONLY | O_CLOEXEC), other;
	int rc = -1;

	snprintf(p, sizeof(p), "/proc/%d/ns/mnt", (int)pid);
	other = open(p, O_RDONLY | O_CLOEXEC);
	if (self < 0 || other < 0) {
		snprintf(err, errlen, "no bpffs at " BPFFS " and no way into PID %d's mount namespace: %s",
			 (int)pid, strerror(errno));
		goto out;
	}
	if (setns(other, CLONE_NEWNS)) {
		snprintf(err, errlen, "no bpffs at " BPFFS " and cannot enter PID %d's mount namespace: %s",
			 (int)pid, strerror(errno));
		goto out;
	}
	rc = mount_here(err, errlen);
	if (setns(self, CLONE_NEWNS)) {
		/* Stranded in another mount namespace: nothing sensible can follow. */
		snprintf(err, errlen, "cannot return to our own mount namespace: %s", strerror(errno));
		rc = -1;
	}
	if (cwd >= 0 && fchdir(cwd))
		warnx_("cannot return to the working directory: %s", strerror(errno));
out:
	if (self >= 0)
		close(self);
	if (other >= 0)
		close(other);
	if (cwd >= 0)
		close(cwd);
	return rc;
}

int pin_bpffs_root(char *out, size_t len, char *err, size_t errlen)
{
	static char cached[PATH_MAX];
	char p[PATH_MAX];
	pid_t anc;

	if (*cached) {
		snprintf(out, len, "%s", cached);
		return 0;
	}
	if (is_bpffs(BPFFS)) {
		snprintf(cached, sizeof(cached), BPFFS);
	} else if ((anc = outer_ancestor())) {
		snprintf(p, sizeof(p), "/proc/%d/root" BPFFS, (int)anc);
		if (!is_bpffs(p)) {
			if (mount_in(anc, err, errlen))
				return -1;
			if (!is_bpffs(p)) {
				snprintf(err, errlen, "mounted a bpffs in PID %d's mount namespace but %s is not one", (int)anc, p);
				return -1;
			}
			fprintf(stderr, "ubctl: mounted bpffs at " BPFFS " (in the mount namespace of PID %d, so pins outlive this command)\n",
				(int)anc);
		}
		snprintf(cached, sizeof(cached), "%s", p);
	} else {
		if (mount_here(err, errlen))
			return -1;
		fprintf(stderr, "ubctl: mounted bpffs at " BPFFS "\n");
		snprintf(cached, sizeof(cached), BPFFS);
	}
	snprintf(out, len, "%s", cached);
	return 0;
}
