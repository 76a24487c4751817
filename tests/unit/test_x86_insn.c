// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "probe/x86_insn.h"

#define RAX X86_REG_BIT(X86_REG_RAX)
#define RCX X86_REG_BIT(X86_REG_RCX)
#define RDX X86_REG_BIT(X86_REG_RDX)
#define RSP X86_REG_BIT(X86_REG_RSP)
#define RBP X86_REG_BIT(X86_REG_RBP)
#define RSI X86_REG_BIT(X86_REG_RSI)
#define RDI X86_REG_BIT(X86_REG_RDI)
#define R8  X86_REG_BIT(X86_REG_R8)
#define R9  X86_REG_BIT(X86_REG_R9)

/* One instruction and what the decoder must say of it. */
struct insn_case {
	const char *what; /* its disassembly, for the failure message */
	uint8_t code[16];
	size_t size;
	int err;
	unsigned int len;
	const char *name;
	uint32_t writes;
	bool branch;
	bool emulated;
};

#define CODE(...) .code = {__VA_ARGS__}, .size = sizeof((const uint8_t[]){__VA_ARGS__})

/* Everything decoded, as one line: a mismatch shows both in full. */
static void describe(char *buf, size_t size, const char *what, int err, const struct insn *insn)
{
	snprintf(buf, size, "%s: err %d len %u %s writes %#x%s%s", what, err, insn->len,
		 insn->name ? insn->name : "-", insn->writes, insn->branch ? " branch" : "",
		 insn->emulated ? " emulated" : "");
}

/* Decode @n bytes of @c from a buffer of exactly that size, for ASan to watch. */
static int decode_n(const struct insn_case *c, size_t n, struct insn *insn)
{
	uint8_t *copy = malloc(n ? n : 1);
	int err;

	assert_non_null(copy);
	memcpy(copy, c->code, n);
	err = x86_insn__decode(insn, copy, n);
	free(copy);
	return err;
}

static void check_cases(const struct insn_case *cases, size_t nr)
{
	char want[160], got[160];
	struct insn insn;
	int err;

	for (size_t i = 0; i < nr; i++) {
		const struct insn_case *c = &cases[i];
		struct insn expect = {
		    .name = c->name,
		    .len = c->len,
		    .branch = c->branch,
		    .emulated = c->emulated,
		    .writes = c->writes,
		};

		err = decode_n(c, c->size, &insn);
		describe(want, sizeof(want), c->what, c->err, &expect);
		describe(got, sizeof(got), c->what, err, &insn);
		assert_string_equal(got, want);
	}
}

#define CHECK(cases) check_cases(cases, sizeof(cases) / sizeof(cases[0]))

