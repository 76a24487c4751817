// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Linked with libctorleak.so named after libc, as a library pulled in by
 * another is: the dynamic loader maps it after the allocator, and its
 * constructor leaks before main. With "churn DIR SECONDS" it then calls
 * lib_churn(24) without pause, creates DIR/ready at once and DIR/done when
 * the time is up (the -p target of a test).
 */
#include <string.h>
#include "handshake.h"

int lib_churn(int depth);

int main(int argc, char **argv)
{
	time_t end;

	if (argc < 4 || strcmp(argv[1], "churn"))
		return 0;
	end = time(NULL) + atoi(argv[3]);
	touch(argv[2], "ready");
	while (time(NULL) < end)
		lib_churn(24);
	touch(argv[2], "done");
	return 0;
}
