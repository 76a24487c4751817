/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_PROTOBUF_H
#define ALLOCTRACE_PROTOBUF_H

#include <stddef.h>
#include <stdint.h>

/*
 * A minimal protocol buffers encoder: just the wire format (varints and
 * length-delimited fields), enough to write profile.proto without a
 * protobuf library.
 *
 * The first allocation failure sticks in @err and every later call does
 * nothing, so a message is built without checking each field and checked
 * once at the end (as stdio does with ferror).
 */
struct pb_buf {
	uint8_t *data;
	size_t len;
	size_t cap;
	int err; /* 0, or -ENOMEM once anything was lost */
};

void pb_buf__release(struct pb_buf *b);

/* A bare varint: inside packed repeated fields, and for tags. */
void pb_buf__varint(struct pb_buf *b, uint64_t v);

/*
 * A varint field (int64, uint64, bool, enum). Zero is every varint's
 * default in proto3 and is left out; int64 values are passed as their
 * two's complement.
 */
void pb_buf__uint(struct pb_buf *b, unsigned int field, uint64_t v);

/* A length-delimited field (string, bytes), always written, even empty. */
void pb_buf__bytes(struct pb_buf *b, unsigned int field, const void *data, size_t len);
void pb_buf__string(struct pb_buf *b, unsigned int field, const char *s);

/*
 * An embedded message or a packed repeated field: write its contents
 * between these two, passing pb_buf__end() what pb_buf__begin() returned.
 * The length goes in front once it is known.
 */
size_t pb_buf__begin(struct pb_buf *b, unsigned int field);
void pb_buf__end(struct pb_buf *b, size_t mark);

/* Append a whole encoded buffer, e.g. fields gathered apart. */
void pb_buf__append(struct pb_buf *b, const struct pb_buf *src);

#endif
