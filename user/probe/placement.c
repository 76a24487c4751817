// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A uprobe on an instruction the kernel emulates (x86-64) or simulates
 * (arm64) costs one exception a hit; on one it single-steps out of line, a
 * second (on x86 under KVM about 5.5 us instead of 0.8 us, each step a VM
 * exit). So a probe goes on the function's first emulated instruction that
 * every call reaches with what the probe needs:
 *
 * - The arguments. Straight-line code before the probe may overwrite an
 *   argument's register once it has copied the argument to another one
 *   (`mov %rdi,%rsi`): the probe then reads the copy. Registers that hold
 *   no argument of the function are the code's own to use.
 * - For a function with a return probe, the stack pointer as the call left
 *   it, and on arm64 the return address still in x30, unsaved and
 *   unsigned: the kernel takes the return address from *sp (x86) or x30
 *   (arm64) when the breakpoint hits, and the two probes share it.
 *
 * The walk stops at the first emulated instruction and gives up at any
 * other branch, so it never passes one: a probe on the branch itself
 * (glibc free's `je` or `cbz` on NULL) still sees every call, once, unless
 * the branch jumps back over the probe, which is refused. Whatever the
 * walk cannot vouch for keeps the probe at the entry: a wrong offset loses
 * events, a missed one only costs time. The decoders (x86_insn.c,
 * arm64_insn.c) say what each instruction does.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "probe/placement.h"
#include "arch/arch.h"
#include "arch/machines.h"

_Static_assert(PLACEMENT_CODE_MAX >= PLACEMENT_SPAN + 15, "room for the last instruction");

/* The arguments' registers along the walk. */
struct walk {
	const struct insn_arch *arch;
	const struct placement_need *need;
	int8_t holds[32]; /* the argument each register holds, or -1 */
	int64_t sp_moved; /* by the instructions passed, with need->track_sp */
	char skipped[96]; /* the instructions passed, for the reason */
};

static void walk_init(struct walk *w, const struct insn_arch *arch,
		      const struct placement_need *need)
{
	memset(w->holds, -1, sizeof(w->holds));
	for (unsigned int i = 0; i < need->nr_args && i < PLACEMENT_ARGS; i++)
		w->holds[arch->arg_regs[i]] = i;
	w->skipped[0] = '\0';
	w->sp_moved = 0;
	w->arch = arch;
	w->need = need;
}

/* The register holding argument @arg, the ABI's while it still does; -1 for none. */
static int find_arg(const struct walk *w, int arg)
{
	unsigned int abi = w->arch->arg_regs[arg];

	if (w->holds[abi] == arg)
		return abi;
	for (unsigned int reg = 0; reg < w->arch->nr_regs; reg++) {
		if (w->holds[reg] == arg)
			return reg;
	}
	return -1;
}

/* Follow @insn's writes; the argument it leaves in no register, or -1, and where it was. */
static int follow(struct walk *w, const struct insn *insn, unsigned int *lost)
{
	int8_t from = insn->copy ? w->holds[insn->copy_src] : -1;

	for (unsigned int reg = 0; reg < w->arch->nr_regs; reg++) {
		int8_t old = w->holds[reg];

		if (!(insn->writes & INSN_REG_BIT(reg)))
			continue;
		w->holds[reg] = from;
		if (old >= 0 && find_arg(w, old) < 0) {
			*lost = reg;
			return old;
		}
	}
	return -1;
}

/* Add to @out's reason. */
static void vadd_why(struct placement *out, const char *fmt, va_list ap)
{
	size_t used = strlen(out->why);

	vsnprintf(out->why + used, sizeof(out->why) - used, fmt, ap);
}

__attribute__((format(printf, 2, 3))) static void add_why(struct placement *out, const char *fmt,
							  ...)
{
	va_list ap;

	va_start(ap, fmt);
	vadd_why(out, fmt, ap);
	va_end(ap);
}

/* The probe stays on the entry, single-stepped; the reason from @fmt. */
__attribute__((format(printf, 2, 3))) static void stay(struct placement *out, const char *fmt, ...)
{
	va_list ap;

	snprintf(out->why, sizeof(out->why), "single-stepped: ");
	va_start(ap, fmt);
	vadd_why(out, fmt, ap);
	va_end(ap);
}

/* Why the walk cannot pass @insn at @off, in @out; false when it can. */
static bool blocked(struct walk *w, const struct insn *insn, size_t off, struct placement *out)
{
	int ra = w->arch->ra;
	unsigned int lost;
	int arg;

	if (insn->branch) {
		stay(out, "%s at +%zu, a branch the kernel single-steps", insn->name, off);
		return true;
	}
	if (w->need->keep_sp && (insn->writes & INSN_REG_BIT(w->arch->sp))) {
		stay(out, "%s at +%zu moves the stack pointer", insn->name, off);
		return true;
	}
	if (w->need->track_sp && (insn->writes & INSN_REG_BIT(w->arch->sp))) {
		w->sp_moved += insn->sp_delta;
		if (!insn->sp_known || w->sp_moved > 0 || w->sp_moved < -UINT16_MAX) {
			stay(out, "%s at +%zu moves the stack pointer by an unknown amount",
			     insn->name, off);
			return true;
		}
	}
	if (w->need->keep_sp && ra >= 0 && (insn->saves_ra || (insn->writes & INSN_REG_BIT(ra)))) {
		stay(out, "%s at +%zu %s the return address in %s", insn->name, off,
		     insn->saves_ra ? "saves" : "changes", w->arch->reg_name(ra));
		return true;
	}
	arg = follow(w, insn, &lost);
	if (arg >= 0)
		stay(out, "%s at +%zu overwrites %s, argument %d's last copy", insn->name, off,
		     w->arch->reg_name(lost), arg + 1);
	return arg >= 0;
}

/* Where the direct branch @insn at @off lands, from the function's start. */
static int64_t branch_target(const struct insn *insn, size_t off)
{
	return (int64_t)(off + insn->len) + insn->disp;
}

/* A branch back to @off or before would hit the probe twice in one call. */
static bool loops_back(const struct insn *insn, size_t off)
{
	int64_t target = branch_target(insn, off);

	return insn->branch && target >= 0 && target <= (int64_t)off;
}

static void choose(const struct walk *w, const struct insn *insn, size_t off, struct placement *out)
{
	char regs[64] = "";
	size_t used = 0;
	int n;

	out->offset = off;
	out->stepped = false;
	out->sp_adjust = -w->sp_moved;
	for (unsigned int i = 0; i < w->need->nr_args && i < PLACEMENT_ARGS; i++) {
		out->arg_reg[i] = find_arg(w, i);
		used += snprintf(regs + used, sizeof(regs) - used, "%s%s", i ? ", " : "",
				 w->arch->reg_name(out->arg_reg[i]));
	}
	n = snprintf(out->why, sizeof(out->why), "%s at +%zu, %sd%s%s; args in %s", insn->name, off,
		     w->arch->no_step, *w->skipped ? "; past " : "", w->skipped,
		     *regs ? regs : "none");
	/* A long list of instructions skipped is cut, and says so. */
	if (n >= (int)sizeof(out->why))
		strcpy(out->why + sizeof(out->why) - sizeof("..."), "...");
}

/* Append @name to the list in @buf, as much as fits. */
static void append_name(char *buf, size_t size, const char *name)
{
	size_t used = strlen(buf);

	snprintf(buf + used, size - used, "%s%s", used ? ", " : "", name);
}

#define INSN_CELL(e_machine, cfi, insn) &insn,
ARCH_MACHINE_COLUMN(struct insn_arch, insn_arch_of, INSN_CELL)

const struct insn_arch *placement__native(void)
{
	return insn_arch_of(arch_elf_machine);
}

const char *placement__step_cost(void)
{
	const struct insn_arch *native = placement__native();

	return native ? native->step_cost : "an extra exception a call";
}

void placement__entry(const struct insn_arch *arch, struct placement *out)
{
	memset(out, 0, sizeof(*out));
	for (unsigned int i = 0; i < PLACEMENT_ARGS; i++)
		out->arg_reg[i] = arch ? arch->arg_regs[i] : ABI_ARG_REG(i);
	out->stepped = true;
}

void placement__walk(const struct insn_arch *arch, const uint8_t *code, size_t len,
		     const struct placement_need *need, struct placement *out)
{
	struct insn insn;
	struct walk w;
	size_t off;
	int err;

	placement__entry(arch, out);
	if (!arch) {
		snprintf(out->why, sizeof(out->why),
			 "no instruction decoder for this architecture");
		return;
	}
	walk_init(&w, arch, need);
	for (off = 0; off < PLACEMENT_SPAN; off += insn.len) {
		err = arch->decode(&insn, code + off, len - off);
		if (err) {
			stay(out,
			     err == -ENODATA ? "code cut short at +%zu"
					     : "unknown instruction at +%zu",
			     off);
			return;
		}
		if (insn.emulated && loops_back(&insn, off)) {
			stay(out, "%s at +%zu jumps back before itself", insn.name, off);
			return;
		}
		if (insn.emulated) {
			choose(&w, &insn, off, out);
			return;
		}
		if (blocked(&w, &insn, off, out))
			return;
		append_name(w.skipped, sizeof(w.skipped), insn.name);
	}
	stay(out, "nothing the kernel %ss in the first %d bytes", arch->no_step, PLACEMENT_SPAN);
}

/*
 * Exits. Where the return address stays in a register until the prologue
 * saves it (arm64's x30), a return probe sharing the entry's breakpoint
 * must sit before that save: on glibc's malloc, the first instruction, an
 * `stp` the kernel steps out of line. Return probes of their own on the
 * function's exits free the entry probe to move on to a simulated
 * instruction: a plain probe on a `ret` (simulated) sees the returned
 * value, and a return probe on a tail call's branch hooks the return of
 * the function it jumps to, which the kernel takes from the register when
 * the breakpoint hits. That is right only where the register holds the
 * caller's return address again: on the straight line before the branch,
 * its last write is a load from the stack (the epilogue's ldp x29, x30),
 * or it was neither written nor saved since the entry, and no other path
 * joins in between. A jump out with the frame still live (to a function's
 * cold part) fails that, and so does the function: its returns may lie
 * out of sight.
 */
#define BODY_INSNS (PLACEMENT_BODY_MAX / 4)

struct body {
	const struct insn_arch *arch;
	const uint8_t *code;
	size_t len, n;
	uint64_t landing[BODY_INSNS / 64]; /* a branch of the function's own lands here */
};

static int body_decode(const struct body *b, size_t i, struct insn *insn)
{
	size_t off = i * b->arch->insn_len;

	return b->arch->decode(insn, b->code + off, b->len - off);
}

static bool body_lands(const struct body *b, size_t i)
{
	return b->landing[i / 64] >> (i % 64) & 1;
}

/* Does the return-address register hold the caller's return address at instruction @i? */
static bool ra_restored(const struct body *b, size_t i)
{
	struct insn insn;

	for (;; i--) {
		if (body_lands(b, i))
			return false;
		if (!i)
			return true;
		/* a branch falls through, or what follows is a landing or dead code */
		if (body_decode(b, i - 1, &insn))
			return false;
		if (insn.restores_ra)
			return true;
		/* a call, or a jump with the frame still live: to a cold part, say */
		if (insn.saves_ra || (insn.writes & INSN_REG_BIT(b->arch->ra)))
			return false;
	}
}

__attribute__((format(printf, 3, 4))) static int refuse(char *why, size_t size, const char *fmt,
							...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, size, fmt, ap);
	va_end(ap);
	return -EOPNOTSUPP;
}

