# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# alloctrace: BPF object -> skeleton -> loader, plus tests and workloads.

# The architectures alloctrace builds for, by the kernel's names (x86 is
# x86-64), the one list: each has its architecture files
# (docs/ARCHITECTURE.md, "Adding an architecture"), its walker replayed
# (REPLAY_ARCHES) and a vmtest guest (scripts/vmtest.sh reads it).
ARCHES := x86 arm64
HOST_ARCH := $(shell scripts/host-arch.sh)
ARCH ?= $(HOST_ARCH)
ifeq ($(filter $(ARCHES),$(ARCH)),)
$(error ARCH=$(ARCH): alloctrace builds for $(ARCHES))
endif
CC ?= cc
# A cross build (ARCH=arm64 on x86-64): Debian's cross gcc, linking against
# a sysroot of the target's Debian (its libbpf-dev, libelf-dev, ...: the
# guest's rootfs of scripts/arm64-rootfs.sh will do). CC, CXX and CROSS_COMPILE
# given on the command line win.
ifneq ($(ARCH),$(HOST_ARCH))
CROSS_COMPILE ?= $(if $(filter arm64,$(ARCH)),aarch64-linux-gnu-,x86_64-linux-gnu-)
SYSROOT ?= /var/cache/alloctrace/arm64-rootfs
ifeq ($(wildcard $(SYSROOT)/usr/include/bpf/libbpf.h),)
ifneq ($(filter-out deps clean print-%,$(or $(MAKECMDGOALS),all)),)
$(error ARCH=$(ARCH) cross build: no libbpf-dev in SYSROOT=$(SYSROOT) (make ARCH=$(ARCH) deps makes one))
endif
endif
ifeq ($(origin CC),default)
CC := $(CROSS_COMPILE)gcc --sysroot=$(SYSROOT)
endif
ifeq ($(origin CXX),default)
CXX := $(CROSS_COMPILE)g++ --sysroot=$(SYSROOT)
endif
endif
CLANG ?= clang
BPFTOOL ?= $(shell command -v bpftool || echo /usr/sbin/bpftool)
PREFIX ?= /usr/local
DESTDIR ?=

BUILD := build
OBJ := $(BUILD)/obj
TOOL := alloctrace

# build/ and ./alloctrace hold one ARCH's build (build/.arch; a tree of
# before it is the host's): another ARCH's is refused, not mixed in.
BUILT_ARCH := $(or $(shell cat $(BUILD)/.arch 2>/dev/null),$(if $(wildcard $(OBJ)),$(HOST_ARCH)))
ifneq ($(filter-out $(ARCH),$(BUILT_ARCH)),)
ifneq ($(filter-out deps clean print-%,$(or $(MAKECMDGOALS),all)),)
$(error build/ holds the ARCH=$(BUILT_ARCH) build: make clean first, or build ARCH=$(ARCH) in another worktree)
endif
endif

CFLAGS ?= -O2 -g
# WERROR=1 (CI's builds: .ci/run) makes every warning of the loader, the
# tests, the BPF object and the sanitizer builds an error; a developer's
# build keeps them warnings, so that a newer compiler's new one does not
# stop work in progress.
WARN_FLAGS := -Wall -Wextra -Wno-unused-parameter -Wshadow -Wstrict-prototypes \
	      $(if $(filter 1,$(WERROR)),-Werror)
CFLAGS += -std=gnu11 $(WARN_FLAGS)
CPPFLAGS += -Iinclude -Iuser -I$(BUILD) -D_GNU_SOURCE
# Each object records the headers it read, so a header change rebuilds
# exactly what includes it.
DEPFLAGS = -MMD -MP
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Iinclude -Ivmlinux/$(ARCH) -Wall \
	      $(if $(filter 1,$(WERROR)),-Werror)
# call_args() has a case for each argument shape (include/arg_shapes.def)
# and no default: a shape left out fails the build, not reads as another's.
BPF_CFLAGS += -Werror=switch
# What the core rooms link with (the unit tests and drivers link them too),
# and the loader's whole list.
CORE_LDLIBS := -lelf -ldw -llzma -lz -lstdc++ -lm
LDLIBS := -lbpf $(CORE_LDLIBS) -lpthread -lmicrohttpd -lcrypt

