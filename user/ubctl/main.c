// SPDX-License-Identifier: BSD-2-Clause
/* ubctl: attach ubxdp roles to interfaces and manage their pinned maps. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "ubctl.h"

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

const struct ubctl_help ubctl_no_help[] = { { NULL, NULL }, { 0 } };

static const struct ubctl_cmd {
	const char *name;
	int (*run)(int argc, char **argv);
	const struct ubctl_help *help;
	const char *summary;
} commands[] = {
#define UBCTL_CMD(name, run, help, summary) { #name, run, help, summary },
#include "commands.def"
#undef UBCTL_CMD
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct ubctl_cmd *find_cmd(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static void usage(FILE *f)
{
	fputs("usage: ubctl [-v] COMMAND [SUBCOMMAND] [OPTIONS]\n"
	      "       ubctl help [COMMAND [SUBCOMMAND]]   ubctl COMMAND [SUBCOMMAND] --help\n"
	      "       ubctl --version\n\ncommands:\n", f);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fputs("\nInstances are pinned under /sys/fs/bpf/ubxdp/<role>/<name>/ (bpffs is mounted\n"
	      "there when missing). -v shows libbpf's log. See ubctl(8).\n", f);
}

/* Help of `cmd [sub]`: the sub's entry, else the command's own. */
static int help(const char *cmd, const char *sub)
{
	const struct ubctl_cmd *c;
	const struct ubctl_help *h;

	if (!cmd) {
		usage(stdout);
		return 0;
	}
	c = find_cmd(cmd);
	if (!c)
		return fail(EXIT_USAGE, "help: unknown command '%s' (see ubctl help)", cmd);
	if (sub && *sub != '-' && c->help[0].text) {
		for (h = c->help + 1; h->text; h++) {
			if (!strcmp(h->sub, sub)) {
				fputs(h->text, stdout);
				return 0;
			}
		}
		return fail(EXIT_USAGE, "help: '%s' has no subcommand '%s' (see ubctl help %s)", cmd, sub, cmd);
	}
	if (!c->help[0].text) {
		/* The command prints its own. */
		char *argv[] = { (char *)cmd, (char *)"--help", NULL };

		return c->run(2, argv);
	}
	fputs(c->help[0].text, stdout);
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
	const struct ubctl_cmd *c;

	if (argc > 1 && !strcmp(argv[1], "-v")) {
		ubctl_verbose = true;
		argv++;
		argc--;
	}
	libbpf_set_print(libbpf_print);
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("ubctl (ubxdp) %s, libbpf %s\n", UBXDP_VERSION, libbpf_version_string());
		return 0;
	}
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return help(argc > 2 ? argv[2] : NULL, argc > 3 ? argv[3] : NULL);
	c = find_cmd(argv[1]);
	if (!c)
		return fail(EXIT_USAGE, "unknown command '%s' (see ubctl help)", argv[1]);
	/* `ubctl CMD [SUB] ... --help` anywhere before a "--". */
	for (int i = 2; c->help[0].text && i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return help(argv[1], argc > 2 && i > 2 ? argv[2] : NULL);
	return c->run(argc - 1, argv + 1);
}
