// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A small AArch64 decoder for probe placement. The kernel simulates a
 * uprobe on b, bl, b.cond, cbz, cbnz, tbz, tbnz, adr, adrp, br, blr and
 * ret (arch/arm64/kernel/probes/decode-insn.c, 6.1 and later): one
 * exception a hit. Everything else it steps out of line, a second
 * exception, or rejects: exclusive loads and stores, system instructions
 * but hints and mrs, and literal loads (ldr and ldrsw literal, simulated
 * for uprobes until CVE-2024-50099's fix, in Debian's 6.1 too). NOPs are
 * simulated from 6.13 only: here they count as stepped.
 *
 * Registers are numbered x0-x30, with 31 the stack pointer where an
 * operand may name it; the zero register is written by nothing.
 */
#include <errno.h>
#include "probe/insn.h"

#define SP	 31
#define LR	 30
#define ZR	 31 /* the same field value, meaning xzr where sp is not allowed */
#define INSN_LEN 4

static const char *const cond_names[16] = {"b.eq", "b.ne", "b.cs", "b.cc", "b.mi", "b.pl",
					   "b.vs", "b.vc", "b.hi", "b.ls", "b.ge", "b.lt",
					   "b.gt", "b.le", "b.al", "b.nv"};

static const char *const addsub_names[4] = {"add", "adds", "sub", "subs"};
static const char *const logical_names[8] = {"and", "bic", "orr",  "orn",
					     "eor", "eon", "ands", "bics"};
static const char *const movewide_names[4] = {"movn", NULL, "movz", "movk"};
static const char *const bitfield_names[4] = {"sbfm", "bfm", "ubfm", NULL};

static const char *arm64_reg_name(unsigned int reg)
{
	static const char *const names[32] = {
	    "x0",  "x1",  "x2",	 "x3",	"x4",  "x5",  "x6",  "x7",  "x8",  "x9",  "x10",
	    "x11", "x12", "x13", "x14", "x15", "x16", "x17", "x18", "x19", "x20", "x21",
	    "x22", "x23", "x24", "x25", "x26", "x27", "x28", "x29", "x30", "sp",
	};

	return reg < 32 ? names[reg] : "?";
}

static unsigned int field(uint32_t w, unsigned int lo, unsigned int bits)
{
	return (w >> lo) & ((1U << bits) - 1);
}

static int32_t signed_field(uint32_t w, unsigned int lo, unsigned int bits)
{
	return (int32_t)(field(w, lo, bits) << (32 - bits)) >> (32 - bits);
}

/* A @bits-wide signed field at @lo, in instructions, as a byte offset. */
static int32_t branch_offset(uint32_t w, unsigned int lo, unsigned int bits)
{
	return signed_field(w, lo, bits) * INSN_LEN;
}

/* A load or store pair's offset in bytes: imm7 scaled by the registers' size. */
static int32_t pair_offset(uint32_t w, bool simd)
{
	unsigned int opc = field(w, 30, 2);

	return signed_field(w, 15, 7) * (1 << (simd ? 2 + opc : 2 + (opc >> 1)));
}

/* Rd written; @sp_ok: 31 means the stack pointer, else the zero register. */
static uint32_t rd_bit(unsigned int rd, bool sp_ok)
{
	return rd == ZR && !sp_ok ? 0 : INSN_REG_BIT(rd);
}

static int set(struct insn *insn, const char *name, uint32_t writes)
{
	insn->name = name;
	insn->writes = writes;
	return 0;
}

/* A simulated branch to @offset bytes from itself (0: a register's target). */
static int branch(struct insn *insn, const char *name, int32_t offset, uint32_t writes)
{
	insn->branch = true;
	insn->emulated = true;
	insn->disp = offset - INSN_LEN;
	return set(insn, name, writes);
}

/* b, bl, b.cond, cbz, cbnz, tbz, tbnz, br, blr, ret; 1 when @w is none of them. */
static int decode_branch(struct insn *insn, uint32_t w)
{
	if ((w & 0x7c000000) == 0x14000000)
		return branch(insn, w >> 31 ? "bl" : "b", branch_offset(w, 0, 26),
			      w >> 31 ? INSN_REG_BIT(LR) : 0);
	if ((w & 0xff000010) == 0x54000000)
		return branch(insn, cond_names[w & 15], branch_offset(w, 5, 19), 0);
	if ((w & 0x7e000000) == 0x34000000)
		return branch(insn, field(w, 24, 1) ? "cbnz" : "cbz", branch_offset(w, 5, 19), 0);
	if ((w & 0x7e000000) == 0x36000000)
		return branch(insn, field(w, 24, 1) ? "tbnz" : "tbz", branch_offset(w, 5, 14), 0);
	/* br, blr, ret: no pointer authentication, which the kernel neither steps nor simulates */
	if ((w & 0xff9ffc1f) == 0xd61f0000 && field(w, 21, 2) != 3) {
		static const char *const names[] = {"br", "blr", "ret"};
		unsigned int opc = field(w, 21, 2);

		insn->indirect = true;
		insn->ret = opc == 2 && field(w, 5, 5) == LR;
		return branch(insn, names[opc], INSN_LEN, opc == 1 ? INSN_REG_BIT(LR) : 0);
	}
	/* the rest of the unconditional-branch-to-register class: retaa, braa, eret ... */
	if ((w & 0xfe000000) == 0xd6000000)
		return -EPERM;
	return 1;
}

