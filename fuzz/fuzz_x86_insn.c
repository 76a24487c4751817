// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: machine code -> x86_insn__decode at every start, and
 * placement__x86 from the first byte. Checks what they promise: a decoded
 * instruction lies inside the input and within 15 bytes; a refusal is
 * -EINVAL or -ENODATA and leaves nothing behind; a chosen offset starts an
 * emulated instruction that the walk reaches from the entry, inside its
 * span. The input is copied to a buffer of its own size, so that ASan
 * sees any read past it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "probe/placement.h"
#include "probe/x86_insn.h"

static void check_decode(const uint8_t *code, size_t len)
{
	struct x86_insn insn;
	int err = x86_insn__decode(&insn, code, len);

	if (err) {
		if ((err != -EINVAL && err != -ENODATA) || insn.len || insn.name || insn.writes)
			abort();
		return;
	}
	if (!insn.len || insn.len > 15 || insn.len > len || !insn.name)
		abort();
	/* The kernel emulates only pushes, NOPs and relative branches. */
	if (insn.emulated && insn.writes & ~X86_REG_BIT(X86_REG_RSP))
		abort();
}

/* The walk from the entry lands on @offset, an emulated instruction. */
static void check_offset(const uint8_t *code, size_t len, uint64_t offset)
{
	struct x86_insn insn;
	size_t pos = 0;

	while (pos < offset) {
		if (x86_insn__decode(&insn, code + pos, len - pos) || insn.emulated || insn.branch ||
		    insn.writes & X86_ARG_REGS)
			abort();
		pos += insn.len;
	}
	if (pos != offset || pos >= 32 || x86_insn__decode(&insn, code + pos, len - pos) ||
	    !insn.emulated)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *code = malloc(size ? size : 1);
	uint64_t offset;
	char why[96];

	if (!code)
		return 0;
	memcpy(code, data, size);
	for (size_t off = 0; off <= size; off++)
		check_decode(code + off, size - off);
	offset = placement__x86(code, size, why, sizeof(why));
	if (offset)
		check_offset(code, size, offset);
	if (!why[0] || strnlen(why, sizeof(why)) == sizeof(why))
		abort();
	free(code);
	return 0;
}
