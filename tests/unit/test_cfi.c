// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The unwind rows built from cfi_fixture.S and cfi_arm64.s, whose call
 * frame information is known line by line, and from objects that have none
 * or bad ones.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "unwind/cfi.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* The fixtures are built next to this test (see the Makefile). */
static Elf *open_object(const char *name, int *fd)
{
	char self[PATH_MAX], path[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	Elf *elf;

	assert_true(n > 0);
	self[n] = '\0';
	snprintf(path, sizeof(path), "%s/%s", dirname(self), name);
	*fd = open(path, O_RDONLY);
	assert_true(*fd >= 0);
	elf = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(elf);
	return elf;
}

static Elf *open_fixture(int *fd)
{
	return open_object("cfi_fixture.so", fd);
}

/* x86-64's rows with rules have the return address at CFA - 8; others none. */
#define ROW(pc_, kind_, cfa_, rbp_)                                                                \
	{                                                                                          \
		.pc = (pc_), .kind = UNWIND_##kind_, .cfa_off = (cfa_), .fp_off = (rbp_),          \
		.ra_off = UNWIND_##kind_ == UNWIND_CFA_SP || UNWIND_##kind_ == UNWIND_CFA_FP ||    \
				  UNWIND_##kind_ == UNWIND_CFA_PLT                                 \
			      ? -1                                                                 \
			      : 0                                                                  \
	}

static const struct unwind_row expected_rows[] = {
    /* sp_frame: push, a 64 KiB frame, and back */
    ROW(0x000, CFA_SP, 1, 0),
    ROW(0x001, CFA_SP, 2, 0),
    ROW(0x008, CFA_SP, 65552 / 8, 0),
    ROW(0x00f, CFA_SP, 2, 0),
    ROW(0x010, CFA_SP, 1, 0),
    ROW(0x011, NONE, 0, 0), /* padding until fp_frame */
    /* fp_frame: rbp saved at CFA - 16, then the CFA based on rbp */
    ROW(0x020, CFA_SP, 1, 0),
    ROW(0x021, CFA_SP, 2, -2),
    ROW(0x024, CFA_FP, 2, -2),
    ROW(0x026, CFA_SP, 1, -2),
    ROW(0x027, NONE, 0, 0),
    /* odd_cfa: a CFA of rsp + 12 has no row the BPF side can apply */
    ROW(0x030, CFA_SP, 1, 0),
    ROW(0x031, NONE, 0, 0),
    ROW(0x032, CFA_SP, 1, 0),
    ROW(0x033, NONE, 0, 0),
    /* outermost, a page further: the return address is undefined */
    ROW(0x1000, END, 0, 0),
    ROW(0x1002, NONE, 0, 0),
};

/* The fixture's table, built once for the tests that read it. */
static int build_fixture(void **state)
{
	static struct cfi_table t;
	int fd;
	Elf *elf = open_fixture(&fd);

	assert_int_equal(cfi_table__build(elf, &t), 0);
	elf_end(elf);
	close(fd);
	*state = &t;
	return 0;
}

static int release_fixture(void **state)
{
	cfi_table__release(*state);
	return 0;
}

static void assert_rows(const struct cfi_table *t, const struct unwind_row *rows, size_t n)
{
	assert_int_equal(t->base, 0x1000);
	assert_int_equal(t->nr_rows, n);
	for (size_t i = 0; i < t->nr_rows; i++) {
		assert_int_equal(t->rows[i].pc, rows[i].pc);
		assert_int_equal(t->rows[i].kind, rows[i].kind);
		assert_int_equal(t->rows[i].cfa_off, rows[i].cfa_off);
		assert_int_equal(t->rows[i].fp_off, rows[i].fp_off);
		assert_int_equal(t->rows[i].ra_off, rows[i].ra_off);
	}
}

static void test_fixture_rows(void **state)
{
	assert_rows(*state, expected_rows, ARRAY_SIZE(expected_rows));
}

static void assert_object_rows(const char *name, const struct unwind_row *rows, size_t n)
{
	struct cfi_table t;
	int fd;
	Elf *elf = open_object(name, &fd);

	assert_int_equal(cfi_table__build(elf, &t), 0);
	assert_rows(&t, rows, n);
	cfi_table__release(&t);
	elf_end(elf);
	close(fd);
}

/*
 * The same rows from .eh_frame without .eh_frame_hdr (a static binary's),
 * from an .eh_frame of type SHT_X86_64_UNWIND (LLVM's), and from
 * .debug_frame alone.
 */
static void test_other_sections(void **state)
{
	static const char *const names[] = {"cfi_nohdr.so", "cfi_unwind_type.so",
					    "cfi_debug_frame.so"};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		assert_object_rows(names[i], expected_rows, ARRAY_SIZE(expected_rows));
}

/* Entered at 0x1028, where no FDE is: the outermost frame until odd_cfa. */
static void test_entry_without_cfi(void **state)
{
	struct unwind_row rows[ARRAY_SIZE(expected_rows) + 1];

	memcpy(rows, expected_rows, 11 * sizeof(*rows));
	rows[11] = (struct unwind_row)ROW(0x028, END, 0, 0);
	memcpy(&rows[12], &expected_rows[11], (ARRAY_SIZE(expected_rows) - 11) * sizeof(*rows));
	assert_object_rows("cfi_entry.so", rows, ARRAY_SIZE(rows));
}

/* An arm64 row: the return address where @ra_ says (struct unwind_row.ra_off). */
#define ROW_A64(pc_, kind_, cfa_, fp_, ra_)                                                        \
	{                                                                                          \
		.pc = (pc_), .kind = UNWIND_##kind_, .cfa_off = (cfa_), .fp_off = (fp_),           \
		.ra_off = (ra_)                                                                    \
	}

/*
 * cfi_arm64.s, built for arm64 on any host: the return address in x30
 * until the prologue saves it, a frame record after pac-ret's
 * negate_ra_state, x30 saved alone, a frame record 67 words below the CFA,
 * the outermost frame, a signal trampoline and x30 at the bottom of a
 * 4 KiB frame.
 */
static void test_arm64_rows(void **state)
{
	static const struct unwind_row rows[] = {
	    /* leaf */
	    ROW_A64(0x00, CFA_SP, 0, 0, UNWIND_RA_LR),
	    ROW_A64(0x08, NONE, 0, 0, 0),
	    /* framed: paciasp; stp x29, x30, [sp, #-48]!; mov x29, sp; ... */
	    ROW_A64(0x10, CFA_SP, 0, 0, UNWIND_RA_LR),
	    ROW_A64(0x18, CFA_SP, 6, -6, -5),
	    ROW_A64(0x1c, CFA_FP, 6, -6, -5),
	    ROW_A64(0x24, CFA_SP, 0, 0, UNWIND_RA_LR),
	    ROW_A64(0x2c, NONE, 0, 0, 0),
	    /* lone_lr: x19 and x30, 512 bytes, then x29 and x30 at CFA - 544 */
	    ROW_A64(0x30, CFA_SP, 0, 0, UNWIND_RA_LR),
	    ROW_A64(0x34, CFA_SP, 2, 0, -1),
	    ROW_A64(0x38, CFA_SP, 66, 0, -1),
	    ROW_A64(0x3c, CFA_SP, 68, -68, UNWIND_RA_RECORD),
	    ROW_A64(0x4c, CFA_SP, 0, 0, UNWIND_RA_LR),
	    /* outermost, the trampoline (after its nop), and the end */
	    ROW_A64(0x50, END, 0, 0, 0),
	    ROW_A64(0x58, NONE, 0, 0, 0),
	    ROW_A64(0x60, SIGFRAME, 0, 0, 0),
	    ROW_A64(0x6c, NONE, 0, 0, 0),
	    /* big_frame: x19 and x30 at the bottom of 4 KiB, 8 bytes above sp */
	    ROW_A64(0x70, CFA_SP, 0, 0, UNWIND_RA_LR),
	    ROW_A64(0x74, CFA_SP, 512, 0, UNWIND_RA_LR),
	    ROW_A64(0x78, CFA_SP, 514, 1, UNWIND_RA_SP),
	    ROW_A64(0x80, CFA_SP, 512, 0, UNWIND_RA_LR),
	    ROW_A64(0x84, CFA_SP, 0, 0, UNWIND_RA_LR),
	    ROW_A64(0x88, NONE, 0, 0, 0),
	};

	assert_object_rows("cfi_arm64.so", rows, ARRAY_SIZE(rows));
}

/* Each page's entry is the row in effect at its first byte; one more bounds the last. */
static void test_fixture_pages(void **state)
{
	const struct cfi_table *t = *state;

	assert_int_equal(t->nr_pages, 0x1000 / 256 + 1);
	assert_int_equal(t->pages[0], 0);
	/* The gap after odd_cfa: its NONE row holds until outermost's END row. */
	for (size_t i = 1; i < 0x1000 / 256; i++)
		assert_int_equal(t->pages[i], 14);
	assert_int_equal(t->pages[0x1000 / 256], 15);
	assert_int_equal(t->pages[0x1000 / 256 + 1], 16);
}

static void assert_build_fails(const void *image, size_t size, int err)
{
	struct cfi_table t;
	Elf *elf = elf_memory((char *)image, size);

	assert_non_null(elf);
	assert_int_equal(cfi_table__build(elf, &t), err);
	assert_null(t.rows);
	assert_null(t.pages);
	elf_end(elf);
}

/* Not an ELF file, a truncated one, and one cut inside its unwind sections. */
static void test_bad_objects(void **state)
{
	static const char text[] = "not an object at all";
	struct stat st;
	char *image;
	int fd;
	Elf *elf = open_fixture(&fd);

	elf_end(elf);
	assert_int_equal(fstat(fd, &st), 0);
	image = malloc(st.st_size);
	assert_non_null(image);
	assert_int_equal(pread(fd, image, st.st_size, 0), st.st_size);
	assert_build_fails(text, sizeof(text), -ENOEXEC);
	/* The ELF header alone: the program headers it points to are missing. */
	assert_build_fails(image, 64, -ENOENT);
	/* .eh_frame_hdr (at 0x3000) is cut after its first bytes, the section headers lost. */
	assert_build_fails(image, 0x3006, -ENOENT);
	free(image);
	close(fd);
}

/* A register no x86-64 code has: refused before libdw would size an array by it. */
static void test_register_out_of_range(void **state)
{
	struct cfi_table t;
	int fd;
	Elf *elf = open_object("cfi_bigreg.so", &fd);

	assert_int_equal(cfi_for_each_fde(elf, ".eh_frame", NULL, NULL), -EINVAL);
	assert_int_equal(cfi_table__build(elf, &t), -EINVAL);
	assert_null(t.rows);
	elf_end(elf);
	close(fd);
	elf = open_fixture(&fd);
	assert_int_equal(cfi_for_each_fde(elf, ".eh_frame", NULL, NULL), 0);
	elf_end(elf);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_fixture_rows, build_fixture, release_fixture),
	    cmocka_unit_test_setup_teardown(test_fixture_pages, build_fixture, release_fixture),
	    cmocka_unit_test(test_other_sections),
	    cmocka_unit_test(test_entry_without_cfi),
	    cmocka_unit_test(test_arm64_rows),
	    cmocka_unit_test(test_bad_objects),
	    cmocka_unit_test(test_register_out_of_range),
	};

	elf_version(EV_CURRENT);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