/* Lengths through REX, ModRM, SIB and displacements; the register written. */
static const struct insn_case modrm_cases[] = {
    {"mov %rsp,%rbp", CODE(0x48, 0x89, 0xe5), .len = 3, .name = "mov", .writes = RBP},
    {"mov %rdi,%rax", CODE(0x48, 0x89, 0xf8), .len = 3, .name = "mov", .writes = RAX},
    {"mov %rax,%rdi", CODE(0x48, 0x89, 0xc7), .len = 3, .name = "mov", .writes = RDI},
    {"mov %rdi,%r8 (REX.B)", CODE(0x49, 0x89, 0xf8), .len = 3, .name = "mov", .writes = R8},
    {"mov %r8,%rdi (REX.R)", CODE(0x4c, 0x89, 0xc7), .len = 3, .name = "mov", .writes = RDI},
    {"mov %rsi,%rdx (reg form)", CODE(0x48, 0x8b, 0xd6), .len = 3, .name = "mov", .writes = RDX},
    {"lea 0x1(%r8),%r9", CODE(0x4d, 0x8d, 0x48, 0x01), .len = 4, .name = "lea", .writes = R9},
    {"mov 0x8(%rsp),%rax (SIB, disp8)", CODE(0x48, 0x8b, 0x44, 0x24, 0x08), .len = 5, .name = "mov",
     .writes = RAX},
    {"mov %rax,0x88(%rsp) (SIB, disp32, to memory)",
     CODE(0x48, 0x89, 0x84, 0x24, 0x88, 0x00, 0x00, 0x00), .len = 8, .name = "mov"},
    {"mov 0x1b8(%rax),%rax (disp32)", CODE(0x48, 0x8b, 0x80, 0xb8, 0x01, 0x00, 0x00), .len = 7,
     .name = "mov", .writes = RAX},
    {"mov %fs:0x28,%rax (SIB without base)",
     CODE(0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0x00, 0x00, 0x00), .len = 9, .name = "mov",
     .writes = RAX},
    {"mov (%rax,%r15,4),%eax (REX.X)", CODE(0x42, 0x8b, 0x04, 0xb8), .len = 4, .name = "mov",
     .writes = RAX},
    {"mov (%edi),%eax (addr32)", CODE(0x67, 0x8b, 0x07), .len = 3, .name = "mov", .writes = RAX},
    {"mov 0x1bb159(%rip),%rax", CODE(0x48, 0x8b, 0x05, 0x59, 0xb1, 0x1b, 0x00), .len = 7,
     .name = "mov", .writes = RAX},
    {"lea 0x10c9f(%rip),%rcx", CODE(0x48, 0x8d, 0x0d, 0x9f, 0x0c, 0x01, 0x00), .len = 7,
     .name = "lea", .writes = RCX},
    {"movslq %esi,%r12", CODE(0x4c, 0x63, 0xe6), .len = 3, .name = "movsxd",
     .writes = X86_REG_BIT(12)},
    {"cmp %rsi,%rdi", CODE(0x48, 0x39, 0xf7), .len = 3, .name = "cmp"},
    {"test %rdi,%rdi", CODE(0x48, 0x85, 0xff), .len = 3, .name = "test"},
    {"xchg %rdi,%rsi", CODE(0x48, 0x87, 0xfe), .len = 3, .name = "xchg", .writes = RSI | RDI},
    {"xor %eax,%eax", CODE(0x31, 0xc0), .len = 2, .name = "xor", .writes = RAX},
    {"cmovne %rdi,%rax", CODE(0x48, 0x0f, 0x45, 0xc7), .len = 4, .name = "cmov", .writes = RAX},
    {"imul %rsi,%rdx", CODE(0x48, 0x0f, 0xaf, 0xd6), .len = 4, .name = "imul", .writes = RDX},
    {"inc %rcx", CODE(0x48, 0xff, 0xc1), .len = 3, .name = "inc", .writes = RCX},
    {"decl (%rdi)", CODE(0xff, 0x0f), .len = 2, .name = "dec"},
    {"mul %rsi: rdx:rax", CODE(0x48, 0xf7, 0xe6), .len = 3, .name = "mul", .writes = RAX | RDX},
    {"divb (%rdi): ax, counted as rdx:rax", CODE(0xf6, 0x37), .len = 2, .name = "div",
     .writes = RAX | RDX},
    {"neg %rdi", CODE(0x48, 0xf7, 0xdf), .len = 3, .name = "neg", .writes = RDI},
    {"not %r9", CODE(0x49, 0xf7, 0xd1), .len = 3, .name = "not", .writes = R9},
    {"shl %cl,%rdi", CODE(0x48, 0xd3, 0xe7), .len = 3, .name = "shl", .writes = RDI},
    {"sar %rsi", CODE(0x48, 0xd1, 0xfe), .len = 3, .name = "sar", .writes = RSI},
};

static void test_modrm(void **state)
{
	CHECK(modrm_cases);
}

