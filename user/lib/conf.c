// SPDX-License-Identifier: BSD-2-Clause
#include "lib/conf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static const struct conf_key *lookup(const struct conf_key *keys, const char *name)
{
	for (const struct conf_key *k = keys; k->name; k++)
		if (!strcmp(k->name, name))
			return k;
	return NULL;
}

int conf_parse(char *text, const struct conf_key *keys, conf_apply_fn apply, void *ctx,
	       char *err, size_t errlen)
{
	char msg[256];
	int lineno = 0;

	while (*text) {
		size_t n = strcspn(text, "\n");
		char *line = text, *key, *value, *end, *hash;
		const struct conf_key *k;

		lineno++;
		text += n + (text[n] == '\n');
		line[n] = '\0';

		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		for (key = line; blank(*key); key++)
			;
		end = key + strlen(key);
		while (end > key && blank(end[-1]))
			*--end = '\0';
		if (!*key)
			continue;
		for (value = key; *value && !blank(*value); value++)
			;
		if (*value) {
			*value++ = '\0';
			while (blank(*value))
				value++;
		}
		k = lookup(keys, key);
		if (!k) {
			snprintf(err, errlen, "line %d: unknown key '%s'", lineno, key);
			return -1;
		}
		if (k->has_value && !*value) {
			snprintf(err, errlen, "line %d: '%s' needs a value", lineno, key);
			return -1;
		}
		if (!k->has_value && *value) {
			snprintf(err, errlen, "line %d: '%s' takes no value (got '%s')", lineno, key, value);
			return -1;
		}
		if (apply(ctx, k, k->has_value ? value : NULL, msg, sizeof(msg))) {
			snprintf(err, errlen, "line %d: %s", lineno, msg);
			return -1;
		}
	}
	return 0;
}

int conf_parse_file(const char *path, const struct conf_key *keys, conf_apply_fn apply, void *ctx,
		    char *err, size_t errlen)
{
	char msg[512], *text;
	size_t len;
	FILE *f;

	f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "--config %s: %s", path, strerror(errno));
		return -1;
	}
	text = malloc(CONF_FILE_MAX_BYTES + 1);
	len = text ? fread(text, 1, CONF_FILE_MAX_BYTES + 1, f) : 0;
	fclose(f);
	if (!text || len > CONF_FILE_MAX_BYTES || memchr(text, '\0', len)) {
		free(text);
		snprintf(err, errlen, "--config %s: not a text file of at most %d bytes", path, CONF_FILE_MAX_BYTES);
		return -2;
	}
	text[len] = '\0';
	if (conf_parse(text, keys, apply, ctx, msg, sizeof(msg))) {
		snprintf(err, errlen, "%s: %s", path, msg);
		return -2;
	}
	return 0;
}