/* nop and the other hints, mrs; the rest of the system space is refused. */
static int decode_system(struct insn *insn, uint32_t w)
{
	if ((w & 0xfffff01f) == 0xd503201f) {
		unsigned int hint = field(w, 5, 7);

		if (!hint)
			return set(insn, "nop", 0);
		/* paciasp, pacibsp: sign x30, which the return probe then replaces */
		if (hint == 25 || hint == 27)
			return set(insn, hint == 25 ? "paciasp" : "pacibsp", INSN_REG_BIT(LR));
		/* bti: stepped */
		if (hint >= 32 && hint <= 38 && !(hint & 1))
			return set(insn, "bti", 0);
		return -EINVAL;
	}
	/* mrs; the kernel rejects it only for DAIF (3, 3, 4, 2, 1), which user code cannot read */
	if ((w & 0xfff00000) == 0xd5300000)
		return set(insn, "mrs", rd_bit(field(w, 0, 5), false));
	return -EINVAL;
}

/* adr, adrp, add/sub, logical, move wide, bitfield and extract with an immediate. */
static int decode_dp_imm(struct insn *insn, uint32_t w)
{
	unsigned int rd = field(w, 0, 5), op = field(w, 23, 3), opc = field(w, 29, 2);
	bool flags = field(w, 29, 1), sf = field(w, 31, 1);

	switch (op) {
	case 0:
	case 1:
		insn->emulated = true;
		return set(insn, w >> 31 ? "adrp" : "adr", rd_bit(rd, false));
	case 2: /* add/sub: mov to or from sp is add #0 */
		if (sf && !flags && !field(w, 30, 1) && !field(w, 10, 12) && !field(w, 22, 1)) {
			insn->copy = true;
			insn->copy_src = field(w, 5, 5);
		}
		/* add or sub sp, sp, #imm */
		if (sf && !flags && rd == SP && field(w, 5, 5) == SP) {
			int32_t imm = field(w, 10, 12) << (field(w, 22, 1) ? 12 : 0);

			insn->sp_known = true;
			insn->sp_delta = field(w, 30, 1) ? -imm : imm;
		}
		return set(insn, addsub_names[opc], rd_bit(rd, !flags));
	case 4: /* and, orr, eor write sp with rd 31; ands writes xzr */
		return set(insn, logical_names[opc << 1], rd_bit(rd, opc != 3));
	case 5:
		return opc == 1 ? -EINVAL : set(insn, movewide_names[opc], rd_bit(rd, false));
	case 6:
		return opc == 3 ? -EINVAL : set(insn, bitfield_names[opc], rd_bit(rd, false));
	case 7:
		return set(insn, "extr", rd_bit(rd, false));
	}
	return -EINVAL;
}

/* Register operands: logical, add/sub, adc, conditional ones, 1-, 2- and 3-source. */
static int decode_dp_reg(struct insn *insn, uint32_t w)
{
	unsigned int rd = field(w, 0, 5), opc = field(w, 29, 2);
	bool flags = field(w, 29, 1);

	if ((w & 0x1f000000) == 0x0a000000) {
		/* mov xd, xm is orr xd, xzr, xm: a whole copy */
		if ((w & 0xffe0ffe0) == 0xaa0003e0) {
			insn->copy = true;
			insn->copy_src = field(w, 16, 5);
			return set(insn, "mov", rd_bit(rd, false));
		}
		return set(insn, logical_names[opc << 1 | field(w, 21, 1)], rd_bit(rd, false));
	}
	if ((w & 0x1f200000) == 0x0b000000)
		return set(insn, addsub_names[opc], rd_bit(rd, false));
	/* the extended-register form writes sp with rd 31 unless it sets flags */
	if ((w & 0x1fe00000) == 0x0b200000)
		return set(insn, addsub_names[opc], rd_bit(rd, !flags));
	switch (field(w, 21, 8)) {
	case 0xd0: /* adc, sbc */
	case 0xd4: /* csel, csinc, csinv, csneg */
	case 0xd6: /* 1- and 2-source: rbit, clz, lsl, udiv ... */
		return set(insn, "alu", rd_bit(rd, false));
	case 0xd2: /* ccmp, ccmn: flags only */
		return set(insn, "ccmp", 0);
	}
	if (field(w, 24, 5) == 0x1b) /* madd, msub, smulh, umulh ... */
		return set(insn, "mul", rd_bit(rd, false));
	return -EINVAL;
}