/* Ib, Iz (16 bits after 0x66 unless REX.W), and mov's 64-bit immediate. */
static const struct insn_case imm_cases[] = {
    {"sub $0x18,%rsp", CODE(0x48, 0x83, 0xec, 0x18), .len = 4, .name = "sub", .writes = RSP},
    {"sub $0x88,%rsp", CODE(0x48, 0x81, 0xec, 0x88, 0x00, 0x00, 0x00), .len = 7, .name = "sub",
     .writes = RSP},
    {"cmp $0x1000,%si", CODE(0x66, 0x81, 0xfe, 0x00, 0x10), .len = 5, .name = "cmp"},
    {"cmp $0x1000,%rsi (REX.W over 0x66)", CODE(0x66, 0x48, 0x81, 0xfe, 0x00, 0x10, 0x00, 0x00),
     .len = 8, .name = "cmp"},
    {"and $0xfff00,%r14d", CODE(0x41, 0x81, 0xe6, 0x00, 0xff, 0x0f, 0x00), .len = 7, .name = "and",
     .writes = X86_REG_BIT(14)},
    {"cmpb $0x0,0x141b46(%rip)", CODE(0x80, 0x3d, 0x46, 0x1b, 0x14, 0x00, 0x00), .len = 7,
     .name = "cmp"},
    {"and $0xf0,%eax", CODE(0x25, 0xf0, 0x00, 0x00, 0x00), .len = 5, .name = "and", .writes = RAX},
    {"cmp $-0xfff,%rax", CODE(0x48, 0x3d, 0x01, 0xf0, 0xff, 0xff), .len = 6, .name = "cmp"},
    {"add $0x10,%ax", CODE(0x66, 0x05, 0x10, 0x00), .len = 4, .name = "add", .writes = RAX},
    {"mov $0xb,%eax", CODE(0xb8, 0x0b, 0x00, 0x00, 0x00), .len = 5, .name = "mov", .writes = RAX},
    {"movabs $0x1122334455667788,%rax",
     CODE(0x48, 0xb8, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11), .len = 10, .name = "mov",
     .writes = RAX},
    {"mov $0x1234,%dx", CODE(0x66, 0xba, 0x34, 0x12), .len = 4, .name = "mov", .writes = RDX},
    {"mov $-1,%rdi (imm32 with REX.W)", CODE(0x48, 0xc7, 0xc7, 0xff, 0xff, 0xff, 0xff), .len = 7,
     .name = "mov", .writes = RDI},
    {"movw $0x1,(%rax)", CODE(0x66, 0xc7, 0x00, 0x01, 0x00), .len = 5, .name = "mov"},
    {"movb $0x1,0x0(%rip)", CODE(0xc6, 0x05, 0x00, 0x00, 0x00, 0x00, 0x01), .len = 7,
     .name = "mov"},
    {"test $0xfff,%edi", CODE(0xf7, 0xc7, 0xff, 0x0f, 0x00, 0x00), .len = 6, .name = "test"},
    {"test $0xfff,%di", CODE(0x66, 0xf7, 0xc7, 0xff, 0x0f), .len = 5, .name = "test"},
    {"testb $0x1,(%rdi)", CODE(0xf6, 0x07, 0x01), .len = 3, .name = "test"},
    {"test $0x2,%al", CODE(0xa8, 0x02), .len = 2, .name = "test"},
    {"test $0x1000,%eax", CODE(0xa9, 0x00, 0x10, 0x00, 0x00), .len = 5, .name = "test"},
    {"shr $0x1a,%rax", CODE(0x48, 0xc1, 0xe8, 0x1a), .len = 4, .name = "shr", .writes = RAX},
    {"rol $0x3,%dl", CODE(0xc0, 0xc2, 0x03), .len = 3, .name = "rol", .writes = RDX},
};

static void test_immediates(void **state)
{
	CHECK(imm_cases);
}

/* Without REX, byte registers 4-7 are ah, ch, dh and bh; with it, spl-dil. */
static const struct insn_case byte_reg_cases[] = {
    {"mov %al,%dh", CODE(0x88, 0xc6), .len = 2, .name = "mov", .writes = RDX},
    {"mov %al,%sil", CODE(0x40, 0x88, 0xc6), .len = 3, .name = "mov", .writes = RSI},
    {"mov (%rax),%bh", CODE(0x8a, 0x38), .len = 2, .name = "mov",
     .writes = X86_REG_BIT(X86_REG_RBX)},
    {"mov (%rax),%dil", CODE(0x40, 0x8a, 0x38), .len = 3, .name = "mov", .writes = RDI},
    {"mov $0x1,%dh", CODE(0xb6, 0x01), .len = 2, .name = "mov", .writes = RDX},
    {"mov $0x1,%sil", CODE(0x40, 0xb6, 0x01), .len = 3, .name = "mov", .writes = RSI},
    {"mov $0x1,%r9b", CODE(0x41, 0xb1, 0x01), .len = 3, .name = "mov", .writes = R9},
    {"sete %cl", CODE(0x0f, 0x94, 0xc1), .len = 3, .name = "set", .writes = RCX},
    {"sete %ch", CODE(0x0f, 0x94, 0xc5), .len = 3, .name = "set", .writes = RCX},
    {"movzbl %al,%eax", CODE(0x0f, 0xb6, 0xc0), .len = 3, .name = "movzx", .writes = RAX},
    {"movsbl (%rdi),%esi", CODE(0x0f, 0xbe, 0x37), .len = 3, .name = "movsx", .writes = RSI},
    {"xor %ch,%al", CODE(0x30, 0xe8), .len = 2, .name = "xor", .writes = RAX},
    {"add %al,%ch", CODE(0x02, 0xe8), .len = 2, .name = "add", .writes = RCX},
};

