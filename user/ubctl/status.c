// SPDX-License-Identifier: BSD-2-Clause
/*
 * ubctl status: every instance of every role this namespace can see, where
 * it runs and how, in the manner of `xdp-loader status` and `bpftool net`.
 *
 * Instances are found by their pins (<bpffs>/ubxdp/<role>/<name>/) and, for
 * the WPS egress, by the lock its process holds (/run/ubxdp/wps_egress/
 * <name>.lock: the holder in /proc/locks is the process). Where they are
 * attached is not taken from what ubctl meant to do but asked of the kernel
 * in the instance's network namespace: every device's XDP programs (native,
 * generic, offloaded; with the XDP link that holds one), tcx programs and
 * links, and ubxdp's clsact filters. An attachment is the instance's when its
 * program is pinned in the instance's directory, held by a link pinned there,
 * or uses one of the maps pinned there (the egress pins only its maps).
 * So the output holds whatever way a role attaches (legacy or links).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>

#include "wps/egress_run.h"
#include "io/run_link.h"
#include "ubctl/ubctl.h"
#include "wps/wps_pins.h"

#define MAX_IDS 32

/* One program attached to one device's hook. */
struct att {
	unsigned ifindex;
	char dev[IF_NAMESIZE];
	const char *hook;	/* "xdp", "tc_ingress", "tc_egress" */
	const char *mode;	/* xdp: native, generic, offload; tc: tcx, clsact */
	__u32 prog_id, link_id;
	__u32 tc_handle, tc_pref;	/* clsact only */
	char prog_name[BPF_OBJ_NAME_LEN];
	__u32 map_ids[MAX_IDS], nmaps;
};

/* What is attached in one network namespace. */
struct scan {
	dev_t dev;
	ino_t ino;
	char name[128];	/* its /run/netns name, "" for none */
	struct att *a;
	size_t n, cap;
};

static struct scan *scans;
static size_t nscans;

/* XDP links, every namespace's (their ifindex is the device's in the link's namespace). */
static struct { __u32 id, prog_id, ifindex; } *xlinks;
static size_t nxlinks;

static void xlinks_load(void)
{
	__u32 id = 0;
	size_t cap = 0;

	while (!bpf_link_get_next_id(id, &id)) {
		struct bpf_link_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_link_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.type == BPF_LINK_TYPE_XDP &&
		    !array_room(&xlinks, &cap, nxlinks, sizeof(*xlinks))) {
			xlinks[nxlinks].id = info.id;
			xlinks[nxlinks].prog_id = info.prog_id;
			xlinks[nxlinks++].ifindex = info.xdp.ifindex;
		}
		close(fd);
	}
}

static __u32 xdp_link_of(__u32 prog_id, unsigned ifindex)
{
	for (size_t i = 0; i < nxlinks; i++)
		if (xlinks[i].prog_id == prog_id && xlinks[i].ifindex == ifindex)
			return xlinks[i].id;
	return 0;
}

/* A program's name and the maps it uses. */
static void prog_details(struct att *t)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), ids[MAX_IDS];
	int fd = bpf_prog_get_fd_by_id(t->prog_id);

	if (fd < 0)
		return;
	info.nr_map_ids = MAX_IDS;
	info.map_ids = (__u64)(unsigned long)ids;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len)) {
		snprintf(t->prog_name, sizeof(t->prog_name), "%s", info.name);
		t->nmaps = info.nr_map_ids < MAX_IDS ? info.nr_map_ids : MAX_IDS;
		memcpy(t->map_ids, ids, t->nmaps * sizeof(ids[0]));
	}
	close(fd);
}

static void scan_add(struct scan *s, unsigned ifindex, const char *dev, const char *hook, const char *mode,
		     __u32 prog_id, __u32 link_id, __u32 handle, __u32 pref)
{
	struct att *t;

	if (!prog_id)
		return;
	if (array_room(&s->a, &s->cap, s->n, sizeof(*s->a)))
		return;
	t = &s->a[s->n++];
	memset(t, 0, sizeof(*t));
	t->ifindex = ifindex;
	snprintf(t->dev, sizeof(t->dev), "%s", dev);
	t->hook = hook;
	t->mode = mode;
	t->prog_id = prog_id;
	t->link_id = link_id;
	t->tc_handle = handle;
	t->tc_pref = pref;
	prog_details(t);
}