/* Mark where the function's own branches land; 0, or why not in @why. */
static int mark_landings(struct body *b, const struct placement *out, char *why, size_t size)
{
	size_t step = b->arch->insn_len;
	struct insn insn;
	int64_t target;

	for (size_t i = 0; i < b->n; i++) {
		int err = body_decode(b, i, &insn);

		/* br xN, retaa ...: it may leave for anywhere */
		if (err == -EPERM || (!err && insn.indirect && !insn.ret &&
				      !(insn.writes & INSN_REG_BIT(b->arch->ra))))
			return refuse(why, size, "an indirect branch at +%zu", i * step);
		if (err || !insn.branch || insn.indirect)
			continue;
		target = branch_target(&insn, i * step);
		if (target < 0 || target >= (int64_t)(b->n * step))
			continue;
		if (target <= (int64_t)out->offset)
			return refuse(why, size, "%s at +%zu jumps back to the entry probe",
				      insn.name, i * step);
		b->landing[target / step / 64] |= 1ULL << (target / step % 64);
	}
	return 0;
}

static int add_exit(struct placement *out, size_t off, bool tail, char *why, size_t size)
{
	if (out->nr_exits == PLACEMENT_EXITS)
		return refuse(why, size, "more than %d exits", PLACEMENT_EXITS);
	out->exits[out->nr_exits++] = (struct placement_exit){.offset = off, .tail = tail};
	return 0;
}

