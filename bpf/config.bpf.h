/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The settings of this run (include/config.h), read-only data the loader
 * sets before load: the verifier knows their values and drops the code a
 * run does not use (the multi-process lookups, the CFI walk, sampling).
 */
#ifndef ALLOCTRACE_CONFIG_BPF_H
#define ALLOCTRACE_CONFIG_BPF_H

#include "config.h"

const volatile struct alloctrace_config cfg = {
    .stack_depth = DEFAULT_STACK_DEPTH,
};

#endif