static void test_byte_registers(void **state)
{
	CHECK(byte_reg_cases);
}

/* The kernel emulates push reg alone or after REX 0x41, nothing else. */
static const struct insn_case push_pop_cases[] = {
    {"push %rbx", CODE(0x53), .len = 1, .name = "push", .writes = RSP, .emulated = true},
    {"push %r12", CODE(0x41, 0x54), .len = 2, .name = "push", .writes = RSP, .emulated = true},
    {"rex.W push %rbx", CODE(0x48, 0x53), .len = 2, .name = "push", .writes = RSP},
    {"push %bx", CODE(0x66, 0x53), .len = 2, .name = "push", .writes = RSP},
    {"push 0x0(%rip)", CODE(0xff, 0x35, 0x00, 0x00, 0x00, 0x00), .len = 6, .name = "push",
     .writes = RSP},
    {"pop %rdi", CODE(0x5f), .len = 1, .name = "pop", .writes = RDI | RSP},
    {"pop %r9", CODE(0x41, 0x59), .len = 2, .name = "pop", .writes = R9 | RSP},
};

static void test_push_pop(void **state)
{
	CHECK(push_pop_cases);
}

/* Emulated: the kernel's own NOPs (x86_nops[]) and 0x90 behind any prefix. */
static const struct insn_case nop_cases[] = {
    {"nop", CODE(0x90), .len = 1, .name = "nop", .emulated = true},
    {"xchg %ax,%ax", CODE(0x66, 0x90), .len = 2, .name = "nop", .emulated = true},
    {"data16 xchg %ax,%ax", CODE(0x66, 0x66, 0x90), .len = 3, .name = "nop", .emulated = true},
    {"xchg %eax,%r8d", CODE(0x41, 0x90), .len = 2, .name = "xchg", .writes = RAX | R8},
    {"nopl (%rax)", CODE(0x0f, 0x1f, 0x00), .len = 3, .name = "nop", .emulated = true},
    {"nopl 0x0(%rax)", CODE(0x0f, 0x1f, 0x40, 0x00), .len = 4, .name = "nop", .emulated = true},
    {"nopl 0x0(%rax,%rax,1)", CODE(0x0f, 0x1f, 0x44, 0x00, 0x00), .len = 5, .name = "nop",
     .emulated = true},
    {"nopw 0x0(%rax,%rax,1)", CODE(0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00), .len = 6, .name = "nop",
     .emulated = true},
    {"nopl 0x0(%rax) (disp32)", CODE(0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00), .len = 7,
     .name = "nop", .emulated = true},
    {"nopl 0x0(%rax,%rax,1) (disp32)", CODE(0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00),
     .len = 8, .name = "nop", .emulated = true},
    {"cs nopw 0x0(%rax,%rax,1)", CODE(0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00),
     .len = 10, .name = "nop", .emulated = true},
    {"data16 cs nopw 0x0(%rax,%rax,1)",
     CODE(0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00), .len = 11,
     .name = "nop", .emulated = true},
    /* NOPs the kernel does not list: single-stepped, though harmless to pass. */
    {"nopw 0x0(%rax,%rax,1) (9 bytes, no cs)",
     CODE(0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00), .len = 9, .name = "nop"},
    {"nopl 0x1(%rax,%rax,1)", CODE(0x0f, 0x1f, 0x44, 0x00, 0x01), .len = 5, .name = "nop"},
    {"endbr64", CODE(0xf3, 0x0f, 0x1e, 0xfa), .len = 4, .name = "endbr64"},
    {"endbr32", CODE(0xf3, 0x0f, 0x1e, 0xfb), .len = 4, .name = "endbr32"},
};

static void test_nops(void **state)
{
	CHECK(nop_cases);
}

