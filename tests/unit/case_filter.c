// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Linked into every unit test binary: with TEST_UNIT_CASE set (by
 * tests/run.sh for `make unit T=test_profile:CASE`), only the cmocka cases
 * whose names match it run, a pattern of * and ?. cmocka 1.1 reads no
 * variable for it, and a constructor sets it for every binary's main()
 * alike. Not TEST_CASE: a script's case would filter the unit binaries it
 * runs (test_hardening.sh's ASan twins).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

__attribute__((constructor)) static void case_filter(void)
{
	const char *pattern = getenv("TEST_UNIT_CASE");

	if (pattern && *pattern)
		cmocka_set_test_filter(pattern);
}
