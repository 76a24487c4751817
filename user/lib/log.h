/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_LOG_H
#define ALLOCTRACE_LOG_H

/*
 * Messages for the person running the tool, on stderr, each one line that
 * starts with "alloctrace: ". pr_debug prints only with --verbose.
 */
void log_set_verbose(int level);
int log_verbose(void);
void pr_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
