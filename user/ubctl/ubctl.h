/* SPDX-License-Identifier: BSD-2-Clause */
/* ubctl internals shared by the subcommands. */
#ifndef UBCTL_H
#define UBCTL_H

#include <stdbool.h>
#include <stddef.h>

extern bool ubctl_verbose;

/* One clear line on stderr, prefixed "ubctl: ". Returns the exit status to use. */
int fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void warnx_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define EXIT_USAGE	2
#define EXIT_FAIL	1

/* ---- pin.c: where instances live on bpffs -------------------------------- */

/*
 * The bpffs to pin on: /sys/fs/bpf when it is one; under `ip netns exec`
 * (a private /sys without bpffs) the host's, through /proc/1/root, so that
 * pins outlive the command. Returns 0 or -1 with err set.
 */
int pin_bpffs_root(char *out, size_t len, char *err, size_t errlen);

/* How a pin path reads to the user: without the /proc/PID/root detour. */
const char *pin_display(const char *path);

/* Name of the current network namespace in /run/netns, "" for the initial one. */
void pin_netns_name(char *out, size_t len);

/* Instance selection shared by every subcommand of a role. */
struct instance_sel {
	const char *name;	/* --name */
	const char *pin_path;	/* --pin-path: the instance directory itself */
	const char *ub_dev;	/* --ub-dev/--ip-dev give the default name */
	const char *ip_dev;
};

/* <bpffs>/ubxdp/<role> */
int pin_role_dir(const char *role, char *out, size_t len, char *err, size_t errlen);
/* Resolve the instance directory. `must_exist`: pick the only instance when none is named. */
int pin_instance_dir(const char *role, const struct instance_sel *sel, bool must_exist,
		     char *out, size_t len, char *err, size_t errlen);
/* List instance directories of a role; returns count (<= max) or -1. */
int pin_list_instances(const char *role, char names[][256], int max);
/* mkdir -p on bpffs. Returns 0 or -1 with errno. */
int pin_mkdir_p(const char *dir);
/* Remove an instance directory and its now-empty parents up to <bpffs>. */
void pin_remove_dir(const char *dir);

/* ---- commands ---------------------------------------------------------------- */
int cmd_ub2e(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_wps_egress(int argc, char **argv);	/* argv[0] = "egress" */
int wps_egress_stats_emit(bool json, const char *only);	/* instances shown */

#endif