/* Relative jmp, call and jcc are emulated; ret and indirect branches are not. */
static const struct insn_case branch_cases[] = {
    {"je +0x7", CODE(0x74, 0x07), .len = 2, .name = "je", .branch = true, .emulated = true},
    {"jg -0x2", CODE(0x7f, 0xfe), .len = 2, .name = "jg", .branch = true, .emulated = true},
    {"je +0xbf", CODE(0x0f, 0x84, 0xbf, 0x00, 0x00, 0x00), .len = 6, .name = "je", .branch = true,
     .emulated = true},
    {"jo +0x0", CODE(0x0f, 0x80, 0x00, 0x00, 0x00, 0x00), .len = 6, .name = "jo", .branch = true,
     .emulated = true},
    {"jmp -0x2", CODE(0xeb, 0xfe), .len = 2, .name = "jmp", .branch = true, .emulated = true},
    {"jmp -0x9ce", CODE(0xe9, 0x32, 0xf6, 0xff, 0xff), .len = 5, .name = "jmp", .branch = true,
     .emulated = true},
    {"call +0x0", CODE(0xe8, 0x00, 0x00, 0x00, 0x00), .len = 5, .name = "call", .writes = RSP,
     .branch = true, .emulated = true},
    {"ret", CODE(0xc3), .len = 1, .name = "ret", .writes = RSP, .branch = true},
    {"ret $0x8", CODE(0xc2, 0x08, 0x00), .len = 3, .name = "ret", .writes = RSP, .branch = true},
    {"jmp *%rax", CODE(0xff, 0xe0), .len = 2, .name = "jmp", .branch = true},
    {"notrack jmp *%rax", CODE(0x3e, 0xff, 0xe0), .len = 3, .name = "jmp", .branch = true},
    {"call *0x0(%rip)", CODE(0xff, 0x15, 0x00, 0x00, 0x00, 0x00), .len = 6, .name = "call",
     .writes = RSP, .branch = true},
};

static void test_branches(void **state)
{
	CHECK(branch_cases);
}

/* What the decoder does not know, or knows to mean something else. */
static const struct insn_case refused_cases[] = {
    {"syscall", CODE(0x0f, 0x05), .err = -EINVAL},
    {"int3", CODE(0xcc), .err = -EINVAL},
    {"ud2", CODE(0x0f, 0x0b), .err = -EINVAL},
    {"rep movsb", CODE(0xf3, 0xa4), .err = -EINVAL},
    {"repz ret", CODE(0xf3, 0xc3), .err = -EINVAL},
    {"pause", CODE(0xf3, 0x90), .err = -EINVAL},
    {"rdsspd %eax (not endbr)", CODE(0xf3, 0x0f, 0x1e, 0xc8), .err = -EINVAL},
    {"bnd jmp", CODE(0xf2, 0xe9, 0x00, 0x00, 0x00, 0x00), .err = -EINVAL},
    {"xbegin", CODE(0xc7, 0xf8, 0x00, 0x00, 0x00, 0x00), .err = -EINVAL},
    {"xabort", CODE(0xc6, 0xf8, 0x00), .err = -EINVAL},
    {"vzeroupper (VEX)", CODE(0xc5, 0xf8, 0x77), .err = -EINVAL},
    {"movq %rdi,%xmm0 (SSE)", CODE(0x66, 0x48, 0x0f, 0x6e, 0xc7), .err = -EINVAL},
    {"jmpw (0x66: 2 or 4 bytes by vendor)", CODE(0x66, 0xe9, 0x00, 0x00), .err = -EINVAL},
    {"data16 je", CODE(0x66, 0x74, 0x07), .err = -EINVAL},
    {"REX twice", CODE(0x48, 0x48, 0x89, 0xe5), .err = -EINVAL},
    {"prefix after REX", CODE(0x48, 0x66, 0x89, 0xe5), .err = -EINVAL},
    {"f7 /1", CODE(0xf7, 0xc8, 0x00, 0x00, 0x00, 0x00), .err = -EINVAL},
    {"lcall *(%rax)", CODE(0xff, 0x18), .err = -EINVAL},
    {"ff /7", CODE(0xff, 0xf8), .err = -EINVAL},
    {"fe /2", CODE(0xfe, 0xd0), .err = -EINVAL},
    {"cpuid", CODE(0x0f, 0xa2), .err = -EINVAL},
    {"cqto", CODE(0x48, 0x99), .err = -EINVAL},
    {"16 bytes",
     CODE(0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66,
	  0x90),
     .err = -EINVAL},
    {"15 bytes",
     CODE(0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x90),
     .len = 15, .name = "nop", .emulated = true},
    {"nothing", .size = 0, .err = -ENODATA},
};

static void test_refused(void **state)
{
	CHECK(refused_cases);
}

/* Each known instruction cut short is -ENODATA, whatever its prefixes and operands. */
static void check_truncated(const struct insn_case *cases, size_t nr)
{
	struct insn insn;

	for (size_t i = 0; i < nr; i++) {
		for (size_t n = 0; !cases[i].err && n < cases[i].len; n++) {
			assert_int_equal(decode_n(&cases[i], n, &insn), -ENODATA);
			assert_int_equal(insn.len, 0);
			assert_null(insn.name);
		}
	}
}

