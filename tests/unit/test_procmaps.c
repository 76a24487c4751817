// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "proc/procmaps.h"

static const char sample[] =
    "55d0c6a00000-55d0c6a02000 r--p 00000000 08:01 1234                 /usr/bin/my prog\n"
    "55d0c6a02000-55d0c6a05000 r-xp 00002000 08:01 1234                 /usr/bin/my prog\n"
    "this is not a mapping\n"
    "55d0c6c00000-55d0c6c21000 rw-p 00000000 00:00 0                          [heap]\n"
    "7f0000000000-7f0000021000 rw-p 00000000 00:00 0 \n"
    "7f0000100000-7f0000101000 r-xs 0001f000 fd:0a 99       /tmp/lib x.so (deleted)\n"
    "7f0000200000-7f0000200000 r--p 00000000 00:00 0\n"
    "7f0000300000-7f0000301000 rwzp 00000000 00:00 0\n"
    "7f0000400000 r--p 00000000 00:00 0\n"
    "7f0000500000-7f0000501000 r--p 00000000 00:00\n"
    "7f0000600000-7f0000601000 r--p 00000000 00:00 12x /bad\n"
    "17f0000700000-7f0000701000 r--p 00000000 00:00 0\n"
    "11111111111111111-7f0000801000 r--p 00000000 00:00 0\n"
    "7f0000900000-7f0000901000 r--p 00000000 100000000:00 0\n"
    "7f0000a00000-7f0000a01000 r--p 00000000 00:00 99999999999999999999\n"
    "-7f0000b00000-7f0000b01000 r--p 00000000 00:00 0\n"
    "\n"
    "7ffd10000000-7ffd10021000 rw-p 00000000 00:00 0                          [stack]\n"
    "7ffd10100000-7ffd10102000 r-xp 00000000 00:00 0                          [vdso]\n"
    "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]";

static int parse_text(const char *text, struct proc_maps *out)
{
	FILE *f;
	int err;

	f = fmemopen((void *)text, strlen(text), "r");
	assert_non_null(f);
	err = proc_maps__parse(f, out);
	fclose(f);
	return err;
}

static int setup(void **state)
{
	struct proc_maps *m = calloc(1, sizeof(*m));

	if (!m || parse_text(sample, m))
		return -1;
	*state = m;
	return 0;
}

static int teardown(void **state)
{
	proc_maps__release(*state);
	free(*state);
	return 0;
}

static void test_fields(void **state)
{
	struct proc_maps *m = *state;
	const struct mapping *map = &m->maps[1];

	assert_int_equal(m->nr, 8);
	assert_int_equal(map->start, 0x55d0c6a02000ULL);
	assert_int_equal(map->end, 0x55d0c6a05000ULL);
	assert_int_equal(map->pgoff, 0x2000);
	assert_int_equal(map->dev_major, 8);
	assert_int_equal(map->dev_minor, 1);
	assert_int_equal(map->inode, 1234);
	assert_true(map->read);
	assert_false(map->write);
	assert_true(map->exec);
	assert_false(map->deleted);
	assert_string_equal(map->path, "/usr/bin/my prog");
	assert_true(mapping__is_file(map));
}

static void test_deleted(void **state)
{
	struct proc_maps *m = *state;
	const struct mapping *map = &m->maps[4];

	assert_int_equal(map->start, 0x7f0000100000ULL);
	assert_int_equal(map->pgoff, 0x1f000);
	assert_int_equal(map->dev_major, 0xfd);
	assert_int_equal(map->dev_minor, 0xa);
	assert_true(map->deleted);
	assert_string_equal(map->path, "/tmp/lib x.so");
	assert_true(mapping__is_file(map));
}

static void test_special(void **state)
{
	struct proc_maps *m = *state;

	assert_string_equal(m->maps[2].path, "[heap]");
	assert_false(mapping__is_file(&m->maps[2]));
	assert_null(m->maps[3].path);
	assert_false(m->maps[3].deleted);
	assert_true(m->maps[3].write);
	assert_false(mapping__is_file(&m->maps[3]));
	assert_string_equal(m->maps[5].path, "[stack]");
	assert_string_equal(m->maps[6].path, "[vdso]");
	assert_false(mapping__is_file(&m->maps[6]));
	assert_true(mapping__is_anonymous(&m->maps[2]));
	assert_true(mapping__is_anonymous(&m->maps[3]));
	assert_false(mapping__is_anonymous(&m->maps[1]));
	assert_false(mapping__is_anonymous(&m->maps[4]));
	assert_false(mapping__is_anonymous(&m->maps[5]));
	assert_false(mapping__is_anonymous(&m->maps[6]));
	assert_false(mapping__is_anonymous(&m->maps[7]));
	assert_string_equal(m->maps[7].path, "[vsyscall]");
	assert_int_equal(m->maps[7].end, 0xffffffffff601000ULL);
	assert_false(m->maps[7].read);
	assert_true(m->maps[7].exec);
}

