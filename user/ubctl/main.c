// SPDX-License-Identifier: BSD-2-Clause
/* ubctl: attach ubxdp roles to interfaces and manage their pinned maps. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "ubctl/ubctl.h"

#ifndef UBXDP_VERSION
#define UBXDP_VERSION "unknown"
#endif

bool ubctl_verbose;

int fail(int status, const char *fmt, ...)
{
	va_list ap;

	fputs("ubctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return status;
}

void warnx_(const char *fmt, ...)
{
	va_list ap;

	fputs("ubctl: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- the command tree ------------------------------------------------------ */

static int run_help(int argc, char **argv);
static int run_version(int argc, char **argv);

static const struct optab_cmd ubctl_cmd = {
	.path = "ubctl",
	.summary = "attach and manage the ubxdp UnifiedBus XDP programs",
	.synopsis = "[-v] COMMAND [SUBCOMMAND] [OPTIONS]\nhelp [COMMAND [SUBCOMMAND...]]\n--version",
	.about = "Instances are pinned under /sys/fs/bpf/ubxdp/<role>/<name>/ (bpffs is mounted\n"
		 "there when missing). -v, before the command, shows libbpf's log and the\n"
		 "verifier's. `ubctl COMMAND ... --help` is the help of any (sub)command.",
};

static const struct optab_cmd help_cmd = {
	.path = "ubctl help",
	.summary = "the help of a command or subcommand (as COMMAND ... --help)",
	.synopsis = "[COMMAND [SUBCOMMAND...]]",
	.flags = OPTAB_ARGS,
	.run = run_help,
};

static const struct optab version_opts[] = { { 0 } };

static const struct optab_cmd version_cmd = {
	.path = "ubctl version",
	.summary = "ubctl's version and libbpf's (also ubctl --version)",
	.synopsis = "",
	.opts = version_opts,
	.run = run_version,
};

static const struct optab_cmd *const main_cmds[] = { &ubctl_cmd, &help_cmd, &version_cmd, NULL };

/* Every command, in the order their man page sections come: commands.def's. */
static const struct optab_cmd *registry[256];

static void registry_fill(void)
{
	static const struct optab_cmd *const *const parts[] = {
		main_cmds,
#define UBCTL_CMDS(array) array,
#include "ubctl/commands.def"
#undef UBCTL_CMDS
	};
	size_t n = 0;

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		for (const struct optab_cmd *const *c = parts[i]; *c && n + 1 < sizeof(registry) / sizeof(registry[0]); c++)
			registry[n++] = *c;
	registry[n] = NULL;
	optab_set_registry(registry);
}

static int run_help(int argc, char **argv)
{
	const struct optab_cmd *c;
	char path[256] = "ubctl";
	int n, rc = optab_parse(&help_cmd, argc, argv, NULL, NULL, &n);

	if (rc)
		return rc < 0 ? 0 : rc;
	for (int i = 1; i <= n; i++)
		snprintf(path + strlen(path), sizeof(path) - strlen(path), " %s", argv[i]);
	c = optab_cmd_find(registry, path);
	if (!c)
		return fail(EXIT_USAGE, "help: no command '%s' (see ubctl help)", path + 6);
	optab_help(c, stdout);
	return 0;
}

static int run_version(int argc, char **argv)
{
	int rc = optab_parse(&version_cmd, argc, argv, NULL, NULL, NULL);

	if (rc)
		return rc < 0 ? 0 : rc;
	printf("ubctl (ubxdp) %s, libbpf %s\n", UBXDP_VERSION, libbpf_version_string());
	return 0;
}

/* libbpf's chatter (and the verifier log) only with -v; its warnings are kept
 * for load failures to quote (ubctl_libbpf_error). */
static char libbpf_last[512];

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	va_list copy;

	if (level == LIBBPF_WARN) {
		char line[512];
		size_t n;

		va_copy(copy, ap);
		vsnprintf(line, sizeof(line), fmt, copy);
		va_end(copy);
		n = strcspn(line, "\n");
		line[n] = '\0';
		/* The first error line names the cause; later ones repeat it.
		 * Failing to raise RLIMIT_MEMLOCK is harmless on memcg kernels. */
		if (n && !*libbpf_last && !strstr(line, "RLIMIT_MEMLOCK (err")) {
			char *stop = strstr(line, ". ");

			if (stop)
				stop[1] = '\0';
			snprintf(libbpf_last, sizeof(libbpf_last), "%s", line);
		}
	}
	if (!ubctl_verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

const char *ubctl_libbpf_error(void)
{
	return libbpf_last;
}

int main(int argc, char **argv)
{
	const char *name = strrchr(argv[0], '/');

	/* ubcaqm, once a tool of its own, is ubctl caqm under its old name (a symlink to ubctl). */
	if (!strcmp(name ? name + 1 : argv[0], "ubcaqm"))
		return caqm_alias_main(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "-v")) {
		ubctl_verbose = true;
		argv++;
		argc--;
	}
	libbpf_set_print(libbpf_print);
	registry_fill();
	if (argc < 2) {
		optab_help(&ubctl_cmd, stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--version"))
		return run_version(1, argv);
	/* The generated parts of ubctl(8), for scripts/mkman.sh. */
	if (!strcmp(argv[1], "--dump-man"))
		return optab_dump_man(argc > 2 ? argv[2] : NULL);
	argv[0] = (char *)"ubctl";
	return optab_dispatch(argc, argv);
}