#define CHECK_TRUNCATED(cases) check_truncated(cases, sizeof(cases) / sizeof(cases[0]))

static void test_truncated(void **state)
{
	CHECK_TRUNCATED(modrm_cases);
	CHECK_TRUNCATED(imm_cases);
	CHECK_TRUNCATED(byte_reg_cases);
	CHECK_TRUNCATED(push_pop_cases);
	CHECK_TRUNCATED(nop_cases);
	CHECK_TRUNCATED(branch_cases);
}

/* The bytes after an instruction are not part of it. */
static void test_followed_by_more(void **state)
{
	static const uint8_t code[] = {0x48, 0x85, 0xff, 0x0f, 0x84, 0xbf, 0x00, 0x00, 0x00, 0x55};
	struct insn insn;

	assert_int_equal(x86_insn__decode(&insn, code, sizeof(code)), 0);
	assert_int_equal(insn.len, 3);
	assert_int_equal(x86_insn__decode(&insn, code + 3, sizeof(code) - 3), 0);
	assert_int_equal(insn.len, 6);
	assert_string_equal(insn.name, "je");
	assert_int_equal(x86_insn__decode(&insn, code + 9, 1), 0);
	assert_int_equal(insn.len, 1);
	assert_true(insn.emulated);
}

/* One instruction's copy source ("-" for none) and displacement. */
static void check_copy(const uint8_t *code, size_t size, const char *copy, int32_t disp)
{
	struct insn insn;

	assert_int_equal(x86_insn__decode(&insn, code, size), 0);
	assert_string_equal(insn.copy ? x86_reg_name(insn.copy_src) : "-", copy);
	assert_int_equal(insn.disp, disp);
}

#define CHECK_COPY(copy, disp, ...)                                                                \
	check_copy((const uint8_t[]){__VA_ARGS__}, sizeof((const uint8_t[]){__VA_ARGS__}), copy,   \
		   disp)

/* What placement follows: whole register copies, and where a relative branch goes. */
static void test_copies_and_targets(void **state)
{
	CHECK_COPY("rdi", 0, 0x48, 0x89, 0xfe); /* mov %rdi,%rsi */
	CHECK_COPY("rdi", 0, 0x48, 0x8b, 0xf7); /* mov %rdi,%rsi, the 0x8b form */
	CHECK_COPY("r8", 0, 0x4c, 0x89, 0xc7);	/* mov %r8,%rdi */
	CHECK_COPY("rax", 0, 0x49, 0x89, 0xc3); /* mov %rax,%r11 */
	CHECK_COPY("-", 0, 0x89, 0xfe);		/* mov %edi,%esi: 32 bits, zero-extended */
	CHECK_COPY("-", 0, 0x48, 0x8b, 0x37);	/* mov (%rdi),%rsi: a load */
	CHECK_COPY("-", 0, 0x48, 0x89, 0x3e);	/* mov %rdi,(%rsi): a store */
	CHECK_COPY("-", 0, 0x4c, 0x63, 0xe6);	/* movslq %esi,%r12 */
	CHECK_COPY("-", -5, 0x75, 0xfb);	/* jne .-3 */
	CHECK_COPY("-", 0x93, 0x0f, 0x87, 0x93, 0x00, 0x00, 0x00); /* ja +0x93 */
	CHECK_COPY("-", -0x1715, 0xe9, 0xeb, 0xe8, 0xff, 0xff);	   /* jmp back */
	CHECK_COPY("-", 0x12, 0xe8, 0x12, 0x00, 0x00, 0x00);	   /* call */
}

static void test_reg_names(void **state)
{
	assert_string_equal(x86_reg_name(X86_REG_RDI), "rdi");
	assert_string_equal(x86_reg_name(X86_REG_RCX), "rcx");
	assert_string_equal(x86_reg_name(X86_REG_R9), "r9");
	assert_string_equal(x86_reg_name(15), "r15");
	assert_string_equal(x86_reg_name(X86_REG_MAX), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_modrm),
	    cmocka_unit_test(test_immediates),
	    cmocka_unit_test(test_byte_registers),
	    cmocka_unit_test(test_push_pop),
	    cmocka_unit_test(test_nops),
	    cmocka_unit_test(test_branches),
	    cmocka_unit_test(test_refused),
	    cmocka_unit_test(test_truncated),
	    cmocka_unit_test(test_followed_by_more),
	    cmocka_unit_test(test_copies_and_targets),
	    cmocka_unit_test(test_reg_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
