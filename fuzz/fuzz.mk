# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Hardening builds, included from the top Makefile (after CORE_SRCS is set):
#
#   fuzz-build  libFuzzer targets (ASan + UBSan) and their seed corpora in
#               build/fuzz/; tests/integration/test_hardening.sh runs them
#               for FUZZ_SECONDS each.
#   fuzz-smoke  run each fuzzer FUZZ_SECONDS (default 10) on a copy of its seeds.
#   fuzz-long   the same for FUZZ_SECONDS=600 each, in parallel (FUZZ_JOBS),
#               on a corpus kept in build/fuzz/long-corpus/ between runs.
#   unit-asan   the cmocka unit tests built with ASan + UBSan into build/asan/.
#   tool-asan   the loader built with ASan + UBSan, build/asan/alloctrace;
#               tests/integration/test_errors.sh runs its bad inputs with it.
#
# Needs clang with libFuzzer (libclang-rt-14-dev on Debian 12). Names are
# prefixed FUZZ_/ASAN_ so that nothing here changes the main build.

FUZZ_B := $(or $(BUILD),build)
FUZZ_OUT := $(FUZZ_B)/fuzz
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 10
FUZZ_JOBS ?= 2
FUZZ_INC := -D_GNU_SOURCE -std=gnu11 -Iinclude -Iuser -I$(FUZZ_B) $(WARN_FLAGS)
FUZZ_CFLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	       -fno-omit-frame-pointer $(FUZZ_INC)
FUZZ_NAMES := procmaps options elf cfi x86_insn debugfile webconfig

# Every target links the whole core (the unit tests' objects, CORE_SRCS),
# built once with the fuzzer's coverage: a parser's code moved to another
# file, or a file it comes to need, changes no list here.
FUZZ_OBJS := $(CORE_SRCS:user/%.c=$(FUZZ_OUT)/obj/%.o)
FUZZ_OBJ_CFLAGS := -g -O1 -fsanitize=fuzzer-no-link,address,undefined \
		   -fno-sanitize-recover=undefined -fno-omit-frame-pointer $(FUZZ_INC)

# A cross build's sanitizer builds use its gcc (Debian's cross gcc comes
# with the target's libasan and libubsan); clang's libFuzzer runtime is
# the build host's only, so a cross build has no fuzzers: the build host's
# own build fuzzes the same parsers.
ifneq ($(ARCH),$(HOST_ARCH))
FUZZ_NAMES :=
ASAN_CC := $(CC)
else
ASAN_CC := $(FUZZ_CC)
endif

FUZZ_BINS := $(FUZZ_NAMES:%=$(FUZZ_OUT)/fuzz_%)
FUZZ_SEEDS := $(FUZZ_NAMES:%=$(FUZZ_OUT)/corpus/%/.stamp)
ASAN_OUT := $(FUZZ_B)/asan
ASAN_CFLAGS := -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	       -fno-omit-frame-pointer $(FUZZ_INC)
ASAN_LDLIBS := -lcmocka $(CORE_LDLIBS)
ASAN_OBJS := $(CORE_SRCS:user/%.c=$(ASAN_OUT)/obj/%.o)
ASAN_LOADER_OBJS := $(LOADER_SRCS:user/%.c=$(ASAN_OUT)/obj/%.o)
# The unit tests `make tests` builds for this ARCH, each with its ASan twin.
ASAN_TESTS := $(UNIT_TESTS:$(BUILD)/tests/%=$(ASAN_OUT)/%)

# Included before the first rule or after it, this must not change the
# default goal.
FUZZ_SAVED_GOAL := $(.DEFAULT_GOAL)

.PHONY: fuzz-build fuzz-smoke fuzz-long unit-asan tool-asan
# The objects named: otherwise make takes them for intermediate files.
fuzz-build: $(FUZZ_OBJS) $(FUZZ_BINS) $(FUZZ_SEEDS)

$(FUZZ_OUT) $(ASAN_OUT)/obj:
	mkdir -p $@

$(FUZZ_OUT)/obj/%.o: user/%.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_OBJ_CFLAGS) -MMD -MP -c $< -o $@

$(FUZZ_OUT)/obj/export/html.o: $(FUZZ_B)/html_assets.h

# FUZZ_TARGET NAME: the fuzzer and, for text seeds kept in fuzz/corpus/NAME/,
# its seed corpus.
define FUZZ_TARGET
$(FUZZ_OUT)/fuzz_$(1): fuzz/fuzz_$(1).c $(FUZZ_OBJS) | $(FUZZ_OUT)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -MMD -MP fuzz/fuzz_$(1).c $(FUZZ_OBJS) -o $$@ $(CORE_LDLIBS)

