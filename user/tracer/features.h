/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the running kernel offers the BPF side, found at start rather than
 * assumed (features.def lists each with the release that brought it), and
 * the verdict on a run that lacks some: the one place that knows which
 * kernel feature each part of alloctrace needs.
 */
#ifndef ALLOCTRACE_FEATURES_H
#define ALLOCTRACE_FEATURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum kernel_feature {
#define KFEATURE(id, name, since, need, without) KF_##id,
#include "tracer/features.def"
#undef KFEATURE
	KF_MAX
};

enum kf_need {
	KF_NEED_ALL,	/* no trace loads without it */
	KF_NEED_GROWTH, /* --growth does not */
	KF_NEED_NONE,	/* a cost only */
};

struct kernel_features {
	bool has[KF_MAX];
};

/* Probe each feature (root, or CAP_BPF and CAP_PERFMON). Never fails: a probe that fails is an
 * absent feature. */
void kernel_features__probe(struct kernel_features *f);

/*
 * The features @f lacks that a run (@growth: --growth) cannot do without,
 * as one line into @buf ("task storage (Linux 5.11), bpf_loop (Linux
 * 5.17)"): the number of them, 0 when the run can load.
 */
int kernel_features__missing(const struct kernel_features *f, bool growth, char *buf, size_t size);

/* --version: each feature, found or not, and what its absence costs. */
void kernel_features__print(const struct kernel_features *f, FILE *out);

#endif
