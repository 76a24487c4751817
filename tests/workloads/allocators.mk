# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The allocator workloads (tests/workloads/alloc_*), each built against the
# allocator it exercises; tests/integration/test_allocators.sh runs them.
# Included by the Makefile: `tests` builds them into build/workloads/.
# They need libjemalloc-dev, libgoogle-perftools-dev, libmimalloc-dev and
# musl-tools.
#
# The explicit rules here take precedence over the Makefile's pattern rules,
# which would build alloc_*.c and alloc_*.cc without their allocator.

# Usable wherever it is included: BUILD may not be set yet, and the
# recipes expand WORKLOAD_CFLAGS only when they run.
ALLOC_WL := $(or $(BUILD),build)/workloads
ALLOCATOR_WORKLOADS := $(addprefix $(ALLOC_WL)/,alloc_jemalloc alloc_jemalloc_preload \
	alloc_tcmalloc alloc_mimalloc alloc_custom alloc_prefixed alloc_mmap leaks_static)
MUSL_WORKLOADS := $(addprefix $(ALLOC_WL)/,alloc_musl alloc_musl_static)

# musl-gcc is the host's: in a cross build (CROSS_COMPILE set) it would make
# host binaries. There the cross gcc becomes one with the sysroot's
# musl-dev specs, their paths moved under the sysroot; without musl-dev
# in the sysroot the musl workloads are not built, and `tests` says so.
ifdef CROSS_COMPILE
MUSL_SPECS := $(SYSROOT)/usr/lib/$(notdir $(CROSS_COMPILE:%-linux-gnu-=%))-linux-musl/musl-gcc.specs
ifneq ($(wildcard $(MUSL_SPECS)),)
MUSL_CC ?= $(CC) -specs=$(ALLOC_WL)/musl-gcc.specs
$(MUSL_WORKLOADS): $(ALLOC_WL)/musl-gcc.specs
$(ALLOC_WL)/musl-gcc.specs: $(MUSL_SPECS) | $(ALLOC_WL)
	sed -e 's| /usr/| $(SYSROOT)/usr/|g' -e 's|-L/usr/|-L$(SYSROOT)/usr/|g' $< >$@
else
MUSL_WORKLOADS :=
NOT_BUILT += "alloc_musl, alloc_musl_static: no musl-dev in SYSROOT=$(SYSROOT)"
endif
endif
MUSL_CC ?= musl-gcc
ALLOCATOR_WORKLOADS += $(MUSL_WORKLOADS)

# A rule here must not become the default goal if this file is included
# before the Makefile's first rule: restore whatever it was (an empty
# .DEFAULT_GOAL lets the next rule parsed become the default).
ALLOC_SAVED_GOAL := $(.DEFAULT_GOAL)

tests: $(ALLOCATOR_WORKLOADS)

$(ALLOC_WL)/alloc_jemalloc: tests/workloads/alloc_jemalloc.c tests/workloads/workload.h | $(ALLOC_WL)
	$(CC) $(WORKLOAD_CFLAGS) $< -o $@ -ljemalloc

# No -ljemalloc: the tests give it jemalloc with LD_PRELOAD.
$(ALLOC_WL)/alloc_jemalloc_preload: tests/workloads/alloc_jemalloc_preload.c tests/workloads/workload.h \
		tests/workloads/handshake.h | $(ALLOC_WL)
	$(CC) $(WORKLOAD_CFLAGS) $< -o $@ -ldl

# The minimal library: the same allocator and operator new/delete, without
# the heap checker and profiler.
$(ALLOC_WL)/alloc_tcmalloc: tests/workloads/alloc_tcmalloc.cc | $(ALLOC_WL)
	$(CXX) $(WORKLOAD_CFLAGS) $< -o $@ -ltcmalloc_minimal

$(ALLOC_WL)/alloc_mimalloc: tests/workloads/alloc_mimalloc.c tests/workloads/workload.h | $(ALLOC_WL)
	$(CC) $(WORKLOAD_CFLAGS) $< -o $@ -lmimalloc

$(ALLOC_WL)/alloc_musl: tests/workloads/alloc_musl.c tests/workloads/workload.h | $(ALLOC_WL)
	$(MUSL_CC) $(WORKLOAD_CFLAGS) $< -o $@

# Static: musl's malloc is linked into the executable.
$(ALLOC_WL)/alloc_musl_static: tests/workloads/alloc_musl.c tests/workloads/workload.h | $(ALLOC_WL)
	$(MUSL_CC) $(WORKLOAD_CFLAGS) -static $< -o $@

$(ALLOC_WL)/alloc_custom: tests/workloads/alloc_custom.c tests/workloads/arena_alloc.h tests/workloads/workload.h | $(ALLOC_WL)
	$(CC) $(WORKLOAD_CFLAGS) $< -o $@

$(ALLOC_WL)/alloc_prefixed: tests/workloads/alloc_prefixed.c tests/workloads/arena_alloc.h tests/workloads/workload.h | $(ALLOC_WL)
	$(CC) $(WORKLOAD_CFLAGS) $< -o $@

$(ALLOC_WL)/alloc_mmap: tests/workloads/alloc_mmap.c tests/workloads/workload.h | $(ALLOC_WL)
	$(CC) $(WORKLOAD_CFLAGS) $< -o $@

# Static glibc: malloc inside the executable, .eh_frame without
# .eh_frame_hdr, no frame pointers.
$(ALLOC_WL)/leaks_static: tests/workloads/leaks.c tests/workloads/workload.h | $(ALLOC_WL)
	$(CC) -static -O2 -g -fomit-frame-pointer -fno-inline $< -o $@

.DEFAULT_GOAL := $(ALLOC_SAVED_GOAL)