ifneq ($(wildcard fuzz/corpus/$(1)/*),)
$(FUZZ_OUT)/corpus/$(1)/.stamp: $(wildcard fuzz/corpus/$(1)/*)
	rm -rf $$(@D) && mkdir -p $$(@D)
	cp fuzz/corpus/$(1)/* $$(@D)/
	touch $$@
endif
endef
$(foreach n,$(FUZZ_NAMES),$(eval $(call FUZZ_TARGET,$(n))))

# The ELF seeds are built from a tiny C file: an object (64- and 32-bit), a
# shared library, a PIE executable with PT_INTERP, and truncated copies.
FUZZ_TINY := -O1 -fno-builtin -nostdlib -Wl,-z,noseparate-code -Wl,--build-id=none
$(FUZZ_OUT)/corpus/elf/.stamp: fuzz/seeds/tiny.c
	rm -rf $(@D) && mkdir -p $(@D)
	$(FUZZ_CC) -O1 -fno-builtin -c $< -o $(@D)/tiny.o
	$(FUZZ_CC) -m32 -O1 -fno-builtin -c $< -o $(@D)/tiny32.o
	$(FUZZ_CC) $(FUZZ_TINY) -fPIC -shared $< -o $(@D)/tiny.so
	$(FUZZ_CC) $(FUZZ_TINY) -fPIE -pie -Wl,-e,main $< -o $(@D)/tiny.exe
	head -c 1024 $(@D)/tiny.so >$(@D)/tiny.so.trunc1024
	head -c 64 $(@D)/tiny.exe >$(@D)/tiny.exe.trunc64
	head -c 700 $(@D)/tiny.o >$(@D)/tiny.o.trunc700
	touch $@

# The debug-file seeds: the ELF seeds, one with a debug link and build
# id, one with a small .gnu_debugdata.
$(FUZZ_OUT)/corpus/debugfile/.stamp: $(FUZZ_OUT)/corpus/elf/.stamp
	rm -rf $(@D) && mkdir -p $(@D)
	cp $(FUZZ_OUT)/corpus/elf/tiny.so $(FUZZ_OUT)/corpus/elf/tiny.exe $(@D)/
	printf 'tiny.debug\0\0\0\0\0\0\0\0' >$(@D)/link.bin
	objcopy --add-section .gnu_debuglink=$(@D)/link.bin $(@D)/tiny.so $(@D)/tiny-link.so
	xz -c $(@D)/tiny.so >$(@D)/mini.xz
	objcopy --add-section .gnu_debugdata=$(@D)/mini.xz $(@D)/tiny.exe $(@D)/tiny-mini.exe
	rm $(@D)/link.bin $(@D)/mini.xz
	touch $@

# The CFI seeds: objects with .eh_frame_hdr, one with every rule test_cfi
# knows, one naming a register no x86-64 code has, a copy cut inside its
# unwind sections, and the same rules without .eh_frame_hdr, in an
# SHT_X86_64_UNWIND section and in .debug_frame.
$(FUZZ_OUT)/corpus/cfi/.stamp: $(FUZZ_OUT)/corpus/elf/.stamp $(FUZZ_B)/tests/cfi_fixture.so
	rm -rf $(@D) && mkdir -p $(@D)
	cp $(FUZZ_OUT)/corpus/elf/tiny.so $(FUZZ_B)/tests/cfi_fixture.so $(FUZZ_B)/tests/cfi_bigreg.so $(@D)/
	cp $(addprefix $(FUZZ_B)/tests/cfi_,nohdr.so unwind_type.so debug_frame.so entry.so) $(@D)/
	head -c 12300 $(@D)/cfi_fixture.so >$(@D)/cfi_fixture.so.trunc12300
	touch $@

# fuzz/run.sh prints one "ok - fuzz NAME: ..." or "not ok - ..." line each;
# crashing inputs are kept in build/fuzz/artifacts/.
fuzz-smoke: fuzz-build
	rm -rf $(FUZZ_OUT)/smoke-corpus
	./fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_OUT)/smoke-corpus 1

# The corpus in build/fuzz/long-corpus/ grows from one run to the next.
fuzz-long: FUZZ_SECONDS = 600
fuzz-long: fuzz-build
	./fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_OUT)/long-corpus $(FUZZ_JOBS)

# The objects named here too: otherwise make takes them for intermediate
# files, deletes them, and rebuilds them all every time.
unit-asan: $(ASAN_OBJS) $(ASAN_TESTS)

$(ASAN_OUT)/obj/%.o: user/%.c
	@mkdir -p $(@D)
	$(ASAN_CC) $(ASAN_CFLAGS) -MMD -MP -c $< -o $@

$(ASAN_OUT)/obj/export/html.o: $(FUZZ_B)/html_assets.h
$(SKEL_USERS:user/%.c=$(ASAN_OUT)/obj/%.o): $(FUZZ_B)/alloctrace.skel.h

tool-asan: $(ASAN_OUT)/alloctrace

$(ASAN_OUT)/alloctrace: $(ASAN_OBJS) $(ASAN_LOADER_OBJS)
	$(ASAN_CC) $(ASAN_CFLAGS) $^ -o $@ $(LDLIBS)

$(ASAN_OUT)/test_cfi: $(ASAN_OUT)/cfi_fixture.so $(ASAN_OUT)/cfi_arm64.so
$(ASAN_OUT)/test_features: $(TEST_FEATURES_OBJS:%=$(ASAN_OUT)/obj/%)
$(ASAN_OUT)/test_features: ASAN_LDLIBS += -lbpf

# The BPF walker replayed on recorded cases, built as the Makefile builds it.
$(ASAN_OUT)/unwind_case.o: tests/unit/unwind_case.c | $(ASAN_OUT)/obj
	$(ASAN_CC) $(ASAN_CFLAGS) -Itests/unit -MMD -MP -c $< -o $@

$(ASAN_OUT)/unwind_walk_%.o: tests/unit/unwind_walk.c | $(ASAN_OUT)/obj
	$(call REPLAY_WALK,$(ASAN_CC) $(ASAN_CFLAGS) -MMD -MP)

$(ASAN_OUT)/test_unwind_replay: $(REPLAY_OBJS:$(BUILD)/tests/%=$(ASAN_OUT)/%)

$(ASAN_OUT)/test_%: tests/unit/test_%.c tests/unit/case_filter.c $(ASAN_OBJS) | $(ASAN_OUT)/obj
	$(ASAN_CC) $(ASAN_CFLAGS) -MMD -MP $(filter %.c %.o,$^) -o $@ $(ASAN_LDLIBS)

.DEFAULT_GOAL := $(FUZZ_SAVED_GOAL)
