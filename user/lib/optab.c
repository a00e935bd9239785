// SPDX-License-Identifier: BSD-2-Clause
/* Option tables: the parser, --help, --list-options and man sections (optab.h). */
#include "lib/optab.h"

#include <stdarg.h>
#include <stdbool.h>
#include <string.h>

#define HELP_COL 30

static const struct optab_cmd *const *registry;

void optab_set_registry(const struct optab_cmd *const *cmds)
{
	registry = cmds;
}

void optab_say(const struct optab_cmd *c, const char *fmt, ...)
{
	const char *sp = strchr(c->path, ' ');
	va_list ap;

	if (sp)
		fprintf(stderr, "%.*s:%s: ", (int)(sp - c->path), c->path, sp);
	else
		fprintf(stderr, "%s: ", c->path);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static const struct optab *find_len(const struct optab *t, const char *name, size_t len)
{
	for (; t && t->name; t++)
		if (strlen(t->name) == len && !strncmp(t->name, name, len))
			return t;
	return NULL;
}

static const struct optab *find_short(const struct optab *t, char c)
{
	for (; t && t->name; t++)
		if (optab_short(t) && optab_short(t) == c)
			return t;
	return NULL;
}

const struct optab *optab_find(const struct optab *t, const char *name)
{
	return find_len(t, name, strlen(name));
}

/* The option an alias stands for: the first entry above it that is none. */
static const struct optab *canonical(const struct optab *t, const struct optab *o)
{
	while (o > t && (o->flags & OPTAB_ALIAS))
		o--;
	return o;
}

/*
 * One pass over the command line. check: names only (help and list answered
 * here); else values go to fn and positionals to argv[1..*nargs].
 */
static int walk(const struct optab_cmd *c, int argc, char **argv, bool check, optab_fn fn, void *ctx,
		int *nargs)
{
	bool opts = true;
	int n = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *eq, *val = NULL;
		const struct optab *o;
		int rc;

		if (opts && !strcmp(a, "--")) {
			opts = false;
			continue;
		}
		if (!opts || a[0] != '-' || !a[1]) {
			if (!nargs || !(c->flags & OPTAB_ARGS)) {
				optab_say(c, "unexpected argument '%s' (see %s --help)", a, c->path);
				return OPTAB_EXIT_USAGE;
			}
			if (!check)
				argv[++n] = argv[i];
			continue;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			if (check)
				optab_help(c, stdout);
			return OPTAB_DONE;
		}
		if (!strcmp(a, "--list-options")) {
			if (check)
				optab_list(c, stdout);
			return OPTAB_DONE;
		}
		eq = a[1] == '-' ? strchr(a, '=') : NULL;
		if (a[1] == '-')
			o = find_len(c->opts, a + 2, eq ? (size_t)(eq - a - 2) : strlen(a + 2));
		else
			o = a[2] ? NULL : find_short(c->opts, a[1]);
		if (!o) {
			optab_say(c, "unknown option '%.*s' (see %s --help)", eq ? (int)(eq - a) : (int)strlen(a), a,
				  c->path);
			return OPTAB_EXIT_USAGE;
		}
		if (eq && !o->arg) {
			optab_say(c, "--%s takes no value", o->name);
			return OPTAB_EXIT_USAGE;
		}
		if (eq) {
			val = eq + 1;
		} else if (o->arg) {
			if (i + 1 >= argc) {
				optab_say(c, "--%s needs a value (%s)", o->name, o->arg);
				return OPTAB_EXIT_USAGE;
			}
			val = argv[++i];
		}
		if (!check && (rc = fn(ctx, o, val)))
			return rc;
	}
	if (nargs && !check)
		*nargs = n;
	return 0;
}

int optab_parse(const struct optab_cmd *c, int argc, char **argv, optab_fn fn, void *ctx, int *nargs)
{
	int rc = walk(c, argc, argv, true, fn, ctx, nargs);

	if (rc)
		return rc;
	if (nargs)
		*nargs = 0;
	return walk(c, argc, argv, false, fn, ctx, nargs);
}

const struct optab_cmd *optab_cmd_find(const struct optab_cmd *const *cmds, const char *path)
{
	for (; cmds && *cmds; cmds++)
		if (!strcmp((*cmds)->path, path))
			return *cmds;
	return NULL;
}

