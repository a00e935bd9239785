/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Option tables: one per command, the single source of what the command
 * accepts, its --help and its man page section (ubctl, ubperf, ubpkt, ubcaqm).
 *
 * A table is an array of struct optab ending with a NULL name. The parser
 * takes `--opt value` and `--opt=value`, an entry's short name as `-s` or
 * `-n value` (one letter, as iproute2's -s and -j), -h and --help (anywhere before "--":
 * the help, exit 0, nothing done), and --list-options (every name the command
 * takes, one per line, with its argument; for tests and completion). Names
 * must be given in full. A wrong command line gets one line on stderr and
 * OPTAB_EXIT_USAGE before any option is acted on.
 */
#ifndef UBXDP_OPTAB_H
#define UBXDP_OPTAB_H

#include <stdio.h>

#include "lib/exit_codes.h"

struct optab {
	const char *name;	/* long name without "--"; NULL ends the table */
	const char *arg;	/* what the value is ("DEV", "N", "TIME"); NULL: a flag */
	const char *help;	/* what it does; "\n" breaks the line */
	int key;		/* handed to the callback; an alias has its option's */
	unsigned flags;
};

/* The option is an older name of the one above it: accepted, documented as "same as". */
#define OPTAB_ALIAS	0x1u
/* Repeatable: said in the help. */
#define OPTAB_REPEAT	0x2u
/* Also taken as -C (one letter, as iproute2's -s and -j). */
#define OPTAB_SHORT(C)	((unsigned)(unsigned char)(C) << 8)
#define optab_short(o)	((char)(((o)->flags >> 8) & 0xffu))

struct optab_cmd {
	const char *path;	/* "ubctl wps ingress attach" */
	const char *summary;	/* one line, for the parent's list of subcommands */
	const char *synopsis;	/* what follows the path; '\n' separates forms */
	const char *about;	/* paragraphs ("\n\n" between them); may be NULL */
	const struct optab *opts;	/* NULL: no options (a group of subcommands) */
	unsigned flags;
	/* What runs it, argv[0] its last word; NULL for a group of subcommands. */
	int (*run)(int argc, char **argv);
};

/* Positional arguments are allowed (they are returned, in order). */
#define OPTAB_ARGS	0x1u

/* Returned by optab_parse when it printed the help or the option list: exit 0. */
#define OPTAB_DONE	(-1)
/* The exit status for what optab_parse returned, when that is not 0. */
#define OPTAB_STATUS(rc)	((rc) < 0 ? 0 : (rc))

/*
 * The callback: o is the table's entry of the name given (an alias's own),
 * val its value (NULL for a flag). Returns 0, or an exit status after saying
 * why in one line.
 */
typedef int (*optab_fn)(void *ctx, const struct optab *o, const char *val);

/*
 * Parse argv[1..argc) (argv[0] is the command's word) against c. Every name
 * is checked before fn is first called. The positional arguments end up in
 * argv[1..*nargs] in their order (nargs NULL or c without OPTAB_ARGS: none
 * allowed). Returns 0, OPTAB_DONE, or the exit status (the line said).
 */
int optab_parse(const struct optab_cmd *c, int argc, char **argv, optab_fn fn, void *ctx, int *nargs);

/* The entry named `name` (without "--"), or NULL. */
const struct optab *optab_find(const struct optab *t, const char *name);

/* Every command of the tool (NULL-terminated), for the subcommands a group's help lists. */
void optab_set_registry(const struct optab_cmd *const *cmds);
/* --help of c. */
void optab_help(const struct optab_cmd *c, FILE *f);
/* Its man page section (roff): .SS path, synopsis, about, subcommands, a .TP per option. */
void optab_man(const struct optab_cmd *c, FILE *f);
/* The man page's NUMBERS AND UNITS and EXIT STATUS sections, the same for every tool. */
void optab_man_common(FILE *f);
/*
 * TOOL --dump-man commands|common: the generated parts of the tool's man page
 * (every command's section of the registry, or optab_man_common), for
 * scripts/mkman.sh. Returns the exit status.
 */
int optab_dump_man(const char *what);

/* An optab_fn for commands whose only option is a string: ctx is a const char **. */
int optab_str(void *ctx, const struct optab *o, const char *val);

/*
 * Run the command argv names, from the registry: argv[0] is the tool, the
 * words after it walk down the paths ("ubctl wps ingress attach ..."). A group
 * answers -h/--help/--list-options itself and refuses a missing or unknown
 * subcommand in one line. Returns the exit status.
 */
int optab_dispatch(int argc, char **argv);
/* --list-options. */
void optab_list(const struct optab_cmd *c, FILE *f);

/* The command of cmds[] (NULL-terminated) whose path is `path`, or NULL. */
const struct optab_cmd *optab_cmd_find(const struct optab_cmd *const *cmds, const char *path);

/* One line on stderr: "TOOL: REST-OF-PATH: message", TOOL the path's first word. */
void optab_say(const struct optab_cmd *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
