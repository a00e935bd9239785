// SPDX-License-Identifier: BSD-2-Clause
#include "numparse.h"

#include <string.h>

static int digit(char c, unsigned base)
{
	int d = c >= '0' && c <= '9' ? c - '0' :
		c >= 'a' && c <= 'f' ? c - 'a' + 10 :
		c >= 'A' && c <= 'F' ? c - 'A' + 10 : 99;

	return d < (int)base ? d : -1;
}

int parse_uint(const char *s, size_t len, unsigned long max, unsigned long *out)
{
	unsigned long v = 0;
	unsigned base = 10;
	size_t i = 0;

	if (len == (size_t)-1)
		len = strlen(s);
	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (i == len)
		return -1;
	for (; i < len; i++) {
		int d = digit(s[i], base);

		if (d < 0 || (unsigned long)d > max || v > (max - (unsigned long)d) / base)
			return -1;
		v = v * base + (unsigned long)d;
	}
	*out = v;
	return 0;
}