/* --growth's late classification: a named anonymous mapping is, shared memory is not. */
static void test_anonymous_names(void **state)
{
	static const char text[] =
	    "7f0000000000-7f0000001000 rw-p 00000000 00:00 0      [anon:arena]\n"
	    "7f0000001000-7f0000002000 rw-s 00000000 00:01 7      [anon_shmem:ring]\n"
	    "7f0000002000-7f0000003000 rw-s 00000000 00:01 8      /dev/zero (deleted)\n";
	struct proc_maps m;

	assert_int_equal(parse_text(text, &m), 0);
	assert_int_equal(m.nr, 3);
	assert_true(mapping__is_anonymous(&m.maps[0]));
	assert_false(mapping__is_anonymous(&m.maps[1]));
	assert_false(mapping__is_anonymous(&m.maps[2]));
	proc_maps__release(&m);
}

static void test_find(void **state)
{
	struct proc_maps *m = *state;

	assert_ptr_equal(proc_maps__find(m, 0x55d0c6a00000ULL), &m->maps[0]);
	assert_ptr_equal(proc_maps__find(m, 0x55d0c6a01fffULL), &m->maps[0]);
	assert_ptr_equal(proc_maps__find(m, 0x55d0c6a02000ULL), &m->maps[1]);
	assert_ptr_equal(proc_maps__find(m, 0x55d0c6a04fffULL), &m->maps[1]);
	assert_null(proc_maps__find(m, 0x55d0c6a05000ULL));
	assert_null(proc_maps__find(m, 0x55d0c69fffffULL));
	assert_null(proc_maps__find(m, 0));
	assert_ptr_equal(proc_maps__find(m, 0x7f0000100abcULL), &m->maps[4]);
	assert_null(proc_maps__find(m, 0x7f0000300000ULL));
	assert_ptr_equal(proc_maps__find(m, 0xffffffffff600fffULL), &m->maps[7]);
	assert_null(proc_maps__find(m, UINT64_MAX));
}

static void test_find_empty(void **state)
{
	struct proc_maps empty = {0};

	assert_null(proc_maps__find(&empty, 0x1000));
}

static void test_unsorted(void **state)
{
	static const char text[] = "3000-4000 r--p 00000000 00:00 0\n"
				   "1000-2000 r--p 00000000 00:00 0\n";
	struct proc_maps m;

	assert_int_equal(parse_text(text, &m), 0);
	assert_int_equal(m.nr, 2);
	assert_int_equal(m.maps[0].start, 0x1000);
	assert_ptr_equal(proc_maps__find(&m, 0x3fff), &m.maps[1]);
	assert_null(proc_maps__find(&m, 0x2000));
	proc_maps__release(&m);
}

static void test_empty_input(void **state)
{
	struct proc_maps m;

	assert_int_equal(parse_text("", &m), 0);
	assert_int_equal(m.nr, 0);
	assert_null(m.maps);
	proc_maps__release(&m);
}

static void test_only_deleted_name(void **state)
{
	static const char text[] = "1000-2000 r--p 00000000 00:05 7 (deleted)\n"
				   "2000-3000 r--p 00000000 00:05 7 /a (deleted) b\n";
	struct proc_maps m;

	assert_int_equal(parse_text(text, &m), 0);
	assert_int_equal(m.nr, 2);
	assert_string_equal(m.maps[0].path, "(deleted)");
	assert_false(m.maps[0].deleted);
	assert_string_equal(m.maps[1].path, "/a (deleted) b");
	assert_false(m.maps[1].deleted);
	proc_maps__release(&m);
}

/* Every prefix of the sample is a truncated file; none may trip the parser. */
static void test_truncated(void **state)
{
	char text[sizeof(sample)];
	struct proc_maps m;
	size_t len;

	for (len = 0; len < sizeof(sample); len++) {
		memcpy(text, sample, len);
		text[len] = '\0';
		assert_int_equal(parse_text(text, &m), 0);
		assert_true(m.nr <= 8);
		proc_maps__release(&m);
	}
}

static void test_read_self(void **state)
{
	const struct mapping *map;
	struct proc_maps m;
	char exe[PATH_MAX];
	ssize_t len;

	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(len > 0);
	exe[len] = '\0';
	assert_int_equal(proc_maps__read(getpid(), &m), 0);
	map = proc_maps__find(&m, (uint64_t)(uintptr_t)test_read_self);
	assert_non_null(map);
	assert_true(map->exec);
	assert_true(mapping__is_file(map));
	assert_string_equal(map->path, exe);
	proc_maps__release(&m);
}

static void test_read_missing(void **state)
{
	struct proc_maps m;

	/* Above the kernel's PID_MAX_LIMIT, so never a process. */
	assert_int_equal(proc_maps__read(4194305, &m), -ENOENT);
	assert_int_equal(m.nr, 0);
	assert_null(m.maps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_fields, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_deleted, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_special, setup, teardown),
	    cmocka_unit_test(test_anonymous_names),
	    cmocka_unit_test_setup_teardown(test_find, setup, teardown),
	    cmocka_unit_test(test_find_empty),
	    cmocka_unit_test(test_unsorted),
	    cmocka_unit_test(test_empty_input),
	    cmocka_unit_test(test_only_deleted_name),
	    cmocka_unit_test(test_truncated),
	    cmocka_unit_test(test_read_self),
	    cmocka_unit_test(test_read_missing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
