// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A small x86-64 decoder for probe placement: an instruction's length,
 * whether it branches, which general registers it writes, and whether the
 * kernel emulates a uprobe on it (arch/x86/kernel/uprobes.c: push reg, its
 * own NOPs, and jmp, call and jcc to a relative target) instead of
 * single-stepping it out of line.
 */
#include <errno.h>
#include <string.h>
#include "probe/x86_insn.h"

#define MAX_INSN_LEN 15
#define RAX	     X86_REG_BIT(X86_REG_RAX)
#define RDX	     X86_REG_BIT(X86_REG_RDX)
#define RSP	     X86_REG_BIT(X86_REG_RSP)

/* Which operands of a ModRM instruction it writes. */
enum {
	DEST_REG = 1 << 0, /* the ModRM reg field's register */
	DEST_RM = 1 << 1,  /* the r/m operand, when it is a register */
};

struct decoder {
	const uint8_t *code;
	size_t len;  /* readable bytes at code */
	size_t pos;  /* the next byte to decode */
	bool legacy; /* any legacy prefix */
	bool opsize; /* 0x66: 16-bit operands */
	uint8_t rep; /* 0xf2 or 0xf3, else 0 */
	uint8_t rex; /* 0x40-0x4f, else 0 */
	uint8_t modrm;
	struct insn *insn;
};

static const char *const alu_names[8] = {"add", "or", "adc", "sbb", "and", "sub", "xor", "cmp"};
static const char *const shift_names[8] = {"rol", "ror", "rcl", "rcr", "shl", "shr", "sal", "sar"};
static const char *const group3_names[4] = {"mul", "imul", "div", "idiv"};
static const char *const jcc_names[16] = {"jo", "jno", "jb", "jae", "je", "jne", "jbe", "ja",
					  "js", "jns", "jp", "jnp", "jl", "jge", "jle", "jg"};

