/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_UPROBE_MULTI_H
#define ALLOCTRACE_UPROBE_MULTI_H

/*
 * uprobe_multi links (Linux 6.6+) without libbpf's help: libbpf 1.1 has no
 * bpf_program__attach_uprobe_multi() and its uapi headers no
 * BPF_TRACE_UPROBE_MULTI, so the link is made through the raw bpf() syscall.
 *
 * Why: every perf-event uprobe link waits for an RCU-tasks-trace/SRCU grace
 * period when it is closed (0.1-0.2 s each here, and closing them from
 * several threads barely helps); one uprobe_multi link registers all the
 * offsets of one program in one file and unregisters them behind a single
 * grace period (25-60 ms here, whether it holds 1 offset or 20). Links
 * closed from separate threads at once share their grace periods: ten
 * multi links take ~0.55 s closed in turn, ~0.09 s closed in parallel.
 *
 * Loading a program for it with libbpf 1.1: keep SEC("uprobe") or
 * SEC("uretprobe") (program type KPROBE) and, between open and load,
 *
 *	bpf_program__set_expected_attach_type(prog, UPROBE_MULTI_ATTACH_TYPE);
 *
 * libbpf 1.1 stores the value unchecked and passes it to BPF_PROG_LOAD. The
 * kernel then ties the program to uprobe_multi: it can no longer be
 * attached as a perf-event uprobe (bpf_program__attach_uprobe_opts() fails
 * with EINVAL), so decide before loading, with uprobe_multi__supported().
 * Whether entry or return is chosen at attach time (@mode), not by the
 * section name. bpf_get_attach_cookie() in such a program returns the cookie
 * given for the offset that was hit.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* enum bpf_attach_type's BPF_TRACE_UPROBE_MULTI in Linux 6.6+ uapi. */
#define UPROBE_MULTI_ATTACH_TYPE 48
/* enum bpf_attach_type's BPF_TRACE_UPROBE_SESSION in Linux 6.13+ uapi. */
#define UPROBE_SESSION_ATTACH_TYPE 57

/* What a link's probes run the program at. */
enum uprobe_multi_mode {
	UPROBE_MULTI_ENTRY,
	UPROBE_MULTI_RETURN,
	/*
	 * A session (6.13+, the program loaded with expected attach type
	 * UPROBE_SESSION_ATTACH_TYPE): the program runs at entry and, only
	 * when that run returned 0, at the same call's return, where the
	 * kfunc bpf_session_is_return() says which of the two runs it is.
	 */
	UPROBE_MULTI_SESSION,
};

/*
 * True when this kernel makes uprobe_multi links whose pid filter covers the
 * whole process (Linux 6.6-6.9 filtered by thread: only the thread whose
 * id is the pid was traced, so those count as unsupported). Makes a real
 * link on this executable, so it also tells whether we may attach at all.
 * Costs one uprobe registration and removal (30-80 ms); cache the answer.
 */
bool uprobe_multi__supported(void);

/*
 * True when this kernel makes uprobe session links (6.13+), tried with a
 * real link on this executable as above. Cache the answer.
 */
bool uprobe_session__supported(void);

/*
 * Attach @prog_fd (loaded with expected attach type UPROBE_MULTI_ATTACH_TYPE,
 * or UPROBE_SESSION_ATTACH_TYPE for a session) at @cnt file offsets of the
 * one file @path, as entry probes, return probes or sessions (@mode). @cookies (NULL for none)
 * holds one value per offset for bpf_get_attach_cookie(). @pid > 0 limits the probes to that
 * process, all of its threads; 0 or less probes every process mapping @path.
 *
 * All offsets go in or none: on failure nothing stays attached. The kernel
 * checks that an offset lies in the file, not that it starts an
 * instruction. Returns the link fd, which close() detaches, or -errno:
 * -EINVAL when the kernel knows no uprobe_multi (before 6.6), the program
 * was not loaded for it or an offset is past the end of the file, -ESRCH
 * for a pid that is gone, -EBADF for a path that is not a regular file,
 * -E2BIG for more than 1 << 20 offsets.
 */
int uprobe_multi__attach(int prog_fd, const char *path, const uint64_t *offsets,
			 const uint64_t *cookies, size_t cnt, pid_t pid,
			 enum uprobe_multi_mode mode);

#endif