/* Is d a direct subcommand of c (its path and one more word)? */
static bool child_of(const struct optab_cmd *d, const struct optab_cmd *c)
{
	size_t n = strlen(c->path);

	return !strncmp(d->path, c->path, n) && d->path[n] == ' ' && !strchr(d->path + n + 1, ' ');
}

/* "--name ARG" of an entry. */
static void opt_left(const struct optab *o, char *buf, size_t len)
{
	char sh[8] = "";

	if (optab_short(o))
		snprintf(sh, sizeof(sh), "-%c, ", optab_short(o));
	snprintf(buf, len, "%s--%s%s%s", sh, o->name, o->arg ? " " : "", o->arg ? o->arg : "");
}

static void help_text(const struct optab *t, const struct optab *o, char *buf, size_t len)
{
	if (o->flags & OPTAB_ALIAS)
		snprintf(buf, len, "same as --%s%s%s", canonical(t, o)->name, o->help ? "; " : "", o->help ? o->help : "");
	else
		snprintf(buf, len, "%s%s", o->help, o->flags & OPTAB_REPEAT ? " (repeatable)" : "");
}

/* The synopsis: a line per form; a line starting with blanks continues the form above. */
static void synopsis_lines(const struct optab_cmd *c, FILE *f, const char *first, const char *next)
{
	const char *s = c->synopsis && *c->synopsis ? c->synopsis : c->opts ? "[OPTIONS]" : "SUBCOMMAND ...";

	for (bool one = true; s; one = false) {
		const char *nl = strchr(s, '\n');
		int n = nl ? (int)(nl - s) : (int)strlen(s);

		if (*s == ' ')
			fprintf(f, "%*s%.*s\n", (int)(strlen(next) + strlen(c->path)), "", n, s);
		else
			fprintf(f, "%s%s %.*s\n", one ? first : next, c->path, n, s);
		s = nl ? nl + 1 : NULL;
	}
}

/* text, its line breaks taken as blanks, in lines of at most `width` from column `col`. */
static void wrap(FILE *f, const char *text, int col, int width)
{
	int at = 0;

	while (*text) {
		size_t w = strcspn(text, " \n");

		if (at && at + 1 + (int)w > width) {
			fprintf(f, "\n%*s", col, "");
			at = 0;
		} else if (at) {
			fputc(' ', f);
			at++;
		}
		fprintf(f, "%.*s", (int)w, text);
		at += (int)w;
		text += w;
		text += strspn(text, " \n");
	}
	fputc('\n', f);
}

void optab_help(const struct optab_cmd *c, FILE *f)
{
	char left[128], text[1024];
	bool any = false;

	synopsis_lines(c, f, "usage: ", "       ");
	if (c->about)
		fprintf(f, "\n%s\n", c->about);
	for (const struct optab_cmd *const *d = registry; d && *d; d++) {
		if (!child_of(*d, c))
			continue;
		if (!any)
			fputs("\nsubcommands:\n", f);
		any = true;
		fprintf(f, "  %-12s %s\n", (*d)->path + strlen(c->path) + 1, (*d)->summary);
	}
	fputs(c->opts ? "\noptions:\n" : "\n", f);
	for (const struct optab *o = c->opts; o && o->name; o++) {
		opt_left(o, left, sizeof(left));
		help_text(c->opts, o, text, sizeof(text));
		if (strlen(left) + 3 > HELP_COL)
			fprintf(f, "  %s\n%*s", left, HELP_COL, "");
		else
			fprintf(f, "  %-*s", HELP_COL - 2, left);
		wrap(f, text, HELP_COL, 79 - HELP_COL);
	}
	fprintf(f, "  %-*s%s\n", HELP_COL - 2, "-h, --help", "this help");
}