static void scan_dev(struct scan *s, unsigned ifindex, const char *dev)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	__u32 progs[64], links[64];

	if (!bpf_xdp_query((int)ifindex, 0, &q)) {
		scan_add(s, ifindex, dev, "xdp", "native", q.drv_prog_id, xdp_link_of(q.drv_prog_id, ifindex), 0, 0);
		scan_add(s, ifindex, dev, "xdp", "generic", q.skb_prog_id, xdp_link_of(q.skb_prog_id, ifindex), 0, 0);
		scan_add(s, ifindex, dev, "xdp", "offload", q.hw_prog_id, xdp_link_of(q.hw_prog_id, ifindex), 0, 0);
	}
	for (int eg = 0; eg < 2; eg++) {
		int n = run_link_tcx_query((int)ifindex, eg, progs, links, 64);

		for (int i = 0; i < n; i++)
			scan_add(s, ifindex, dev, eg ? "tc_egress" : "tc_ingress", "tcx", progs[i], links[i], 0, 0);
		/* The clsact filters the roles attach without links. */
		for (const struct ubctl_role *const *r = ubctl_roles; *r; r++) {
			const struct role_tc *tc = &(*r)->tc;
			LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)ifindex,
				    .attach_point = eg ? BPF_TC_EGRESS : BPF_TC_INGRESS);
			LIBBPF_OPTS(bpf_tc_opts, o, .handle = tc->handle, .priority = tc->pref);

			if (tc->handle && !bpf_tc_query(&hook, &o))
				scan_add(s, ifindex, dev, eg ? "tc_egress" : "tc_ingress", "clsact", o.prog_id, 0,
					 tc->handle, tc->pref);
		}
	}
}

/* What is attached in the network namespace we are in (asked once per namespace). */
static struct scan *scan_here(void)
{
	struct if_nameindex *ifs, *i;
	struct scan *s;
	struct stat st;

	if (stat("/proc/self/ns/net", &st))
		return NULL;
	for (size_t k = 0; k < nscans; k++)
		if (scans[k].dev == st.st_dev && scans[k].ino == st.st_ino)
			return &scans[k];
	s = realloc(scans, (nscans + 1) * sizeof(*s));
	if (!s)
		return NULL;
	scans = s;
	s = &scans[nscans++];
	memset(s, 0, sizeof(*s));
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	pin_netns_name(s->name, sizeof(s->name));
	ifs = if_nameindex();
	for (i = ifs; i && i->if_index; i++)
		scan_dev(s, i->if_index, i->if_name);
	if (ifs)
		if_freenameindex(ifs);
	return s;
}

/* ---- an instance's pins ----------------------------------------------------------- */

struct pin {
	char name[256];
	const char *kind;	/* prog, map, link, other */
	__u32 id;
};

struct inst {
	const char *role;	/* as the commands name it: "ub2e", "wps ingress", ... */
	char name[256], dir[PATH_MAX];
	struct pin *pins;
	size_t npins;
	__u32 progs[64], maps[64];
	size_t nprogs, nmaps;
	int pid;		/* the egress process, else 0 */
};

static const char *fd_kind(int fd)
{
	char p[64], l[64];
	ssize_t n;

	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	n = readlink(p, l, sizeof(l) - 1);
	if (n < 0)
		return "other";
	l[n] = '\0';
	/* A link made by BPF_LINK_CREATE is "bpf_link", one opened from a pin "bpf-link". */
	return !strcmp(l, "anon_inode:bpf-prog") ? "prog" : !strcmp(l, "anon_inode:bpf-map") ? "map" :
	       !strcmp(l, "anon_inode:bpf_link") || !strcmp(l, "anon_inode:bpf-link") ? "link" : "other";
}

static void id_add(__u32 *ids, size_t *n, __u32 id)
{
	if (id && *n < 64)
		ids[(*n)++] = id;
}