/* A branch out of the function that is no call: a tail call, or a return. */
static bool leaves(const struct body *b, const struct insn *insn, size_t off)
{
	int64_t target = branch_target(insn, off);

	if (!insn->branch || (insn->writes & INSN_REG_BIT(b->arch->ra)))
		return false;
	return insn->ret ||
	       (!insn->indirect && (target < 0 || target >= (int64_t)(b->n * b->arch->insn_len)));
}

int placement__exits(const struct insn_arch *arch, const uint8_t *code, size_t len,
		     struct placement *out, char *why, size_t size)
{
	struct body b = {.arch = arch, .code = code, .len = len};
	struct insn insn;
	size_t off;
	int err;

	out->nr_exits = 0;
	if (!arch || arch->insn_len < 4 || arch->ra < 0)
		return refuse(why, size, "the return address is on the stack");
	b.n = len / arch->insn_len;
	if (b.n > BODY_INSNS)
		return refuse(why, size, "longer than %d bytes", PLACEMENT_BODY_MAX);
	err = mark_landings(&b, out, why, size);
	for (size_t i = 0; i < b.n && !err; i++) {
		off = i * arch->insn_len;
		if (body_decode(&b, i, &insn) || !leaves(&b, &insn, off))
			continue;
		if (!insn.ret && !ra_restored(&b, i))
			err = refuse(why, size,
				     "%s at +%zu, a tail call with the return address "
				     "maybe elsewhere",
				     insn.name, off);
		else
			err = add_exit(out, off, !insn.ret, why, size);
	}
	if (!err && !out->nr_exits)
		err = refuse(why, size, "no return instruction");
	if (err)
		out->nr_exits = 0;
	return err;
}