# The loader's rooms, one job each (docs/ARCHITECTURE.md). The core is
# plain C that links and is unit-tested without libbpf; only app/ (the
# session) and tracer/ (programs, maps, probes) talk to the kernel's BPF.
CORE_ROOMS := lib arch cli probe proc unwind symbolize analysis report export leakcheck
LOADER_ROOMS := tracer app
# Of user/arch/, the shared files and ARCH's own arch_$(ARCH).c.
ARCH_OTHERS := $(filter-out user/arch/arch_$(ARCH).c,$(wildcard user/arch/arch_*.c))
CORE_SRCS := $(filter-out $(ARCH_OTHERS),$(sort $(wildcard $(CORE_ROOMS:%=user/%/*.c))))
LOADER_SRCS := $(sort $(wildcard $(LOADER_ROOMS:%=user/%/*.c)))
CORE_OBJS := $(CORE_SRCS:user/%.c=$(OBJ)/%.o)
LOADER_OBJS := $(LOADER_SRCS:user/%.c=$(OBJ)/%.o)

UNIT_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test_*.c))
# What `tests` leaves out for this ARCH, and why: printed by `tests`.
NOT_BUILT :=
ifneq ($(ARCH),x86)
UNIT_TESTS := $(filter-out $(BUILD)/tests/test_cfi,$(UNIT_TESTS))
NOT_BUILT += "test_cfi: its fixtures (tests/unit/cfi_*.S) are x86-64 assembly"
endif
WORKLOAD_C := $(wildcard tests/workloads/*.c)
WORKLOAD_CXX := $(wildcard tests/workloads/*.cc)
WORKLOAD_C := $(filter-out tests/workloads/plugin.c tests/workloads/ctorleak.c,$(WORKLOAD_C))
WORKLOADS := $(WORKLOAD_C:tests/workloads/%.c=$(BUILD)/workloads/%) \
	     $(WORKLOAD_CXX:tests/workloads/%.cc=$(BUILD)/workloads/%) \
	     $(BUILD)/workloads/twins-nofp $(BUILD)/workloads/bigbrk-static
WORKLOAD_CFLAGS := -O0 -g -fno-omit-frame-pointer -fno-inline -pthread

.PHONY: deb all deps check unit integration demo install clean tests format vmtest \
	print-format-files print-core-rooms print-arch-others print-arches format-check
all: $(TOOL)

$(BUILD) $(BUILD)/tests $(BUILD)/workloads:
	mkdir -p $@

$(BUILD)/.arch: | $(BUILD)
	echo $(ARCH) >$@

$(BUILD)/alloctrace.bpf.o: bpf/alloctrace.bpf.c | $(BUILD)
	$(CLANG) $(BPF_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/alloctrace.skel.h: $(BUILD)/alloctrace.bpf.o
	$(BPFTOOL) gen skeleton $< name alloctrace_bpf > $@

$(OBJ)/%.o: user/%.c | $(BUILD)/.arch
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

# Generated headers: named, since -MMD only knows them after a first build.
# The skeleton's readers are found, not listed: fuzz/fuzz.mk's ASan build
# uses the same list.
SKEL_USERS := $(shell grep -l '"alloctrace.skel.h"' $(LOADER_SRCS))
$(SKEL_USERS:user/%.c=$(OBJ)/%.o): $(BUILD)/alloctrace.skel.h

# The HTML page's template, script and style, compiled in.
$(BUILD)/html_assets.h: html/* scripts/embed.sh | $(BUILD)
	./scripts/embed.sh $@ html/report.html html/report.css html/report.js

$(OBJ)/export/html.o: $(BUILD)/html_assets.h

$(TOOL): $(CORE_OBJS) $(LOADER_OBJS)
	$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

# Each with tests/unit/case_filter.c: TEST_CASE runs one case (make unit T=).
$(BUILD)/tests/%: tests/unit/%.c tests/unit/case_filter.c $(CORE_OBJS) | $(BUILD)/tests
	$(CC) $(CPPFLAGS) $(CFLAGS) $(DEPFLAGS) $(filter %.c %.o,$^) -o $@ -lcmocka $(CORE_LDLIBS)

# test_features judges feature sets as start does: the tracer's verdict,
# linked with what it probes through (here and under ASan, fuzz/fuzz.mk).
TEST_FEATURES_OBJS := tracer/features.o tracer/uprobe_multi.o
$(BUILD)/tests/test_features: $(TEST_FEATURES_OBJS:%=$(OBJ)/%)
$(BUILD)/tests/test_features: CORE_LDLIBS += -lbpf

# test_cfi reads the call frame information of fixtures built beside it:
# the same functions with .eh_frame_hdr, without it (as `cc -static`
# links), assembled by clang (.eh_frame of type SHT_X86_64_UNWIND), with
# .debug_frame only, and entered at 0x1028, in a gap no FDE covers.
%/cfi_fixture.so %/cfi_bigreg.so %/cfi_nohdr.so %/cfi_unwind_type.so %/cfi_debug_frame.so \
%/cfi_entry.so: tests/unit/cfi_fixture.S tests/unit/cfi_bigreg.S tests/unit/cfi_debug_frame.S
	mkdir -p $(@D)
	$(CC) -shared -nostdlib -Wl,--eh-frame-hdr tests/unit/cfi_fixture.S -o $*/cfi_fixture.so
	$(CC) -shared -nostdlib -Wl,--eh-frame-hdr tests/unit/cfi_bigreg.S -o $*/cfi_bigreg.so
	$(CC) -shared -nostdlib -Wl,--no-eh-frame-hdr tests/unit/cfi_fixture.S -o $*/cfi_nohdr.so
	$(CLANG) -c tests/unit/cfi_fixture.S -o $*/cfi_unwind_type.o
	$(CC) -shared -nostdlib -Wl,--eh-frame-hdr $*/cfi_unwind_type.o -o $*/cfi_unwind_type.so
	$(CC) -shared -nostdlib -Itests/unit tests/unit/cfi_debug_frame.S -o $*/cfi_debug_frame.so
	$(CC) -shared -nostdlib -Wl,--eh-frame-hdr -Wl,-e,0x1028 tests/unit/cfi_fixture.S \
		-o $*/cfi_entry.so

# arm64's, assembled for arm64 on any host (binutils-aarch64-linux-gnu):
# a table is built for the traced program's machine, not the loader's.
AARCH64_BINUTILS ?= aarch64-linux-gnu-
%/cfi_arm64.so: tests/unit/cfi_arm64.s
	mkdir -p $(@D)
	$(AARCH64_BINUTILS)as $< -o $(@:.so=.o)
	$(AARCH64_BINUTILS)ld -shared --eh-frame-hdr -Ttext=0x1000 $(@:.so=.o) -o $@

$(BUILD)/tests/test_cfi: $(BUILD)/tests/cfi_fixture.so $(BUILD)/tests/cfi_arm64.so

$(BUILD)/workloads/%: tests/workloads/%.c $(wildcard tests/workloads/*.h) | $(BUILD)/workloads
	$(CC) $(WORKLOAD_CFLAGS) $< -o $@ -ldl $(WORKLOAD_LDFLAGS)

# Bound at load: a lazy binding's resolver, on exit()'s path, saves the
# vector registers on the stack (2.7 KiB with AVX-512) over the dead frame
# the workload leaves for the leak check to ignore.
$(BUILD)/workloads/deadframe: WORKLOAD_LDFLAGS := -Wl,-z,now

$(BUILD)/workloads/%: tests/workloads/%.cc | $(BUILD)/workloads
	$(CXX) $(WORKLOAD_CFLAGS) $< -o $@

# The unwinding workloads keep no frame pointers, as distributions build.
NOFP_CFLAGS := -O2 -g -fomit-frame-pointer

$(BUILD)/workloads/unwind: tests/workloads/unwind.cc tests/workloads/clobber_fp.h \
		$(BUILD)/workloads/libplugin.so
	$(CXX) $(NOFP_CFLAGS) $< -o $@ -ldl

$(BUILD)/workloads/sigalloc: tests/workloads/sigalloc.c | $(BUILD)/workloads
	$(CC) $(NOFP_CFLAGS) $< -o $@

$(BUILD)/workloads/deepwork: tests/workloads/deepwork.c tests/workloads/handshake.h \
			     | $(BUILD)/workloads
	$(CC) $(NOFP_CFLAGS) $< -o $@

$(BUILD)/workloads/twins-nofp: tests/workloads/twins.c tests/workloads/workload.h | $(BUILD)/workloads
	$(CC) $(NOFP_CFLAGS) $< -o $@

# --big-only's system-call fallback: a static program, not known as glibc.
$(BUILD)/workloads/bigbrk-static: tests/workloads/bigbrk.c tests/workloads/handshake.h \
				   tests/workloads/workload.h | $(BUILD)/workloads
	$(CC) $(WORKLOAD_CFLAGS) -static $< -o $@

$(BUILD)/workloads/libplugin.so: tests/workloads/plugin.c tests/workloads/clobber_fp.h | $(BUILD)/workloads
	$(CC) $(NOFP_CFLAGS) -shared -fPIC $< -o $@

$(BUILD)/workloads/libctorleak.so: tests/workloads/ctorleak.c | $(BUILD)/workloads
	$(CC) $(NOFP_CFLAGS) -shared -fPIC $< -o $@

# libc named first: the loader maps libctorleak.so after the allocator.
$(BUILD)/workloads/ctorlink: tests/workloads/ctorlink.c $(BUILD)/workloads/libctorleak.so
	$(CC) $(NOFP_CFLAGS) $< -o $@ -Wl,--no-as-needed -lc -L$(BUILD)/workloads -lctorleak \
		-Wl,-rpath,'$$ORIGIN'

$(BUILD)/workloads/ctordlopen: $(BUILD)/workloads/libctorleak.so

# The BPF stack walker (bpf/cfi.bpf.h, bpf/memo.bpf.h) built for user space
# over recorded cases (tests/unit/unwind_cases/README.md): replayed by
# test_unwind_replay, recorded by unwind_record. Every architecture's
# walker on any host, picked by the case's "arch" line; each object keeps
# only its walk function global (both define the BPF object's maps).
REPLAY_ARCHES := $(ARCHES)
REPLAY_OBJS := $(BUILD)/tests/unwind_case.o $(REPLAY_ARCHES:%=$(BUILD)/tests/unwind_walk_%.o)
OBJCOPY ?= $(CROSS_COMPILE)objcopy

$(BUILD)/tests/unwind_case.o: tests/unit/unwind_case.c | $(BUILD)/tests
	$(CC) $(CPPFLAGS) -Itests/unit $(CFLAGS) $(DEPFLAGS) -c $< -o $@

# REPLAY_WALK COMPILER: the recipe of unwind_walk_ARCH.o, this build's and
# ASan's (fuzz/fuzz.mk).
define REPLAY_WALK
	$(1) -DUNWIND_REPLAY -D__TARGET_ARCH_$* -DCASE_WALK=unwind_case__walk_$* -Ibpf -Itests/unit \
		-c $< -o $@
	$(OBJCOPY) --keep-global-symbol=unwind_case__walk_$* $@
endef

$(BUILD)/tests/unwind_walk_%.o: tests/unit/unwind_walk.c | $(BUILD)/tests
	$(call REPLAY_WALK,$(CC) $(CPPFLAGS) $(CFLAGS) $(DEPFLAGS))

$(BUILD)/tests/test_unwind_replay: $(REPLAY_OBJS)

$(BUILD)/tests/unwind_record: tests/drivers/unwind_record.c $(REPLAY_OBJS) \
		$(CORE_OBJS) | $(BUILD)/tests
	$(CC) $(CPPFLAGS) $(CFLAGS) $(DEPFLAGS) $(filter %.c %.o,$^) -o $@ $(CORE_LDLIBS)

# Drives the leak-check engine on a real process, without the BPF side.
$(BUILD)/tests/leakscan: tests/drivers/leakscan.c $(CORE_OBJS) | $(BUILD)/tests
	$(CC) $(CPPFLAGS) $(CFLAGS) $(DEPFLAGS) $(filter %.c %.o,$^) -o $@ $(CORE_LDLIBS)

tests: $(TOOL) $(UNIT_TESTS) $(WORKLOADS) $(BUILD)/tests/leakscan $(BUILD)/tests/unwind_record
	@for w in $(NOT_BUILT); do echo "tests: not built for ARCH=$(ARCH): $$w"; done

deps:
	ARCH=$(ARCH) SYSROOT=$(SYSROOT) ./scripts/deps.sh

# The sanitizer builds and fuzzers run from tests/integration/test_hardening.sh
# and (the loader's) test_errors.sh. J=N scripts at once (default: the CPUs),
# T='test_leaks:static test_exit' only those scripts or cases, V=1 each
# script's whole output (docs/testing.md).
check: tests fuzz-build unit-asan tool-asan
	TEST_JOBS='$(J)' TEST_ONLY='$(T)' TEST_VERBOSE='$(V)' ./tests/run.sh

# What needs no root, as any user, in under a minute once built: the unit
# tests (the walker replay among them), the static checks and the scripts
# marked "# test: no root" (test_errors_cli.sh: the loader and its ASan
# build given bad command lines). T=test_profile:CASE runs one cmocka case.
UNIT_NEEDS := $(UNIT_TESTS) $(TOOL) tool-asan $(BUILD)/workloads/leaks \
	      $(BUILD)/workloads/target
unit: $(UNIT_NEEDS)
	TEST_SET=unit TEST_JOBS='$(J)' TEST_ONLY='$(T)' TEST_VERBOSE='$(V)' ./tests/run.sh

# The integration scripts alone (root).
integration: tests fuzz-build unit-asan tool-asan
	TEST_SET=integration TEST_JOBS='$(J)' TEST_ONLY='$(T)' TEST_VERBOSE='$(V)' ./tests/run.sh

# The suite in a QEMU guest on one of Debian's kernels (KERNEL=6.1 or 6.12),
# with what check builds; ARCH=arm64 boots Debian's arm64 kernel on an
# arm64 userland (scripts/vmtest/arch-arm64.sh). T='test_leaks test_growth':
# only those integration scripts.
KERNEL ?= 6.1
vmtest: tests fuzz-build unit-asan tool-asan
	VMTEST_ARCH=$(ARCH) SYSROOT=$(SYSROOT) ./scripts/vmtest.sh run $(KERNEL) \
		$(patsubst %,tests/integration/%.sh,$(T:.sh=))

demo: $(TOOL) $(BUILD)/workloads/leaky
	./scripts/demo.sh

# The Debian package (debian/), built as dpkg-buildpackage -us -uc -b
# would in a fresh clone: in a copy of the tree without its build, under
# build/deb/, the .deb left there. scripts/deb.sh.
deb:
	./scripts/deb.sh $(BUILD)/deb

install: $(TOOL)
	install -D -m 0755 $(TOOL) $(DESTDIR)$(PREFIX)/sbin/$(TOOL)
	install -D -m 0644 docs/alloctrace.8 $(DESTDIR)$(PREFIX)/share/man/man8/alloctrace.8

# The C sources clang-format keeps: the loader, the BPF side, the shared
# headers and the unit tests (tests/static/test_format.sh checks them).
FORMAT_FILES = $(sort $(wildcard user/*/*.[ch] bpf/*.[ch] include/*.h tests/unit/*.[ch]))

format:
	clang-format -i $(FORMAT_FILES)

print-format-files:
	@echo $(FORMAT_FILES)

clean:
	rm -rf $(BUILD) $(TOOL)

# Files only: make ARCH=arm64 vmtest unpacks busybox-static under build/,
# with directories named *.d. The compiler writes them; nothing remakes
# them: make's built-in %: %.o would otherwise build unwind_walk_x86.d.o by
# the unwind_walk_%.o rule once unwind_walk.c is newer than its .d.
%.d: ;
-include $(shell find $(BUILD) -name '*.d' -type f 2>/dev/null)

include tests/workloads/allocators.mk
include bench/bench.mk
include fuzz/fuzz.mk

# For tests/static/test_layers.sh: the rooms it checks, and the files
# another ARCH's compiler reads.
print-core-rooms:
	@echo $(CORE_ROOMS)

print-arch-others:
	@echo $(ARCH_OTHERS)

# For scripts/vmtest.sh: the architectures a guest may be of.
print-arches:
	@echo $(ARCHES)

format-check:
	@./tests/static/test_format.sh | tee /dev/stderr | grep -q '^ok'
