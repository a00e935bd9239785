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

#include "lib/exit_codes.h"
#include "lib/optab.h"

#define EXIT_USAGE	UB_EXIT_USAGE
#define EXIT_FAIL	UB_EXIT_FAIL

/* ---- pin.c: where instances live on bpffs -------------------------------- */

/*
 * bpffs.c: the bpffs to pin on. /sys/fs/bpf when it is one; under `ip netns
 * exec` (a private /sys without bpffs) the one of the shell that ran it,
 * through /proc/PID/root, so that pins outlive the command. Where there is
 * none, ubctl mounts it (saying so once). Returns 0 or -1 with err set.
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
/* Resolve the instance directory. `must_exist`: pick the only instance when none is named.
 * Returns 0, or the exit status (not found, usage, ...) with one line in err. */
int pin_instance_dir(const char *role, const struct instance_sel *sel, bool must_exist,
		     char *out, size_t len, char *err, size_t errlen);
/* The directory of a role's instance on DEV, named [NETNS:]DEV (WPS ingress, boundary):
 * 0, or the exit status (said). */
int pin_dev_instance_dir(const char *role, const char *dev, bool must_exist, char *out, size_t len);
/* The instance directories of a role, sorted, in *names (malloc'd, free it); their count or -1. */
int pin_list_instances(const char *role, char (**names)[256]);
/* Room for one more element in *arr (n used of *cap, each elem bytes; grown by doubling). 0 or -1. */
int array_room(void *arr, size_t *cap, size_t n, size_t elem);
/* mkdir -p on bpffs. Returns 0 or -1 with errno. */
int pin_mkdir_p(const char *dir);
/* The object pinned at dir/file opened: its fd, or -1 with errno. */
int pin_open(const char *dir, const char *file);
/* Remove an instance directory and its now-empty parents up to <bpffs>. */
void pin_remove_dir(const char *dir);

/* ---- link.c: BPF links pinned in an instance's directory ------------------ */

/* File names of link pins start so (link_xdp_ub, link_tc_ingress_ip, ...). */
#define LINK_PIN_PREFIX	"link_"
/* An XDP link (native, or generic) on ifindex, pinned at dir/file. 0 or -errno
 * (-EBUSY/-EEXIST: the hook has a program; nothing left attached on failure). */
int link_xdp_pinned(int prog_fd, unsigned ifindex, bool generic, const char *dir, const char *file);
/* A tcx link (run_link_tcx(): alone, -EOPNOTSUPP without tcx), pinned likewise. */
int link_tcx_pinned(int prog_fd, unsigned ifindex, bool egress, const char *alone, const char *dir,
		    const char *file);
/* Detach (BPF_LINK_DETACH) every link pinned in dir, pins left for
 * pin_remove_dir; *found (if not NULL): how many there were. Returns the
 * failures, each warned in one line. */
int link_detach_pinned(const char *dir, int *found);
/* How TC programs were attached, for the attach line. */
#define LINK_TC_WAY(tcx)	((tcx) ? "tcx links" : "clsact filters (this kernel has no tcx: before 6.6)")
/* Is XDP program prog_id libxdp's dispatcher (xdp-loader's)? */
bool xdp_is_dispatcher(unsigned prog_id);

/* ---- netns.c: the network namespace an instance's ports live in ------------ */

/* Pin name of the record, beside the instance's maps. */
#define PIN_NETNS "netns"
/* Record the current network namespace as the instance's (pinned in dir). */
int netns_record(const char *dir, char *err, size_t errlen);
/*
 * Enter the instance's network namespace when it is not ours. *saved is -1
 * or a handle for netns_leave(). Returns 0, or -1 with one line in err
 * (the namespace cannot be found or entered: nothing may be done).
 */
int netns_enter_instance(const char *dir, int *saved, char *err, size_t errlen);
void netns_leave(int saved);
/* Enter the network namespace of a file (/run/netns/NAME, /proc/PID/ns/net); *saved as above. 0 or -1 with errno. */
int netns_enter_file(const char *path, int *saved);

/* The first libbpf warning of this run ("" if none): its own words for a load failure. */
const char *ubctl_libbpf_error(void);

/* json.c: --json output with json-c. json_print prints one line and frees o. */
#include <json-c/json.h>
void json_print(struct json_object *o);
void json_add_str(struct json_object *o, const char *key, const char *val);
void json_add_u64(struct json_object *o, const char *key, unsigned long long val);

/* warn.c: one line each for forwarding off (IPv4, IPv6) and rx VLAN offload on the IP port. */
/* vlan_meta: the switch reads stripped tags (ub2e_to_ub_vlanmeta); generic: generic XDP. */
void ub2e_warn_host(const char *ub_dev, const char *ip_dev, bool vlan_meta, bool generic);
/* Does dev strip VLAN tags into offload metadata (ethtool rx-vlan-offload)? */
bool ub2e_rx_vlan_offload(const char *dev);
/* Does the kernel have bpf_xdp_metadata_rx_vlan_tag() (6.8+)? */
bool ub2e_have_rx_vlan_kfunc(void);

/* ---- commands (one line each in commands.def) -------------------------------- */

#include "ubctl/role.h"
#define UBCTL_CMDS(array) extern const struct optab_cmd *const array[];
#define UBCTL_ROLE(desc) extern const struct ubctl_role desc;
#include "ubctl/commands.def"
#undef UBCTL_ROLE
#undef UBCTL_CMDS

/* Options several commands share, for their tables. */
#define UBCTL_OPT_JSON(key) { "json", NULL, "print JSON, one object, instead of text", key, OPTAB_SHORT('j') }

/* caqm.c: ubctl run under the name ubcaqm (its alias: the same command, its own registry). */
int caqm_alias_main(int argc, char **argv);

/* wps_ingress.c: an ingress instance's `live` map mapped (NULL on failure), and unmapped. */
struct wps_in_live;
struct wps_in_live *wps_live_map(int fd);
void wps_live_unmap(struct wps_in_live *lv);
/* wps_ingress.c: the pin directory of DEV's ingress instance (it must exist); -1 (said) if none. */
int wps_ingress_dir(const char *dev, char *out, size_t len);
/* wps_watch.c: ubctl wps ingress watch, and the neighbour table as path add asks it. */
extern const struct optab_cmd wps_watch_cmd;
struct wps_nh_seen;
struct nl;
int wps_neigh_get(struct nl *rt, unsigned char family, unsigned ifindex, const unsigned char *addr,
		  struct wps_nh_seen *s);
int wps_neigh_ask(struct nl *rt, unsigned char family, unsigned ifindex, const unsigned char *addr, int act);

#endif