/* A pinned object's id (kind: fd_kind's); *prog_id: a program's own, a link's program's, else 0. */
static __u32 obj_id(int fd, const char *kind, __u32 *prog_id)
{
	union {
		struct bpf_prog_info p;
		struct bpf_map_info m;
		struct bpf_link_info l;
	} u;
	bool prog = !strcmp(kind, "prog"), link = !strcmp(kind, "link");
	__u32 len = prog ? sizeof(u.p) : link ? sizeof(u.l) : sizeof(u.m);

	*prog_id = 0;
	memset(&u, 0, sizeof(u));
	if (!strcmp(kind, "other") || bpf_obj_get_info_by_fd(fd, &u, &len))
		return 0;
	*prog_id = prog ? u.p.id : link ? u.l.prog_id : 0;
	return prog ? u.p.id : link ? u.l.id : u.m.id;
}

static void pins_read(struct inst *in)
{
	struct dirent *de;
	DIR *d = opendir(in->dir);
	size_t cap = 0;

	while (d && (de = readdir(d))) {
		char p[PATH_MAX + 300];
		struct pin *pn;
		__u32 prog_id;
		int fd;

		if (de->d_name[0] == '.')
			continue;
		if (array_room(&in->pins, &cap, in->npins, sizeof(*in->pins)))
			break;
		pn = &in->pins[in->npins++];
		snprintf(pn->name, sizeof(pn->name), "%s", de->d_name);
		pn->kind = "other";
		pn->id = 0;
		snprintf(p, sizeof(p), "%s/%s", in->dir, de->d_name);
		fd = bpf_obj_get(p);
		if (fd < 0)
			continue;
		pn->kind = fd_kind(fd);
		pn->id = obj_id(fd, pn->kind, &prog_id);
		id_add(in->progs, &in->nprogs, prog_id);
		/* Maps the programs use; the netns record is ubctl's, no program's. */
		if (!strcmp(pn->kind, "map") && strcmp(de->d_name, PIN_NETNS))
			id_add(in->maps, &in->nmaps, pn->id);
		close(fd);
	}
	if (d)
		closedir(d);
}

static bool has_id(const __u32 *ids, size_t n, __u32 id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

static bool owns(const struct inst *in, const struct att *t)
{
	if (has_id(in->progs, in->nprogs, t->prog_id))
		return true;
	for (__u32 i = 0; i < t->nmaps; i++)
		if (has_id(in->maps, in->nmaps, t->map_ids[i]))
			return true;
	return false;
}

/* ---- the egress process ------------------------------------------------------------- */

/* The process holding a lock on path (/proc/locks), or 0. */
static int lock_holder(const char *path)
{
	char line[256];
	struct stat st;
	int pid = 0;
	FILE *f;

	if (stat(path, &st) || !(f = fopen("/proc/locks", "r")))
		return 0;
	while (!pid && fgets(line, sizeof(line), f)) {
		unsigned maj, mnr;
		unsigned long long ino;
		int p;

		if (sscanf(line, "%*s %*s %*s %*s %d %x:%x:%llu", &p, &maj, &mnr, &ino) == 4 &&
		    ino == (unsigned long long)st.st_ino && maj == major(st.st_dev) && mnr == minor(st.st_dev))
			pid = p;
	}
	fclose(f);
	return pid;
}

static void add_threads(int pid, struct json_object *arr)
{
	char p[64];
	struct dirent *de;
	DIR *d;

	snprintf(p, sizeof(p), "/proc/%d/task", pid);
	d = opendir(p);
	while (d && (de = readdir(d))) {
		char sp[300], buf[1024], comm[64] = "?", *rp;
		int cpu = -1;
		unsigned rt = 0, policy = 0;
		FILE *f;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(sp, sizeof(sp), "/proc/%d/task/%s/stat", pid, de->d_name);
		f = fopen(sp, "r");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f) && (rp = strrchr(buf, ')'))) {
			char *lp = strchr(buf, '(');
			char *tok, *save;
			int field = 3;

			if (lp)
				snprintf(comm, sizeof(comm), "%.*s", (int)(rp - lp - 1), lp + 1);
			/* After "pid (comm)": field 3 is the state; 39 processor, 40 rt_priority, 41 policy. */
			for (tok = strtok_r(rp + 1, " ", &save); tok; tok = strtok_r(NULL, " ", &save), field++) {
				if (field == 39)
					cpu = atoi(tok);
				else if (field == 40)
					rt = (unsigned)atoi(tok);
				else if (field == 41)
					policy = (unsigned)atoi(tok);
			}
		}
		fclose(f);
		if (arr) {
			struct json_object *o = json_object_new_object();

			json_add_u64(o, "tid", (unsigned long long)atoll(de->d_name));
			json_add_str(o, "comm", comm);
			json_object_object_add(o, "cpu", json_object_new_int(cpu));
			json_add_str(o, "policy", policy == 1 ? "fifo" : policy == 2 ? "rr" : "other");
			json_add_u64(o, "rt_priority", rt);
			json_object_array_add(arr, o);
		} else {
			printf("    thread %-8s %-16s cpu %-3d %s", de->d_name, comm, cpu,
			       policy == 1 ? "fifo" : policy == 2 ? "rr" : "other");
			if (rt)
				printf(" %u", rt);
			putchar('\n');
		}
	}
	if (d)
		closedir(d);
}