void placement__move_return(const struct insn_arch *arch, const uint8_t *code, size_t len,
			    struct placement_need need, struct placement *out)
{
	static const char stepped[] = "single-stepped: ";
	struct placement moved;
	char why[96];

	if (!arch || arch->ra < 0)
		return;
	need.keep_sp = false;
	need.track_sp = true;
	placement__walk(arch, code, len, &need, &moved);
	/* What keeps it stepped without a return probe there: the reason to give. */
	if (moved.stepped) {
		add_why(out, "; and after it, %s",
			moved.why +
			    (strncmp(moved.why, stepped, strlen(stepped)) ? 0 : strlen(stepped)));
		return;
	}
	if (placement__exits(arch, code, len, &moved, why, sizeof(why))) {
		add_why(out, "; no exit probes: %s", why);
		return;
	}
	*out = moved;
	add_why(out, "; returns at %u exit%s", out->nr_exits, out->nr_exits == 1 ? "" : "s");
}

uint64_t placement__stepped_due(const uint64_t *calls, size_t nr, uint64_t stepped, uint64_t said)
{
	uint64_t due = 0;

	for (size_t f = 0; f < nr && f < 64; f++) {
		if ((stepped & ~said & 1ULL << f) && calls[f] >= PLACEMENT_STEP_WARN_CALLS)
			due |= 1ULL << f;
	}
	return due;
}
