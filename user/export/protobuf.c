// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "export/protobuf.h"

/* A varint carries 7 bits a byte: 64 bits need 10. */
#define VARINT_MAX 10

enum wire_type {
	WIRE_VARINT = 0,
	WIRE_LEN = 2,
};

static size_t varint_encode(uint8_t *out, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

/* Room for @more bytes past the end; false (and @err set) if none. */
static bool pb_buf__reserve(struct pb_buf *b, size_t more)
{
	size_t cap = b->cap ? b->cap : 256;
	uint8_t *data;

	if (b->err)
		return false;
	if (b->cap - b->len >= more)
		return true;
	while (cap - b->len < more)
		cap *= 2;
	data = realloc(b->data, cap);
	if (!data) {
		b->err = -ENOMEM;
		return false;
	}
	b->data = data;
	b->cap = cap;
	return true;
}

static void pb_buf__put(struct pb_buf *b, const void *data, size_t len)
{
	if (!len || !pb_buf__reserve(b, len))
		return;
	memcpy(b->data + b->len, data, len);
	b->len += len;
}

void pb_buf__release(struct pb_buf *b)
{
	free(b->data);
	*b = (struct pb_buf){0};
}

void pb_buf__varint(struct pb_buf *b, uint64_t v)
{
	uint8_t bytes[VARINT_MAX];

	pb_buf__put(b, bytes, varint_encode(bytes, v));
}

static void pb_buf__tag(struct pb_buf *b, unsigned int field, enum wire_type type)
{
	pb_buf__varint(b, (uint64_t)field << 3 | type);
}

void pb_buf__uint(struct pb_buf *b, unsigned int field, uint64_t v)
{
	if (!v)
		return;
	pb_buf__tag(b, field, WIRE_VARINT);
	pb_buf__varint(b, v);
}

void pb_buf__bytes(struct pb_buf *b, unsigned int field, const void *data, size_t len)
{
	pb_buf__tag(b, field, WIRE_LEN);
	pb_buf__varint(b, len);
	pb_buf__put(b, data, len);
}

void pb_buf__string(struct pb_buf *b, unsigned int field, const char *s)
{
	pb_buf__bytes(b, field, s, strlen(s));
}

size_t pb_buf__begin(struct pb_buf *b, unsigned int field)
{
	pb_buf__tag(b, field, WIRE_LEN);
	return b->len;
}

/*
 * The contents are moved up to make room for their length: a copy of each
 * embedded message, cheaper than measuring every message before writing it.
 */
void pb_buf__end(struct pb_buf *b, size_t mark)
{
	uint8_t len[VARINT_MAX];
	size_t n = varint_encode(len, b->len - mark);

	if (!pb_buf__reserve(b, n))
		return;
	memmove(b->data + mark + n, b->data + mark, b->len - mark);
	memcpy(b->data + mark, len, n);
	b->len += n;
}

void pb_buf__append(struct pb_buf *b, const struct pb_buf *src)
{
	if (src->err && !b->err)
		b->err = src->err;
	pb_buf__put(b, src->data, src->len);
}
