/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A role described once (pins, programs, TC hooks, counters, stats), so that
 * the code every role needs walks the description instead of each role
 * writing its own loop: pinning at attach (role_pin), its clsact filters on
 * and off a port (role_tc_attach, role_tc_detach, role_detach_tc), removing
 * an instance's pins (role_unpin), `ubctl status` (where its instances are,
 * which clsact filters are its) and `ubctl stats` (role_stats: its counters,
 * then what more it shows). A role's file defines its description and names
 * it with UBCTL_ROLE in commands.def, in the order status and stats show them.
 */
#ifndef UBCTL_ROLE_H
#define UBCTL_ROLE_H

#include <stdbool.h>
#include <stddef.h>

#include <linux/types.h>

struct json_object;

/* A map or program of a role's skeleton, pinned at attach as `file`. */
struct role_pin {
	const char *file;
	size_t off;	/* offsetof its struct bpf_map * / struct bpf_program * in the skeleton */
	bool prog;
};

#define ROLE_MAP(skel, file, name)	{ file, offsetof(struct skel, maps.name), false }
#define ROLE_PROG(skel, file, name)	{ file, offsetof(struct skel, progs.name), true }

/* Where a role's TC programs sit on a port without tcx (kernels before 6.6,
 * instances an older ubctl attached): clsact filters of its own identity, so
 * that detach and status find its filters and no one else's. */
struct role_tc {
	__u32 handle, pref;
	bool ingress, egress;	/* the port's hooks it attaches to (role_detach_tc) */
};

struct ubctl_role {
	const char *name;	/* as commands and ubctl status name it: "ub2e", "wps ingress" */
	const char *key;	/* its key in ubctl stats --json: "ub2e", "wps_ingress" */
	const char *pin_dir;	/* its instances under <bpffs>/ubxdp/; NULL: it pins nothing */
	/* Instances that are processes (the WPS egress): each holds a lock on
	 * lock_dir/NAME.lock while it runs; its pins, if any, under pin_dir/NAME. */
	const char *lock_dir;
	const struct role_pin *pins;	/* what role_pin pins, { 0 }-ended */
	struct role_tc tc;		/* handle 0: no clsact filter */
	/* Its per-CPU counter array (pin stats_pin, ncounters of them), as ubctl stats shows them. */
	const char *stats_pin;
	unsigned ncounters;
	const char *(*counter_name)(unsigned id);
	/* What ubctl stats shows of an instance after its counters: text when inst is NULL. */
	void (*stats_more)(const char *dir, struct json_object *inst);
	/* Instead of the walk over pinned counters: a role whose stats are its processes'. */
	int (*stats)(struct json_object *out, const char *only);
};

/* Every role, in commands.def's order, NULL-ended. */
extern const struct ubctl_role *const ubctl_roles[];

/* Pin every entry of r->pins of skel in dir; a program not loaded (autoload off:
 * a variant not chosen) is skipped. 0, or the exit status (said). */
int role_pin(const struct ubctl_role *r, const void *skel, const char *dir);
/* An instance's pins removed, its links detached first (an attach undone). */
void role_unpin(const char *dir);

/*
 * prog_fd on ifindex's TC ingress or egress: a tcx link pinned at dir/file
 * where the kernel has tcx (*tcx true), else a clsact filter of r->tc (clsact
 * made if missing). 0 or -errno.
 */
int role_tc_attach(const struct ubctl_role *r, int prog_fd, unsigned ifindex, bool egress, const char *dir,
		   const char *file, bool *tcx);
/*
 * r's clsact filter off ifindex's hook: 1 taken off, 0 none there (or, with
 * prog_fd >= 0, another program than prog_fd's in its place: left alone, said),
 * -errno failed.
 */
int role_tc_detach(const struct ubctl_role *r, unsigned ifindex, bool egress, int prog_fd);
/*
 * r's programs off DEV (ifindex): the links pinned in dir, or where there
 * are none its clsact filters on the hooks r->tc names. 0, or the exit
 * status (said: the pins are kept).
 */
int role_detach_tc(const struct ubctl_role *r, const char *dir, unsigned ifindex, const char *dev);

/* ubctl stats of r's instances (or `only`): text when out is NULL, else under
 * out's r->key. Returns how many it showed. */
int role_stats(const struct ubctl_role *r, struct json_object *out, const char *only);

/* The program id of a program's fd, 0 if it cannot be told. */
__u32 prog_id_of_fd(int fd);

#endif