/* ---- output --------------------------------------------------------------------------- */

/*
 * Into the instance's network namespace: the egress process's; the one
 * recorded at attach; else (WPS ingress and boundary, named [NETNS:]DEV)
 * /run/netns/NETNS, or ours for a name without one.
 */
static int enter_instance_netns(const struct inst *in, int *saved, char *err, size_t errlen)
{
	char p[PATH_MAX + 300];
	const char *colon = strchr(in->name, ':');
	struct stat st;

	*saved = -1;
	if (in->pid)
		snprintf(p, sizeof(p), "/proc/%d/ns/net", in->pid);
	else if (snprintf(p, sizeof(p), "%s/%s", in->dir, PIN_NETNS), !stat(p, &st))
		return netns_enter_instance(in->dir, saved, err, errlen);
	else if (colon)
		snprintf(p, sizeof(p), "/run/netns/%.*s", (int)(colon - in->name), in->name);
	else
		return 0;
	if (netns_enter_file(p, saved)) {
		snprintf(err, errlen, "cannot enter network namespace %s: %s", p, strerror(errno));
		return -1;
	}
	return 0;
}

static int pin_cmp(const void *a, const void *b)
{
	return strcmp(((const struct pin *)a)->name, ((const struct pin *)b)->name);
}

static void show(struct inst *in, struct json_object *arr)
{
	struct json_object *o = NULL, *ja = NULL, *jp = NULL;
	char err[512], ns[160] = "";
	struct scan *s = NULL;
	int saved = -1, entered;
	size_t nat = 0;

	pins_read(in);
	if (in->npins)
		qsort(in->pins, in->npins, sizeof(*in->pins), pin_cmp);
	entered = enter_instance_netns(in, &saved, err, sizeof(err));
	if (!entered)
		s = scan_here();
	netns_leave(saved);
	if (s)
		snprintf(ns, sizeof(ns), "%s", s->name);
	if (arr) {
		o = json_object_new_object();
		json_add_str(o, "role", in->role);
		json_add_str(o, "instance", in->name);
		json_add_str(o, "pin_path", pin_display(in->dir));
		json_object_object_add(o, "netns", s && *ns ? json_object_new_string(ns) : NULL);
		json_object_object_add(o, "netns_ino", s ? json_object_new_uint64((unsigned long long)s->ino) : NULL);
		if (!s)
			json_add_str(o, "error", err);
		if (in->pid)
			json_add_u64(o, "pid", (unsigned long long)in->pid);
		ja = json_object_new_array();
		jp = json_object_new_array();
		json_object_object_add(o, "attachments", ja);
		json_object_object_add(o, "pins", jp);
		json_object_array_add(arr, o);
	} else {
		printf("%s %s\n", in->role, in->name);
		printf("  pinned at %s\n", pin_display(in->dir));
		if (s)
			printf("  netns %s (net:[%llu])\n", *ns ? ns : "(no name: the initial or an unnamed one)",
			       (unsigned long long)s->ino);
		else
			printf("  netns: %s\n", err);
		if (in->pid)
			printf("  process %d\n", in->pid);
	}
	for (size_t i = 0; s && i < s->n; i++) {
		const struct att *t = &s->a[i];

		if (!owns(in, t))
			continue;
		nat++;
		if (ja) {
			struct json_object *a = json_object_new_object();

			json_add_str(a, "dev", t->dev);
			json_add_u64(a, "ifindex", t->ifindex);
			json_add_str(a, "hook", t->hook);
			json_add_str(a, "mode", t->mode);
			json_add_u64(a, "prog_id", t->prog_id);
			json_add_str(a, "prog_name", t->prog_name);
			json_object_object_add(a, "link_id", t->link_id ? json_object_new_uint64(t->link_id) : NULL);
			if (!strcmp(t->mode, "clsact")) {
				json_add_u64(a, "tc_handle", t->tc_handle);
				json_add_u64(a, "tc_pref", t->tc_pref);
			}
			json_object_array_add(ja, a);
			continue;
		}
		printf("  %-16s %-10s %-8s prog %-6u %-16s", t->dev, t->hook, t->mode, t->prog_id, t->prog_name);
		if (t->link_id)
			printf(" link %u", t->link_id);
		else if (!strcmp(t->mode, "clsact"))
			printf(" handle %#x pref %#x", t->tc_handle, t->tc_pref);
		putchar('\n');
	}
	if (!ja && s && !nat)
		printf("  attached nowhere\n");
	for (size_t i = 0; i < in->npins; i++) {
		if (jp) {
			struct json_object *p = json_object_new_object();

			json_add_str(p, "name", in->pins[i].name);
			json_add_str(p, "kind", in->pins[i].kind);
			json_object_object_add(p, "id", in->pins[i].id ? json_object_new_uint64(in->pins[i].id) : NULL);
			json_object_array_add(jp, p);
		} else {
			/* Four a line: "  pins: NAME KIND ID, ..." */
			printf("%s%s %s %u", !i ? "  pins: " : i % 4 ? ", " : ",\n        ", in->pins[i].name,
			       in->pins[i].kind, in->pins[i].id);
		}
	}
	if (!jp && in->npins)
		putchar('\n');
	if (in->pid) {
		struct json_object *jt = o ? json_object_new_array() : NULL;

		if (o)
			json_object_object_add(o, "threads", jt);
		add_threads(in->pid, jt);
	}
	free(in->pins);
	in->pins = NULL;
	in->npins = 0;
}