/* The general registers a load writes or a store saves: Rt, and Rt2 of a pair. */
static uint32_t transfer_regs(uint32_t w, bool pair)
{
	uint32_t regs = rd_bit(field(w, 0, 5), false);

	return pair ? regs | rd_bit(field(w, 10, 5), false) : regs;
}

/*
 * Loads and stores of one register or a pair, with immediate or register
 * offsets. A literal load is passed, never probed (rejected). Exclusive
 * and atomic ones are refused: the kernel will not step them.
 */
static int decode_ldst(struct insn *insn, uint32_t w)
{
	bool simd = field(w, 26, 1), pair = field(w, 27, 3) == 5, load;
	unsigned int mode = 0; /* 1: post-index, 3: pre-index (writeback) */
	uint32_t regs, base;

	if (field(w, 27, 3) == 3 && field(w, 24, 2) == 0) {
		/* ldr literal; prfm (opc 3) writes nothing */
		bool prfm = field(w, 30, 2) == 3;

		return set(insn, "ldr", simd || prfm ? 0 : rd_bit(field(w, 0, 5), false));
	}
	if (pair) {
		load = field(w, 22, 1);
		mode = field(w, 23, 2);
	} else if (field(w, 27, 3) == 7 && field(w, 24, 2) == 1) {
		load = field(w, 22, 2) != 0;
	} else if (field(w, 27, 3) == 7 && !field(w, 24, 2) && !field(w, 21, 1)) {
		load = field(w, 22, 2) != 0;
		mode = field(w, 10, 2) & 1 ? field(w, 10, 2) : 0;
	} else if (field(w, 27, 3) == 7 && !field(w, 24, 2) && field(w, 10, 2) == 2) {
		load = field(w, 22, 2) != 0;
	} else {
		return -EINVAL;
	}
	/* prfm is size 3, opc 2: a load to nowhere */
	if (!pair && !simd && field(w, 30, 2) == 3 && field(w, 22, 2) == 2)
		return set(insn, "prfm", 0);
	regs = simd ? 0 : transfer_regs(w, pair);
	/* the base register, sp with 31, is written back */
	base = mode == 1 || mode == 3 ? INSN_REG_BIT(field(w, 5, 5)) : 0;
	if (base == INSN_REG_BIT(SP)) {
		insn->sp_known = true;
		insn->sp_delta = pair ? pair_offset(w, simd) : signed_field(w, 12, 9);
	}
	if (load) {
		insn->restores_ra = (regs & INSN_REG_BIT(LR)) && field(w, 5, 5) == SP;
		return set(insn, pair ? "ldp" : "ldr", regs | base);
	}
	insn->saves_ra = regs & INSN_REG_BIT(LR);
	return set(insn, pair ? "stp" : "str", base);
}

static int arm64_insn__decode(struct insn *insn, const uint8_t *code, size_t len)
{
	uint32_t w;
	int err;

	*insn = (struct insn){0};
	if (len < INSN_LEN)
		return -ENODATA;
	w = code[0] | code[1] << 8 | code[2] << 16 | (uint32_t)code[3] << 24;
	err = decode_branch(insn, w);
	if (err > 0) {
		if ((w & 0xffc00000) == 0xd5000000)
			err = decode_system(insn, w);
		else if ((w & 0x1c000000) == 0x10000000)
			err = decode_dp_imm(insn, w);
		else if ((w & 0x0e000000) == 0x0a000000)
			err = decode_dp_reg(insn, w);
		else if ((w & 0x0a000000) == 0x08000000)
			err = decode_ldst(insn, w);
		else
			err = -EINVAL;
	}
	if (err)
		*insn = (struct insn){0};
	else
		insn->len = INSN_LEN;
	return err;
}

const struct insn_arch insn_arm64 = {
    .name = "arm64",
    .decode = arm64_insn__decode,
    .reg_name = arm64_reg_name,
    .nr_regs = 32,
    .insn_len = INSN_LEN,
    .sp = SP,
    .ra = LR,
    .arg_regs = {0, 1, 2, 3, 4, 5},
    .no_step = "simulate",
    .step_cost = "two exceptions a call instead of one",
};