void optab_list(const struct optab_cmd *c, FILE *f)
{
	/* One name a line, each with its argument: the short name on a line of its own. */
	for (const struct optab *o = c->opts; o && o->name; o++) {
		fprintf(f, "--%s%s%s\n", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
		if (optab_short(o))
			fprintf(f, "-%c%s%s\n", optab_short(o), o->arg ? " " : "", o->arg ? o->arg : "");
	}
	fputs("--help\n", f);
}

/* Text for roff: backslashes and dashes escaped, no line starting with a control character. */
static void roff(FILE *f, const char *s, size_t n)
{
	bool bol = true;

	for (size_t i = 0; i < n && s[i]; i++) {
		if (bol && (s[i] == '.' || s[i] == '\''))
			fputs("\\&", f);
		bol = s[i] == '\n';
		if (s[i] == '\\')
			fputs("\\e", f);
		else if (s[i] == '-')
			fputs("\\-", f);
		else
			fputc(s[i], f);
	}
}

/* Paragraphs: lines kept, a blank line a new paragraph. */
static void roff_text(FILE *f, const char *s)
{
	while (s && *s) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) : strlen(s);

		if (!n)
			fputs(".PP\n", f);
		else if (*s == ' ')
			fputs(".br\n", f);
		if (n) {
			size_t k = strspn(s, " ");

			roff(f, s + k, n - k);
			fputc('\n', f);
		}
		s = nl ? nl + 1 : NULL;
	}
}

static void man_opt(FILE *f, char short_name, const char *name, const char *arg)
{
	fputs(".TP\n", f);
	if (short_name)
		fprintf(f, "\\fB\\-%c\\fR, ", short_name);
	fputs("\\fB", f);
	roff(f, name, (size_t)-1);
	fputs("\\fR", f);
	if (arg) {
		fputs(" \\fI", f);
		roff(f, arg, (size_t)-1);
		fputs("\\fR", f);
	}
	fputc('\n', f);
}

void optab_man(const struct optab_cmd *c, FILE *f)
{
	const char *s = c->synopsis && *c->synopsis ? c->synopsis : c->opts ? "[OPTIONS]" : "SUBCOMMAND ...";
	char name[128], text[1024];

	fputs(".SS \"", f);
	roff(f, c->path, (size_t)-1);
	fputs("\"\n", f);
	roff_text(f, c->summary);
	fputs(".PP\n.nf\n", f);
	while (s) {
		const char *nl = strchr(s, '\n');

		if (*s != ' ') {
			fputs("\\fB", f);
			roff(f, c->path, (size_t)-1);
			fputs("\\fR ", f);
		}
		roff(f, s, nl ? (size_t)(nl - s) : (size_t)-1);
		fputc('\n', f);
		s = nl ? nl + 1 : NULL;
	}
	fputs(".fi\n", f);
	if (c->about) {
		fputs(".PP\n", f);
		roff_text(f, c->about);
	}
	for (const struct optab_cmd *const *d = registry; d && *d; d++) {
		if (!child_of(*d, c))
			continue;
		fputs(".TP\n\\fB", f);
		roff(f, (*d)->path + strlen(c->path) + 1, (size_t)-1);
		fputs("\\fR\n", f);
		roff_text(f, (*d)->summary);
	}
	for (const struct optab *o = c->opts; o && o->name; o++) {
		snprintf(name, sizeof(name), "--%s", o->name);
		man_opt(f, optab_short(o), name, o->arg);
		help_text(c->opts, o, text, sizeof(text));
		roff_text(f, text);
	}
	man_opt(f, 0, "--help", NULL);
	fputs("this help (also \\fB\\-h\\fR)\n", f);
}

/* A group: its subcommands' words, for the line that refuses a wrong one. */
static void subcommands(const struct optab_cmd *c, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (const struct optab_cmd *const *d = registry; d && *d && n < len; d++)
		if (child_of(*d, c))
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", (*d)->path + strlen(c->path) + 1);
}