/* ---- the command ------------------------------------------------------------------------ */

/* The instances pinned under base (or `only`). Returns how many it showed. */
/* --stats: the counters of the instance just shown, after its status (text), or
 * as "stats" of its JSON object (the last of arr): what `ubctl stats` shows of it. */
static void show_counters(const struct ubctl_role *r, const char *name, struct json_object *arr)
{
	struct json_object *tmp, *list, *inst;
	size_t n;

	if (!arr) {
		role_stats(r, NULL, name);
		return;
	}
	tmp = json_object_new_object();
	n = json_object_array_length(arr);
	if (role_stats(r, tmp, name) == 1 && json_object_object_get_ex(tmp, r->key, &list) &&
	    (inst = json_object_array_get_idx(list, 0)) && n)
		json_object_object_add(json_object_array_get_idx(arr, n - 1), "stats", json_object_get(inst));
	json_object_put(tmp);
}

static int show_pinned(const struct ubctl_role *r, const char *base, const char *only, struct json_object *arr,
		       bool stats)
{
	char (*names)[256];
	struct inst in;
	int shown = 0, n = pin_list_instances(r->pin_dir, &names);

	for (int i = 0; i < n; i++) {
		if (only && strcmp(only, names[i]))
			continue;
		memset(&in, 0, sizeof(in));
		in.role = r->name;
		snprintf(in.name, sizeof(in.name), "%s", names[i]);
		snprintf(in.dir, sizeof(in.dir), "%s/%s", base, names[i]);
		show(&in, arr);
		if (stats)
			show_counters(r, names[i], arr);
		shown++;
	}
	free(names);
	return shown;
}

