# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The benchmark suite, included from the top Makefile: `make bench` builds
# the workloads and the empty-probe loader, prints the verifier's figures of
# each BPF program (bench/verifier.c), then runs bench/run.sh, which
# ends with the unwind tables of clang (bench/tables.sh, alone: `make bench-tables`),
# the metrics endpoint during scans (bench/scrape.sh, alone: `make bench-scrape`)
# fork churn under --comm (bench/forks.sh, alone: `make bench-forks`),
# programs' threads and bystanders (bench/programs.sh, alone: `make bench-programs`)
# and the real services (bench/services.sh, alone: `make bench-services`).
# Names are prefixed BENCH_ so that nothing here changes the main build.
# The programs follow the main build's ARCH, CC (a cross gcc and SYSROOT
# for ARCH=arm64 on x86-64) and BPF target: `make ARCH=arm64 vmbench` runs
# the pair loops in the arm64 guest (scripts/vmtest.sh bench).

BENCH_BUILD := bench/build
BENCH_ARCH := $(ARCH)
# bench/build holds one ARCH's programs (bench/build/.arch; a tree of before
# it is the host's), as build/ does: another ARCH's are refused, not reused.
BENCH_BUILT_ARCH := $(or $(shell cat $(BENCH_BUILD)/.arch 2>/dev/null),$(if \
		    $(wildcard $(BENCH_BUILD)/pairs),$(HOST_ARCH)))
ifneq ($(filter-out $(ARCH),$(BENCH_BUILT_ARCH)),)
ifneq ($(filter bench% vmbench,$(MAKECMDGOALS)),)
$(error $(BENCH_BUILD)/ holds the ARCH=$(BENCH_BUILT_ARCH) programs: rm -rf $(BENCH_BUILD) first)
endif
endif
BENCH_CLANG ?= clang
BENCH_BPFTOOL ?= $(shell command -v bpftool || echo /usr/sbin/bpftool)
BENCH_CFLAGS := -g -Wall -Wextra -Wno-unused-parameter -std=gnu11
BENCH_BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(BENCH_ARCH) \
		    -Ivmlinux/$(BENCH_ARCH) -Wall
BENCH_PROGS := $(BENCH_BUILD)/pairs $(BENCH_BUILD)/scale $(BENCH_BUILD)/floor \
	       $(BENCH_BUILD)/depth-cfi $(BENCH_BUILD)/depth-fp $(BENCH_BUILD)/leakheap \
	       $(BENCH_BUILD)/churn $(BENCH_BUILD)/verifier $(BENCH_BUILD)/forks-traced \
	       $(BENCH_BUILD)/forks-native $(BENCH_BUILD)/ring $(BENCH_BUILD)/threads \
	       $(BENCH_BUILD)/bystander

.PHONY: bench bench-build bench-services bench-growth bench-tables bench-verifier bench-scrape \
	bench-forks bench-programs vmbench
# `alloctrace` by name, not $(TOOL): this file may be included before TOOL is set.
# The verifier's figures first: they take seconds and do not vary by round.
bench: alloctrace bench-build build/tests/leakscan build/workloads/bigheap
	$(BENCH_BUILD)/verifier
	./bench/run.sh

# The pair loops alone, in KERNEL's guest of ARCH (scripts/vmtest.sh), with
# counts that fit TCG: ratios to the guest's own floor, not times.
vmbench: alloctrace bench-build
	VMTEST_ARCH=$(ARCH) SYSROOT=$(SYSROOT) ./scripts/vmtest.sh bench $(KERNEL)

bench-verifier: $(BENCH_BUILD)/verifier
	$(BENCH_BUILD)/verifier

bench-services: alloctrace $(BENCH_BUILD)/floor
	./bench/services.sh

bench-growth: alloctrace $(BENCH_BUILD)/churn
	./bench/churn.sh

bench-forks: alloctrace $(BENCH_BUILD)/forks-traced $(BENCH_BUILD)/forks-native
	./bench/forks.sh

bench-programs: alloctrace $(BENCH_BUILD)/ring $(BENCH_BUILD)/threads $(BENCH_BUILD)/bystander \
		$(BENCH_BUILD)/floor
	./bench/programs.sh

bench-tables: alloctrace
	./bench/tables.sh

bench-scrape: alloctrace build/workloads/bigheap
	./bench/scrape.sh