int optab_dispatch(int argc, char **argv)
{
	const struct optab_cmd *c = optab_cmd_find(registry, argv[0]), *d;
	char path[256], subs[256];
	int i = 1;

	if (!c)
		return UB_EXIT_FAIL;
	while (!c->run) {
		subcommands(c, subs, sizeof(subs));
		if (i >= argc) {
			optab_say(c, "needs a subcommand: %s (see %s --help)", subs, c->path);
			return UB_EXIT_USAGE;
		}
		snprintf(path, sizeof(path), "%s %s", c->path, argv[i]);
		d = argv[i][0] != '-' ? optab_cmd_find(registry, path) : NULL;
		if (!d && (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help") || !strcmp(argv[i], "help"))) {
			optab_help(c, stdout);
			return UB_EXIT_OK;
		}
		if (!d && !strcmp(argv[i], "--list-options")) {
			optab_list(c, stdout);
			return UB_EXIT_OK;
		}
		if (!d) {
			optab_say(c, "%s '%s': %s (see %s --help)", argv[i][0] == '-' ? "unknown option" :
				  "unknown subcommand", argv[i], subs, c->path);
			return UB_EXIT_USAGE;
		}
		c = d;
		i++;
	}
	return c->run(argc - i + 1, argv + i - 1);
}

static const struct {
	int code;
	const char *what;
} exit_codes[] = {
	{ UB_EXIT_OK, "done" },
	{ UB_EXIT_FAIL, "failed on the way (I/O, memory, a timeout, the peer); what was attached by this\n"
			"command is taken off again" },
	{ UB_EXIT_USAGE, "the command line or a configuration file is wrong: nothing was done" },
	{ UB_EXIT_NOTFOUND, "not found: no such device, instance, entry or pinned object; nothing changed" },
	{ UB_EXIT_CONFLICT, "conflict: an instance, a program on the port or an entry is there already;\n"
			    "nothing changed" },
	{ UB_EXIT_KERNEL, "the kernel refused: loading, verifying or attaching BPF, or permission (root:\n"
			  "CAP_BPF, CAP_NET_ADMIN); nothing stays attached" },
};

void optab_man_common(FILE *f)
{
	fputs(".SH NUMBERS AND UNITS\n"
	      "Every option and configuration key reads numbers the same way: decimal, or\n"
	      "hexadecimal after \\fB0x\\fR; a leading zero is not octal (\\fB010\\fR is ten).\n"
	      "A time is a number and a unit, \\fBns\\fR, \\fBus\\fR, \\fBms\\fR or \\fBs\\fR\n"
	      "(\\fB100ns\\fR, \\fB500us\\fR, \\fB10ms\\fR, \\fB2s\\fR, \\fB1.5s\\fR); a bare number\n"
	      "is in the unit the option's name or help gives (\\fB\\-\\-idle\\-ms 500\\fR is\n"
	      "\\fB500ms\\fR).\n"
	      "A size is a number with an optional \\fBk\\fR, \\fBm\\fR or \\fBg\\fR: times 1024,\n"
	      "1024^2, 1024^3 (\\fB64k\\fR is 65536).\n"
	      "A value out of its range is refused in one line naming the option and the range.\n"
	      ".PP\n"
	      "Options take their value as \\fB\\-\\-opt value\\fR or \\fB\\-\\-opt=value\\fR, in\n"
	      "full (no abbreviations). \\fB\\-h\\fR or \\fB\\-\\-help\\fR anywhere prints the\n"
	      "command's help and does nothing else; \\fB\\-\\-list\\-options\\fR prints the\n"
	      "options it takes, one a line (for scripts and completion).\n"
	      ".SH EXIT STATUS\n"
	      "The same in ubctl, ubperf, ubpkt and ubcaqm. A refusal is one line on standard\n"
	      "error.\n", f);
	for (size_t i = 0; i < sizeof(exit_codes) / sizeof(exit_codes[0]); i++) {
		fprintf(f, ".TP\n.B %d\n", exit_codes[i].code);
		roff_text(f, exit_codes[i].what);
	}
}

int optab_dump_man(const char *what)
{
	if (what && !strcmp(what, "common")) {
		optab_man_common(stdout);
		return UB_EXIT_OK;
	}
	if (!what || strcmp(what, "commands") || !registry || !*registry) {
		fprintf(stderr, "%s: --dump-man commands|common\n", registry && *registry ? (*registry)->path : "optab");
		return UB_EXIT_USAGE;
	}
	for (const struct optab_cmd *const *c = registry; *c; c++)
		optab_man(*c, stdout);
	return UB_EXIT_OK;
}

int optab_str(void *ctx, const struct optab *o, const char *val)
{
	(void)o;
	*(const char **)ctx = val;
	return 0;
}