/* The instances that are processes, found by the lock each holds for its name (or `only`). */
static int show_running(const struct ubctl_role *r, const char *base, const char *only, struct json_object *arr,
			bool stats)
{
	struct dirent **de = NULL;
	struct inst in;
	int shown = 0, m = scandir(r->lock_dir, &de, NULL, alphasort);

	for (int i = 0; i < m; i++) {
		size_t len = strlen(de[i]->d_name);
		char lock[PATH_MAX];

		if (len > 5 && !strcmp(de[i]->d_name + len - 5, ".lock") &&
		    (!only || (strlen(only) == len - 5 && !strncmp(only, de[i]->d_name, len - 5)))) {
			memset(&in, 0, sizeof(in));
			snprintf(lock, sizeof(lock), "%s/%s", r->lock_dir, de[i]->d_name);
			in.pid = lock_holder(lock);
			in.role = r->name;
			snprintf(in.name, sizeof(in.name), "%.*s", (int)(len - 5), de[i]->d_name);
			snprintf(in.dir, sizeof(in.dir), "%s/%s", base, in.name);
			if (in.pid) {	/* else a lock left behind: nothing runs */
				show(&in, arr);
				if (stats)
					show_counters(r, in.name, arr);
				shown++;
			}
		}
		free(de[i]);
	}
	free(de);
	return shown;
}

struct status_args {
	bool json, stats;
	const char *only;
};

static int status_opt(void *ctx, const struct optab *o, const char *val)
{
	struct status_args *a = ctx;

	if (o->key == 'j')
		a->json = true;
	else if (o->key == 's')
		a->stats = true;
	else
		a->only = val;
	return 0;
}

static const struct optab status_opts[] = {
	UBCTL_OPT_JSON('j'),
	{ "name", "NAME", "only the instance NAME", 'n', 0 },
	{ "stats", NULL, "each instance's counters too, as ubctl stats shows them", 's', OPTAB_SHORT('s') },
	{ 0 },
};

static int cmd_status(int argc, char **argv);

static const struct optab_cmd status_cmd = {
	.path = "ubctl status",
	.summary = "every instance of every role: devices, programs, links, pins, netns",
	.synopsis = "[-j|--json] [-s|--stats] [--name NAME]",
	.about = "Every UB2E switch, WPS ingress and boundary filter pinned on this bpffs and\n"
		 "every running WPS egress process (found by the lock it holds under\n"
		 "/run/ubxdp/wps_egress/), with what the kernel says of them in their network\n"
		 "namespace: each device and hook (xdp, tc_ingress, tc_egress) a program of the\n"
		 "instance is attached to, the mode (native, generic or offload XDP; a tcx link\n"
		 "or a clsact filter), the program's id and name and the link's id; then the\n"
		 "instance's pins with their kinds and ids, and for the egress its process and\n"
		 "threads (CPU, scheduling). Program and link ids are bpftool's (bpftool net,\n"
		 "bpftool prog show id N).",
	.opts = status_opts,
	.run = cmd_status,
};

const struct optab_cmd *const status_cmds[] = { &status_cmd, NULL };

static int cmd_status(int argc, char **argv)
{
	struct status_args args = { 0 };
	struct json_object *all = NULL, *arr = NULL;
	char base[PATH_MAX], err[256];
	int shown = 0, rc = optab_parse(&status_cmd, argc, argv, status_opt, &args, NULL);

	if (rc)
		return OPTAB_STATUS(rc);
	if (args.json) {
		all = json_object_new_object();
		arr = json_object_new_array();
		json_object_object_add(all, "instances", arr);
	}
	xlinks_load();
	for (const struct ubctl_role *const *r = ubctl_roles; *r; r++) {
		if (!(*r)->pin_dir)
			continue;
		if (pin_role_dir((*r)->pin_dir, base, sizeof(base), err, sizeof(err))) {
			if ((*r)->lock_dir)	/* a process's instance shows its pins: none without bpffs */
				continue;
			json_object_put(all);
			return fail(EXIT_FAIL, "status: %s", err);
		}
		shown += (*r)->lock_dir ? show_running(*r, base, args.only, arr, args.stats)
					: show_pinned(*r, base, args.only, arr, args.stats);
	}
	if (args.only && !shown) {
		json_object_put(all);
		return fail(UB_EXIT_NOTFOUND, "status: no instance named '%s'", args.only);
	}
	if (all)
		json_print(all);
	else if (!shown)
		printf("no ubxdp instance is attached or running\n");
	return 0;
}
