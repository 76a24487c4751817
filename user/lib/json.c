// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>
#include "lib/json.h"

/*
 * Length of the well-formed UTF-8 sequence at @s, or 0. Overlong forms,
 * surrogates and code points past U+10FFFF are ill-formed (RFC 3629).
 * Stops at a NUL, which is never a continuation byte.
 */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t i, n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 0;
	n = s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	for (i = 1; i < n; i++) {
		if (s[i] < lo || s[i] > hi)
			return 0;
		lo = 0x80;
		hi = 0xbf;
	}
	return n;
}

static void json__char(FILE *f, unsigned char c)
{
	static const char short_escapes[] = "\b\f\n\r\t";
	static const char short_names[] = "bfnrt";
	const char *e = memchr(short_escapes, c, sizeof(short_escapes) - 1);

	if (c == '"' || c == '\\')
		fprintf(f, "\\%c", c);
	else if (e)
		fprintf(f, "\\%c", short_names[e - short_escapes]);
	else if (c < 0x20)
		fprintf(f, "\\u%04x", c);
	else
		fputc(c, f);
}

void json__string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	while (*p) {
		n = utf8_len(p);
		if (n == 1)
			json__char(f, *p);
		else if (n)
			fwrite(p, 1, n, f);
		else
			fputs("\\ufffd", f);
		p += n ? n : 1;
	}
	fputc('"', f);
}
