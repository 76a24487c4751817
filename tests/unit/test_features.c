// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The verdict on a kernel's features, without the kernel: which missing
 * ones stop a run, named in one line with the release that brought each,
 * and what --version says of each.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "tracer/features.h"

static struct kernel_features all(void)
{
	struct kernel_features f;

	for (int i = 0; i < KF_MAX; i++)
		f.has[i] = true;
	return f;
}

static void test_missing_table(void **state)
{
	static const struct {
		const char *what;
		enum kernel_feature lack[3];
		int nr_lack;
		bool growth;
		int nr;
		const char *line;
	} cases[] = {
	    {"everything", {0}, 0, false, 0, ""},
	    {"6.1: no uprobe_multi, no sessions, no mm_lock_seq",
	     {KF_UPROBE_MULTI, KF_UPROBE_SESSION, KF_MM_LOCK_SEQ},
	     3,
	     true,
	     0,
	     ""},
	    {"5.10's ring buffer is there, its loop is not",
	     {KF_TASK_STORAGE, KF_BPF_LOOP},
	     2,
	     false,
	     2,
	     "task storage (Linux 5.11), bpf_loop (Linux 5.17)"},
	    {"find_vma stops --growth alone", {KF_FIND_VMA}, 1, false, 0, ""},
	    {"find_vma under --growth", {KF_FIND_VMA}, 1, true, 1, "bpf_find_vma (Linux 5.17)"},
	    {"BTF first",
	     {KF_BTF, KF_COOKIE},
	     2,
	     false,
	     2,
	     "BTF (/sys/kernel/btf/vmlinux) (Linux 5.4), BPF cookies (Linux 5.15)"},
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct kernel_features f = all();
		char line[256];

		for (int i = 0; i < cases[c].nr_lack; i++)
			f.has[cases[c].lack[i]] = false;
		print_message("case: %s\n", cases[c].what);
		assert_int_equal(kernel_features__missing(&f, cases[c].growth, line, sizeof(line)),
				 cases[c].nr);
		assert_string_equal(line, cases[c].line);
	}
}

/* A line cut by a short buffer still counts every missing feature. */
static void test_missing_short_buffer(void **state)
{
	struct kernel_features f = {0};
	char line[16];

	assert_int_equal(kernel_features__missing(&f, true, line, sizeof(line)), 8);
	assert_int_equal(strlen(line), sizeof(line) - 1);
}

static void test_print(void **state)
{
	struct kernel_features f = all();
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	f.has[KF_UPROBE_SESSION] = false;
	f.has[KF_FIND_VMA] = false;
	f.has[KF_MM_LOCK_SEQ] = false;
	kernel_features__print(&f, out);
	fclose(out);
	assert_non_null(strstr(text, "  yes BPF ring buffer (Linux 5.8)\n"));
	assert_non_null(strstr(text, "  no  uprobe sessions (Linux 6.13): without it, --sample: a "
				     "return probe on every call, sampled or not\n"));
	assert_non_null(strstr(text, "  no  bpf_find_vma (Linux 5.17): needed by --growth\n"));
	assert_non_null(strstr(text, "  no  a count of address-space changes (mm_lock_seq) (Linux "
				     "6.4): without it, --growth: a mapping lookup on every "
				     "recorded page fault (~8 us under a hypervisor)\n"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_missing_table),
	    cmocka_unit_test(test_missing_short_buffer),
	    cmocka_unit_test(test_print),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
