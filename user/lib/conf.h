/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Config files that mirror a command's long options: one "key value" per
 * line (a flag alone), '#' starts a comment, blank lines are ignored:
 *
 *   ub-dev eth1
 *   map 4097=100      # repeatable keys repeat
 *   strict
 *
 * Pure parsing; the caller applies each entry as it would the option.
 */
#ifndef UBXDP_CONF_H
#define UBXDP_CONF_H

#include <stdbool.h>
#include <stddef.h>

struct conf_key {
	const char *name;
	bool has_value;
};

/* Called per entry; value is NULL for a flag. Returns 0, or -1 with err set. */
typedef int (*conf_apply_fn)(void *ctx, const struct conf_key *key, const char *value,
			     char *err, size_t errlen);

/*
 * Parse text (NUL-terminated, split in place: values passed to apply point
 * into it and stay valid as long as text does) against keys (ending with { NULL }). Unknown
 * keys, a flag with a value, a key without its value, and errors from apply
 * are reported as "LINE: message" in err, -1 returned, and nothing after the
 * offending line applied. Returns 0.
 */
int conf_parse(char *text, const struct conf_key *keys, conf_apply_fn apply, void *ctx,
	       char *err, size_t errlen);

#define CONF_FILE_MAX_BYTES (1 << 20)

/*
 * conf_parse on the text of the file at path (at most CONF_FILE_MAX_BYTES, no
 * NUL), read into memory that stays allocated for the life of the process
 * (values passed to apply point into it). Returns 0; -1 when the file cannot
 * be read ("--config PATH: why" in err); -2 when it is not such a text file or
 * conf_parse refuses a line ("PATH: line N: message").
 */
int conf_parse_file(const char *path, const struct conf_key *keys, conf_apply_fn apply, void *ctx,
		    char *err, size_t errlen);

#endif