bench-build: $(BENCH_PROGS)

$(BENCH_BUILD):
	mkdir -p $@
	echo $(ARCH) >$@/.arch

# One program under two names: --comm takes the traced copy only.
$(BENCH_BUILD)/forks-traced $(BENCH_BUILD)/forks-native: bench/forks.c | $(BENCH_BUILD)
	$(CC) $(BENCH_CFLAGS) -O2 -fno-builtin -fno-omit-frame-pointer $< -o $@

# -fno-builtin: gcc may drop a malloc whose block is only freed. Frame
# pointers: alloctrace walks them, and programs it traces are built so.
$(BENCH_BUILD)/pairs: bench/pairs.c | $(BENCH_BUILD)
	$(CC) $(BENCH_CFLAGS) -O2 -fno-builtin -fno-omit-frame-pointer -pthread $< -o $@

# The programs of bench/programs.sh: a live ring and thread churn in created
# threads, and an untraced bystander; built as pairs is.
$(BENCH_BUILD)/ring $(BENCH_BUILD)/threads $(BENCH_BUILD)/bystander: $(BENCH_BUILD)/%: bench/%.c | $(BENCH_BUILD)
	$(CC) $(BENCH_CFLAGS) -O2 -fno-builtin -fno-omit-frame-pointer -pthread $< -o $@

# -O0 keeps the ten call sites per level apart; frame pointers for the walk.
$(BENCH_BUILD)/scale: bench/scale.c | $(BENCH_BUILD)
	$(CC) $(BENCH_CFLAGS) -O0 -fno-omit-frame-pointer -fno-inline $< -o $@

# The frame cost: CFI walks code without frame pointers, the kernel's walk needs them.
$(BENCH_BUILD)/depth-cfi: bench/depth.c | $(BENCH_BUILD)
	$(CC) $(BENCH_CFLAGS) -O2 -fno-builtin -fomit-frame-pointer $< -o $@

$(BENCH_BUILD)/depth-fp: bench/depth.c | $(BENCH_BUILD)
	$(CC) $(BENCH_CFLAGS) -O2 -fno-builtin -fno-omit-frame-pointer $< -o $@

# -fno-builtin: the leak's memset stays a call, whose faults --growth walks out of.
$(BENCH_BUILD)/churn: bench/churn.c | $(BENCH_BUILD)
	$(CC) $(BENCH_CFLAGS) -O2 -fno-builtin $< -o $@

$(BENCH_BUILD)/leakheap: bench/leakheap.c | $(BENCH_BUILD)
	$(CC) $(BENCH_CFLAGS) -O2 $< -o $@

$(BENCH_BUILD)/floor.bpf.o: bench/floor.bpf.c | $(BENCH_BUILD)
	$(BENCH_CLANG) $(BENCH_BPF_CFLAGS) -c $< -o $@

$(BENCH_BUILD)/floor.skel.h: $(BENCH_BUILD)/floor.bpf.o
	$(BENCH_BPFTOOL) gen skeleton $< name floor_bpf > $@

# alloctrace's own objects (the core the unit tests link, and its
# uprobe_multi probe), so that "best" is where it probes.
BENCH_FLOOR_OBJS := $(CORE_OBJS) $(OBJ)/tracer/uprobe_multi.o

$(BENCH_BUILD)/floor: bench/floor.c $(BENCH_FLOOR_OBJS) $(wildcard user/probe/*.h) \
		       include/alloctrace.h $(BENCH_BUILD)/floor.skel.h
	$(CC) $(BENCH_CFLAGS) -O2 -D_GNU_SOURCE -Iinclude -Iuser -I$(BENCH_BUILD) \
		bench/floor.c $(BENCH_FLOOR_OBJS) -o $@ -lbpf $(CORE_LDLIBS) -ldl

# Loads alloctrace's own object (its skeleton) to ask the verifier about it.
$(BENCH_BUILD)/verifier: bench/verifier.c $(OBJ)/tracer/uprobe_multi.o build/alloctrace.skel.h \
			  | $(BENCH_BUILD)
	$(CC) $(BENCH_CFLAGS) -O2 -Iinclude -Iuser -Ibuild bench/verifier.c \
		$(OBJ)/tracer/uprobe_multi.o -o $@ -lbpf -lelf
