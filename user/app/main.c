// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * alloctrace: report, per call stack, the memory a process has allocated
 * and not freed, by tracing its allocator with eBPF uprobes.
 */
#include "lib/log.h"
#include "cli/options.h"
#include "app/session.h"
#include "proc/access.h"
#include "tracer/tracer.h"

int main(int argc, char **argv)
{
	struct options opts;
	int ret;

	/* Before anything is read or written with powers not the caller's. */
	if (access__check_ids())
		return EXIT_PRIVILEGE;
	ret = options__parse(&opts, argc, argv);
	if (ret > 0 && opts.version)
		tracer__print_features(stdout);
	if (ret)
		return options__exit_code(ret);
	log_set_verbose(opts.verbose);
	/* Capabilities let the binary read memory; only root may see it. */
	if (opts.show_data && access__limited()) {
		pr_err("--show-data shows the traced processes' memory: it needs root "
		       "(effective uid 0), not only capabilities");
		return EXIT_PRIVILEGE;
	}
	return session__run(&opts);
}
