# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# alloctrace: BPF object -> skeleton -> loader, plus tests and workloads.

ARCH ?= $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
CC ?= cc
CLANG ?= clang
BPFTOOL ?= $(shell command -v bpftool || echo /usr/sbin/bpftool)
PREFIX ?= /usr/local
DESTDIR ?=

BUILD := build
OBJ := $(BUILD)/obj
TOOL := alloctrace

CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wshadow -Wstrict-prototypes
CPPFLAGS += -Iinclude -Iuser -I$(BUILD) -D_GNU_SOURCE
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Iinclude -Ivmlinux/$(ARCH) -Wall
LDLIBS := -lbpf -lelf -ldw -lz -lstdc++ -lpthread -lm

# Plain C: links and is unit-tested without libbpf.
CORE_SRCS := util.c profile.c history.c symbolize.c objfile.c cfi.c cfi_check.c procmaps.c procs.c report.c json.c \
	     demangle.c log.c export.c folded.c pprof.c protobuf.c html.c x86_insn.c placement.c
LOADER_SRCS := main.c options.c target.c elfsym.c allocator.c linkmap.c tracer.c session.c \
	       filter.c uprobe_multi.c unwinder.c live.c
CORE_OBJS := $(CORE_SRCS:%.c=$(OBJ)/%.o)
LOADER_OBJS := $(LOADER_SRCS:%.c=$(OBJ)/%.o)

UNIT_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test_*.c))
WORKLOAD_C := $(wildcard tests/workloads/*.c)
WORKLOAD_CXX := $(wildcard tests/workloads/*.cc)
WORKLOAD_C := $(filter-out tests/workloads/plugin.c,$(WORKLOAD_C))
WORKLOADS := $(WORKLOAD_C:tests/workloads/%.c=$(BUILD)/workloads/%) \
	     $(WORKLOAD_CXX:tests/workloads/%.cc=$(BUILD)/workloads/%) \
	     $(BUILD)/workloads/twins-nofp
WORKLOAD_CFLAGS := -O0 -g -fno-omit-frame-pointer -fno-inline -pthread

.PHONY: all deps check unit integration demo install clean tests format
all: $(TOOL)

$(BUILD) $(OBJ) $(BUILD)/tests $(BUILD)/workloads:
	mkdir -p $@

$(BUILD)/alloctrace.bpf.o: bpf/alloctrace.bpf.c include/alloctrace.h | $(BUILD)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/alloctrace.skel.h: $(BUILD)/alloctrace.bpf.o
	$(BPFTOOL) gen skeleton $< name alloctrace_bpf > $@

$(OBJ)/%.o: user/%.c $(wildcard user/*.h) include/alloctrace.h | $(OBJ)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(OBJ)/tracer.o: $(BUILD)/alloctrace.skel.h

# The HTML page's template, script and style, compiled in.
$(BUILD)/html_assets.h: html/* scripts/embed.sh | $(BUILD)
	./scripts/embed.sh $@ html/report.html html/report.css html/report.js

$(OBJ)/html.o: $(BUILD)/html_assets.h

$(TOOL): $(CORE_OBJS) $(LOADER_OBJS)
	$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c tests/unit/fixtures.h $(CORE_OBJS) | $(BUILD)/tests
	$(CC) $(CPPFLAGS) $(CFLAGS) $(filter %.c %.o,$^) -o $@ -lcmocka -lelf -ldw -lz -lstdc++ -lm

# test_cfi reads the call frame information of fixtures built beside it.
%/cfi_fixture.so %/cfi_bigreg.so: tests/unit/cfi_fixture.S tests/unit/cfi_bigreg.S
	mkdir -p $(@D)
	$(CC) -shared -nostdlib -Wl,--eh-frame-hdr tests/unit/cfi_fixture.S -o $*/cfi_fixture.so
	$(CC) -shared -nostdlib -Wl,--eh-frame-hdr tests/unit/cfi_bigreg.S -o $*/cfi_bigreg.so

$(BUILD)/tests/test_cfi: $(BUILD)/tests/cfi_fixture.so

$(BUILD)/workloads/%: tests/workloads/%.c $(wildcard tests/workloads/*.h) | $(BUILD)/workloads
	$(CC) $(WORKLOAD_CFLAGS) $< -o $@ -ldl

$(BUILD)/workloads/%: tests/workloads/%.cc | $(BUILD)/workloads
	$(CXX) $(WORKLOAD_CFLAGS) $< -o $@

# The unwinding workloads keep no frame pointers, as distributions build.
NOFP_CFLAGS := -O2 -g -fomit-frame-pointer

$(BUILD)/workloads/unwind: tests/workloads/unwind.cc $(BUILD)/workloads/libplugin.so
	$(CXX) $(NOFP_CFLAGS) $< -o $@ -ldl

$(BUILD)/workloads/twins-nofp: tests/workloads/twins.c tests/workloads/workload.h | $(BUILD)/workloads
	$(CC) $(NOFP_CFLAGS) $< -o $@

$(BUILD)/workloads/libplugin.so: tests/workloads/plugin.c | $(BUILD)/workloads
	$(CC) $(NOFP_CFLAGS) -shared -fPIC $< -o $@

tests: $(TOOL) $(UNIT_TESTS) $(WORKLOADS)

deps:
	./scripts/deps.sh

# The sanitizer builds and fuzzers run from tests/integration/test_hardening.sh
# and (the loader's) test_errors.sh.
check: tests fuzz-build unit-asan tool-asan
	./tests/run.sh

demo: $(TOOL) $(BUILD)/workloads/leaky
	./scripts/demo.sh

install: $(TOOL)
	install -D -m 0755 $(TOOL) $(DESTDIR)$(PREFIX)/sbin/$(TOOL)
	install -D -m 0644 docs/alloctrace.8 $(DESTDIR)$(PREFIX)/share/man/man8/alloctrace.8

format:
	clang-format -i user/*.c user/*.h bpf/*.c include/*.h tests/unit/*.c

clean:
	rm -rf $(BUILD) $(TOOL)

include tests/workloads/allocators.mk
include bench/bench.mk
include fuzz/fuzz.mk