/* The kernel's 64-bit NOPs (x86_nops[]): a probe on one of these is emulated. */
static const uint8_t kernel_nops[][11] = {
    [1] = {0x90},
    [2] = {0x66, 0x90},
    [3] = {0x0f, 0x1f, 0x00},
    [4] = {0x0f, 0x1f, 0x40, 0x00},
    [5] = {0x0f, 0x1f, 0x44, 0x00, 0x00},
    [6] = {0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00},
    [7] = {0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00},
    [8] = {0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
    [9] = {0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
    [10] = {0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
    [11] = {0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
};

const char *x86_reg_name(unsigned int reg)
{
	static const char *const names[X86_REG_MAX] = {
	    "rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	    "r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15",
	};

	return reg < X86_REG_MAX ? names[reg] : "?";
}

static int skip(struct decoder *d, size_t n)
{
	if (d->pos + n > MAX_INSN_LEN)
		return -EINVAL;
	if (d->pos + n > d->len)
		return -ENODATA;
	d->pos += n;
	return 0;
}

static int next(struct decoder *d, uint8_t *byte)
{
	int err = skip(d, 1);

	if (!err)
		*byte = d->code[d->pos - 1];
	return err;
}

static bool is_legacy_prefix(uint8_t b)
{
	switch (b) {
	case 0x26: /* es, cs, ss, ds */
	case 0x2e:
	case 0x36:
	case 0x3e:
	case 0x64: /* fs, gs */
	case 0x65:
	case 0x66: /* operand size, address size */
	case 0x67:
	case 0xf0: /* lock, repne, rep */
	case 0xf2:
	case 0xf3:
		return true;
	}
	return false;
}

/* Prefixes into @d, then the first opcode byte into @op. */
static int read_opcode(struct decoder *d, uint8_t *op)
{
	int err;

	while (!(err = next(d, op)) && is_legacy_prefix(*op)) {
		d->legacy = true;
		d->opsize |= *op == 0x66;
		if (*op == 0xf2 || *op == 0xf3)
			d->rep = *op;
	}
	/* REX counts only right before the opcode. */
	if (err || (*op & 0xf0) != 0x40)
		return err;
	d->rex = *op;
	return next(d, op);
}

/* ModRM, then SIB and displacement when the ModRM asks for them. */
static int read_modrm(struct decoder *d)
{
	uint8_t mod, rm, sib = 0;
	int err = next(d, &d->modrm);

	if (err)
		return err;
	mod = d->modrm >> 6;
	rm = d->modrm & 7;
	if (mod == 3)
		return 0;
	if (rm == 4 && (err = next(d, &sib)))
		return err;
	if (mod == 1)
		return skip(d, 1);
	/* mod 0: rm 5 is rip-relative and SIB base 5 absolute, both with disp32. */
	if (mod == 2 || rm == 5 || (rm == 4 && (sib & 7) == 5))
		return skip(d, 4);
	return 0;
}

static unsigned int modrm_reg(const struct decoder *d)
{
	return (d->modrm >> 3) & 7;
}

/* One register: without REX, byte registers 4-7 are ah, ch, dh and bh. */
static uint16_t reg_bit(const struct decoder *d, unsigned int reg, bool byte)
{
	return X86_REG_BIT(byte && !d->rex && reg >= 4 ? reg - 4 : reg);
}

static uint16_t dest_writes(const struct decoder *d, unsigned int dest, bool byte)
{
	uint16_t writes = 0;

	if (dest & DEST_REG)
		writes |= reg_bit(d, (d->rex & 4) << 1 | modrm_reg(d), byte);
	/* An r/m in memory writes no register. */
	if ((dest & DEST_RM) && (d->modrm >> 6) == 3)
		writes |= reg_bit(d, (d->rex & 1) << 3 | (d->modrm & 7), byte);
	return writes;
}

/* An Iz immediate: 16 bits after 0x66 unless REX.W, else 32. */
static size_t imm_z(const struct decoder *d)
{
	return d->opsize && !(d->rex & 8) ? 2 : 4;
}

static int set(struct decoder *d, const char *name, uint16_t writes)
{
	d->insn->name = name;
	d->insn->writes = writes;
	return 0;
}

static int modrm_op(struct decoder *d, const char *name, unsigned int dest, bool byte)
{
	int err = read_modrm(d);

	return err ? err : set(d, name, dest_writes(d, dest, byte));
}

/*
 * jmp, call and jcc to a relative target, which the kernel emulates. It
 * refuses them after 0x66, whose length differs between Intel and AMD.
 */
static int rel_branch(struct decoder *d, const char *name, size_t size, uint16_t writes)
{
	int err = d->opsize ? -EINVAL : skip(d, size);
	const uint8_t *imm;

	if (err)
		return err;
	imm = d->code + d->pos - size;
	d->insn->disp =
	    size == 1 ? (int8_t)imm[0]
		      : (int32_t)(imm[0] | imm[1] << 8 | imm[2] << 16 | (uint32_t)imm[3] << 24);
	d->insn->branch = true;
	d->insn->emulated = true;
	return set(d, name, writes);
}

/* add, or, adc, sbb, and, sub, xor and cmp in their ModRM and rAX forms. */
static int decode_alu(struct decoder *d, uint8_t op)
{
	unsigned int form = op & 7, which = op >> 3, dest;
	int err;

	if (form < 4) {
		dest = which == 7 ? 0 : form & 2 ? DEST_REG : DEST_RM;
		return modrm_op(d, alu_names[which], dest, !(op & 1));
	}
	err = skip(d, form == 4 ? 1 : imm_z(d));
	return err ? err : set(d, alu_names[which], which == 7 ? 0 : RAX);
}

/* 0x80, 0x81, 0x83: the ALU operation in the reg field, with an immediate. */
static int decode_group1(struct decoder *d, uint8_t op)
{
	int err = modrm_op(d, NULL, DEST_RM, op == 0x80);

	if (err)
		return err;
	d->insn->name = alu_names[modrm_reg(d)];
	if (modrm_reg(d) == 7)
		d->insn->writes = 0;
	return skip(d, op == 0x81 ? imm_z(d) : 1);
}

/* 0xc0, 0xc1, 0xd0-0xd3: shifts and rotates by an immediate, 1 or cl. */
static int decode_shift(struct decoder *d, uint8_t op)
{
	int err = modrm_op(d, NULL, DEST_RM, !(op & 1));

	if (err)
		return err;
	d->insn->name = shift_names[modrm_reg(d)];
	return op <= 0xc1 ? skip(d, 1) : 0;
}

/* 0xf6, 0xf7: test with an immediate, not, neg; mul and div write rdx:rax. */
static int decode_group3(struct decoder *d, uint8_t op)
{
	int err = modrm_op(d, NULL, DEST_RM, op == 0xf6);
	unsigned int which = modrm_reg(d);

	if (err)
		return err;
	switch (which) {
	case 0:
		set(d, "test", 0);
		return skip(d, op == 0xf6 ? 1 : imm_z(d));
	case 1:
		return -EINVAL;
	case 2:
	case 3:
		d->insn->name = which == 2 ? "not" : "neg";
		return 0;
	}
	return set(d, group3_names[which - 4], RAX | RDX);
}

/* 0xfe, 0xff: inc, dec; for 0xff also indirect call and jmp, and push. */
static int decode_group5(struct decoder *d, uint8_t op)
{
	int err = modrm_op(d, NULL, DEST_RM, op == 0xfe);
	unsigned int which = modrm_reg(d);

	if (err)
		return err;
	if (which <= 1) {
		d->insn->name = which ? "dec" : "inc";
		return 0;
	}
	if (op == 0xfe)
		return -EINVAL;
	switch (which) {
	case 2:
		d->insn->branch = true;
		return set(d, "call", RSP);
	case 4:
		d->insn->branch = true;
		return set(d, "jmp", 0);
	case 6:
		return set(d, "push", RSP);
	}
	return -EINVAL; /* far call and jmp */
}

/* 0x50-0x5f. The kernel emulates push alone or after REX 0x41 (r8-r15). */
static int decode_push_pop(struct decoder *d, uint8_t op)
{
	unsigned int reg = (d->rex & 1) << 3 | (op & 7);

	if (op >= 0x58)
		return set(d, "pop", X86_REG_BIT(reg) | RSP);
	d->insn->emulated = !d->legacy && (!d->rex || d->rex == 0x41);
	return set(d, "push", RSP);
}

/* 0xb0-0xbf: mov of an immediate to a register, 64-bit with REX.W. */
static int decode_mov_imm(struct decoder *d, uint8_t op)
{
	unsigned int reg = (d->rex & 1) << 3 | (op & 7);
	bool byte = op < 0xb8;
	int err = skip(d, byte ? 1 : d->rex & 8 ? 8 : imm_z(d));

	return err ? err : set(d, "mov", reg_bit(d, reg, byte));
}

static int decode_mov_rm_imm(struct decoder *d, uint8_t op)
{
	int err = modrm_op(d, "mov", DEST_RM, op == 0xc6);

	/* The other reg values are xabort and xbegin. */
	if (err || modrm_reg(d))
		return err ? err : -EINVAL;
	return skip(d, op == 0xc6 ? 1 : imm_z(d));
}

/*
 * 0x89 and 0x8b. Between 64-bit registers it is a whole copy, which probe
 * placement follows: an argument moved so is still there to read.
 */
static int decode_mov(struct decoder *d, uint8_t op)
{
	int err = modrm_op(d, "mov", op == 0x89 ? DEST_RM : DEST_REG, false);
	unsigned int reg = (d->rex & 4) << 1 | modrm_reg(d);
	unsigned int rm = (d->rex & 1) << 3 | (d->modrm & 7);

	if (!err && (d->rex & 8) && (d->modrm >> 6) == 3) {
		d->insn->copy = true;
		d->insn->copy_src = op == 0x89 ? reg : rm;
	}
	return err;
}

/* 0x90 is a NOP the kernel emulates, but with REX.B it is xchg r8, rax. */
static int decode_nop(struct decoder *d)
{
	if (d->rex & 1)
		return set(d, "xchg", RAX | X86_REG_BIT(X86_REG_R8));
	d->insn->emulated = true;
	return set(d, "nop", 0);
}

/* The two-byte opcodes 0x0f xx. */
static int decode_0f(struct decoder *d)
{
	uint8_t op;
	int err = next(d, &op);

	if (err)
		return err;
	if (op >= 0x80 && op <= 0x8f)
		return rel_branch(d, jcc_names[op & 15], 4, 0);
	if (op >= 0x40 && op <= 0x4f)
		return modrm_op(d, "cmov", DEST_REG, false);
	if (op >= 0x90 && op <= 0x9f)
		return modrm_op(d, "set", DEST_RM, true);
	switch (op) {
	case 0x1f: /* nop with a ModRM operand, which it does not touch */
		err = modrm_op(d, "nop", 0, false);
		d->insn->emulated = !err && d->pos < sizeof(kernel_nops) / sizeof(kernel_nops[0]) &&
				    !memcmp(d->code, kernel_nops[d->pos], d->pos);
		return err;
	case 0xaf:
		return modrm_op(d, "imul", DEST_REG, false);
	case 0xb6:
	case 0xb7:
		return modrm_op(d, "movzx", DEST_REG, false);
	case 0xbe:
	case 0xbf:
		return modrm_op(d, "movsx", DEST_REG, false);
	}
	return -EINVAL;
}

/* One-byte opcodes other than push, pop, mov imm and the ALU block. */
static int decode_misc(struct decoder *d, uint8_t op)
{
	switch (op) {
	case 0x63:
		return modrm_op(d, "movsxd", DEST_REG, false);
	case 0x80:
	case 0x81:
	case 0x83:
		return decode_group1(d, op);
	case 0x84:
	case 0x85:
		return modrm_op(d, "test", 0, false);
	case 0x86:
	case 0x87:
		return modrm_op(d, "xchg", DEST_REG | DEST_RM, op == 0x86);
	case 0x88:
		return modrm_op(d, "mov", DEST_RM, true);
	case 0x8a:
		return modrm_op(d, "mov", DEST_REG, true);
	case 0x89:
	case 0x8b:
		return decode_mov(d, op);
	case 0x8d:
		return modrm_op(d, "lea", DEST_REG, false);
	case 0x90:
		return decode_nop(d);
	case 0xa8:
	case 0xa9:
		set(d, "test", 0);
		return skip(d, op == 0xa8 ? 1 : imm_z(d));
	case 0xc0:
	case 0xc1:
	case 0xd0 ... 0xd3:
		return decode_shift(d, op);
	case 0xc2:
	case 0xc3:
		d->insn->branch = true;
		set(d, "ret", RSP);
		return op == 0xc2 ? skip(d, 2) : 0;
	case 0xc6:
	case 0xc7:
		return decode_mov_rm_imm(d, op);
	case 0xe8:
		return rel_branch(d, "call", 4, RSP);
	case 0xe9:
		return rel_branch(d, "jmp", 4, 0);
	case 0xeb:
		return rel_branch(d, "jmp", 1, 0);
	case 0xf6:
	case 0xf7:
		return decode_group3(d, op);
	case 0xfe:
	case 0xff:
		return decode_group5(d, op);
	}
	return -EINVAL;
}

static int decode_one_byte(struct decoder *d, uint8_t op)
{
	if (op < 0x40 && (op & 7) < 6)
		return decode_alu(d, op);
	if (op >= 0x50 && op <= 0x5f)
		return decode_push_pop(d, op);
	if (op >= 0x70 && op <= 0x7f)
		return rel_branch(d, jcc_names[op & 15], 1, 0);
	if (op >= 0xb0 && op <= 0xbf)
		return decode_mov_imm(d, op);
	return op == 0x0f ? decode_0f(d) : decode_misc(d, op);
}

/* After f2 or f3 only endbr64 and endbr32: elsewhere they change what an opcode means. */
static int decode_rep(struct decoder *d, uint8_t op)
{
	uint8_t op2, modrm;
	int err;

	if (d->rep != 0xf3 || op != 0x0f)
		return -EINVAL;
	err = next(d, &op2);
	if (!err)
		err = next(d, &modrm);
	if (err || op2 != 0x1e || (modrm != 0xfa && modrm != 0xfb))
		return err ? err : -EINVAL;
	return set(d, modrm == 0xfa ? "endbr64" : "endbr32", 0);
}

int x86_insn__decode(struct insn *insn, const uint8_t *code, size_t len)
{
	struct decoder d = {.code = code, .len = len, .insn = insn};
	uint8_t op;
	int err;

	memset(insn, 0, sizeof(*insn));
	err = read_opcode(&d, &op);
	if (!err)
		err = d.rep ? decode_rep(&d, op) : decode_one_byte(&d, op);
	if (err)
		memset(insn, 0, sizeof(*insn));
	else
		insn->len = d.pos;
	return err;
}

const struct insn_arch insn_x86 = {
    .name = "x86-64",
    .decode = x86_insn__decode,
    .reg_name = x86_reg_name,
    .nr_regs = X86_REG_MAX,
    .sp = X86_REG_RSP,
    .ra = -1,
    .arg_regs = {X86_REG_RDI, X86_REG_RSI, X86_REG_RDX, X86_REG_RCX, X86_REG_R8, X86_REG_R9},
    .no_step = "emulate",
    .step_cost = "about 5.5 us a call instead of 0.4-1 us",
};
