// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: machine code -> x86_insn__decode at every start, and
 * placement__walk from the first byte. Checks what they promise: a decoded
 * instruction lies inside the input and within 15 bytes; a refusal is
 * -EINVAL or -ENODATA and leaves nothing behind; a chosen offset starts an
 * emulated instruction that the walk reaches from the entry, inside its
 * span, with the arguments where it says. The input is copied to a buffer
 * of its own size, so that ASan sees any read past it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "probe/placement.h"
#include "probe/x86_insn.h"

static void check_decode(const uint8_t *code, size_t len)
{
	struct insn insn;
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

/*
 * The walk from the entry reaches @p->offset, an emulated instruction,
 * through straight-line code that keeps what @need asks for: the stack
 * pointer, and each argument in the register reported, which is the ABI's
 * untouched or one a whole copy wrote last.
 */
static void check_placement(const uint8_t *code, size_t len, const struct placement_need *need,
			    const struct placement *p)
{
	uint32_t written = 0, copied = 0;
	struct insn insn;
	size_t pos = 0;

	if (p->stepped) {
		if (p->offset || strncmp(p->why, "single-stepped", 14))
			abort();
		return;
	}
	while (pos < p->offset) {
		if (x86_insn__decode(&insn, code + pos, len - pos) || insn.emulated || insn.branch ||
		    (need->keep_sp && insn.writes & X86_REG_BIT(X86_REG_RSP)))
			abort();
		written |= insn.writes;
		copied = insn.copy ? (copied | insn.writes) : (copied & ~insn.writes);
		pos += insn.len;
	}
	if (pos != p->offset || pos >= PLACEMENT_SPAN ||
	    x86_insn__decode(&insn, code + pos, len - pos) || !insn.emulated)
		abort();
	for (unsigned int i = 0; i < need->nr_args; i++) {
		uint32_t reg = X86_REG_BIT(p->arg_reg[i]);

		if (!(copied & reg) && (p->arg_reg[i] != ABI_ARG_REG(i) || (written & reg)))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct placement_need needs[] = {
		{ .nr_args = 1, .keep_sp = true },
		{ .nr_args = 3, .keep_sp = true },
		{ .nr_args = 6 },
	};
	uint8_t *code = malloc(size ? size : 1);
	struct placement p;

	if (!code)
		return 0;
	memcpy(code, data, size);
	for (size_t off = 0; off <= size; off++)
		check_decode(code + off, size - off);
	for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++) {
		placement__walk(&insn_x86, code, size, &needs[i], &p);
		check_placement(code, size, &needs[i], &p);
		if (!p.why[0] || strnlen(p.why, sizeof(p.why)) == sizeof(p.why))
			abort();
	}
	free(code);
	return 0;
}
