// SPDX-License-Identifier: BSD-2-Clause
/*
 * ubctl: the roles that outlive ubctl (UB2E switch, WPS ingress and boundary)
 * attach through BPF links made by user/io/run_link.c and pinned in the
 * instance's directory: the pin keeps the link, so the program stays after
 * ubctl exits, and detach takes the link off (BPF_LINK_DETACH) before the pin
 * goes. A link pin's file name starts with LINK_PIN_PREFIX, so detach finds
 * every one of them without knowing which the attach made.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "io/run_link.h"
#include "ubctl/ubctl.h"

static int pin_fd(int fd, const char *dir, const char *file)
{
	char p[PATH_MAX];
	int rc;

	if (fd < 0)
		return fd;
	snprintf(p, sizeof(p), "%s/%s", dir, file);
	rc = bpf_obj_pin(fd, p) ? -errno : 0;
	/* Pinned, the link lives on; not pinned, closing it detaches the program. */
	close(fd);
	return rc;
}

int link_xdp_pinned(int prog_fd, unsigned ifindex, bool generic, const char *dir, const char *file)
{
	return pin_fd(run_link_xdp(prog_fd, (int)ifindex, generic), dir, file);
}

int link_tcx_pinned(int prog_fd, unsigned ifindex, bool egress, const char *alone, const char *dir,
		    const char *file)
{
	return pin_fd(run_link_tcx(prog_fd, (int)ifindex, egress, alone), dir, file);
}

int link_detach_pinned(const char *dir, int *found)
{
	size_t n = strlen(LINK_PIN_PREFIX);
	char p[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(dir);
	int failures = 0;

	if (found)
		*found = 0;
	while (d && (de = readdir(d))) {
		int fd;

		if (strncmp(de->d_name, LINK_PIN_PREFIX, n))
			continue;
		if (found)
			(*found)++;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		fd = bpf_obj_get(p);
		/* A link whose device went is detached already: BPF_LINK_DETACH says 0. */
		if (fd < 0 || bpf_link_detach(fd)) {
			warnx_("detach the link pinned at %s: %s", pin_display(p), strerror(errno));
			failures++;
		}
		if (fd >= 0)
			close(fd);
	}
	if (d)
		closedir(d);
	return failures;
}

bool xdp_is_dispatcher(unsigned prog_id)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(prog_id);
	bool is;

	if (fd < 0)
		return false;
	memset(&info, 0, sizeof(info));
	/* libxdp names it so (xdp-tools' lib/libxdp/xdp-dispatcher.c). */
	is = !bpf_obj_get_info_by_fd(fd, &info, &len) && !strncmp(info.name, "xdp_dispatcher", sizeof(info.name));
	close(fd);
	return is;
}
