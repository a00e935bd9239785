// SPDX-License-Identifier: BSD-2-Clause
/* --json output through json-c, so any device or instance name stays valid JSON. */
#include <stdio.h>

#include "ubctl/ubctl.h"

void json_print(struct json_object *o)
{
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

void json_add_str(struct json_object *o, const char *key, const char *val)
{
	json_object_object_add(o, key, json_object_new_string(val));
}

void json_add_u64(struct json_object *o, const char *key, unsigned long long val)
{
	json_object_object_add(o, key, json_object_new_uint64(val));
}
