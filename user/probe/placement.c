// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A uprobe on an instruction the kernel emulates costs about 0.8 us a hit;
 * on one it single-steps out of line, about 5.5 us under KVM, where each
 * step exits the VM. So an entry probe goes on the function's first
 * emulated instruction, when every call reaches it with the arguments
 * still in their registers: only straight-line instructions that leave
 * rdi, rsi, rdx, rcx, r8 and r9 alone may come before it. The walk stops
 * at the first emulated instruction and gives up at any other branch, so
 * it never passes one: a probe on the branch itself (glibc free's `je` on
 * NULL) still sees every call. Whatever the walk cannot vouch for keeps
 * the probe at the entry: a wrong offset loses events, a missed one only
 * costs time.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "probe/placement.h"
#include "probe/x86_insn.h"

/* A prologue longer than this is the function's real work already. */
#define PLACEMENT_SPAN 32

_Static_assert(PLACEMENT_CODE_MAX >= PLACEMENT_SPAN + 15, "room for the last instruction");

/* Append @name to the list in @buf, as much as fits. */
static void append_name(char *buf, size_t size, const char *name)
{
	size_t used = strlen(buf);

	snprintf(buf + used, size - used, "%s%s", used ? ", " : "", name);
}

static enum x86_reg first_reg(uint16_t mask)
{
	enum x86_reg reg = 0;

	while (reg < X86_REG_MAX && !(mask & X86_REG_BIT(reg)))
		reg++;
	return reg;
}

/* Why the instruction at @off stops the walk short of an emulated one. */
static void explain_stop(const struct x86_insn *insn, size_t off, char *why, size_t size)
{
	if (insn->branch)
		snprintf(why, size, "%s at +%zu: a branch the kernel single-steps", insn->name,
			 off);
	else
		snprintf(why, size, "%s at +%zu writes %s", insn->name, off,
			 x86_reg_name(first_reg(insn->writes & X86_ARG_REGS)));
}

uint64_t placement__x86(const uint8_t *code, size_t len, char *why, size_t size)
{
	char skipped[96] = "";
	struct x86_insn insn;
	size_t off = 0;
	int err;

	for (; off < PLACEMENT_SPAN; off += insn.len) {
		err = x86_insn__decode(&insn, code + off, len - off);
		if (err) {
			snprintf(why, size,
				 err == -ENODATA ? "code cut short at +%zu"
						 : "unknown instruction at +%zu",
				 off);
			return 0;
		}
		if (insn.emulated) {
			snprintf(why, size, "%s: emulated%s%s", insn.name,
				 *skipped ? "; skipped " : "", skipped);
			return off;
		}
		if (insn.branch || (insn.writes & X86_ARG_REGS)) {
			explain_stop(&insn, off, why, size);
			return 0;
		}
		append_name(skipped, sizeof(skipped), insn.name);
	}
	snprintf(why, size, "nothing the kernel emulates in the first %d bytes", PLACEMENT_SPAN);
	return 0;
}
