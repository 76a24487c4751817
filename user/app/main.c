// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * alloctrace: report, per call stack, the memory a process has allocated
 * and not freed, by tracing its allocator with eBPF uprobes.
 */
#include "lib/log.h"
#include "cli/options.h"
#include "app/session.h"

int main(int argc, char **argv)
{
	struct options opts;
	int ret;

	ret = options__parse(&opts, argc, argv);
	if (ret)
		return options__exit_code(ret);
	log_set_verbose(opts.verbose);
	return session__run(&opts);
}
