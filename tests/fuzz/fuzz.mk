# fuzz.mk: `make fuzz`, included by the Makefile. Builds one libFuzzer binary per
# reader of untrusted input (tests/fuzz/fuzz_*.c over the targets of
# tests/fuzz/fuzz_targets.c) with clang, AddressSanitizer and UBSan, and runs them,
# FUZZ_JOBS at once (default all: on 2 cores each has a third of a core), each for
# FUZZ_SECONDS. Each starts from the corpus kept in the repository
# (tests/fuzz/corpus/<target>/: the inputs earlier runs found that reach new code), the
# hand-made seeds (tests/fuzz/seeds/) and the crashes once found (tests/regress/); what
# it finds goes to a working corpus in build/fuzz/corpus/. A crash fails the target;
# minimize it into tests/regress/<target>/, where `make test` replays it. `make
# fuzz-merge` adds the working corpus's new coverage to tests/fuzz/corpus/, to be
# committed (make ci-full runs it after 10 minutes of a core a target). Everything else
# goes to build/fuzz/ (the gcc build owns build/obj/).

FUZZ_CC      ?= clang
FUZZ_CXX     ?= clang++
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := config corpus ckpt align image ground spm
FUZZ_JOBS    ?= $(words $(FUZZ_TARGETS))
# Instrumented for coverage everywhere; the fuzzer's main() only in the binaries.
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS   = -std=c11 -D_POSIX_C_SOURCE=200809L -Isrc $(WARN) -g -O1 -fno-omit-frame-pointer \
                $(FUZZ_SAN) -MMD -MP $(PKG_CFLAGS)
# What the fuzzers link from src/: all but the program's main and the double-only checks.
FUZZ_LIB_OBJS := $(patsubst src/%.c,build/fuzz/obj/%.o,\
                   $(filter-out src/cli/main.c src/nn/fdcheck.c src/model/fdcheck_model.c src/model/explain_examples.c,$(SRCS))) \
                 $(patsubst src/%.cc,build/fuzz/obj/%.o,$(CXX_SRCS))
FUZZ_BINS    := $(FUZZ_TARGETS:%=build/fuzz/fuzz_%)
# No input of at most a few KiB justifies more: a bigger allocation is a bug (say, a
# size read from a damaged checkpoint and trusted).
FUZZ_RUN_FLAGS := -max_total_time=$(FUZZ_SECONDS) -malloc_limit_mb=256 -rss_limit_mb=2048 \
                  -print_final_stats=1
FUZZ_DICT_config := -dict=tests/fuzz/yaml.dict
FUZZ_DICT_ckpt   := -dict=tests/fuzz/ckpt.dict
# The kept corpus holds inputs of at most 8 KiB (a merge cuts longer ones there: the
# checkpoint seeds, 8 KiB at most, stay whole); the longest lines a reader refuses are
# the fuzzer's to find again each run, not the repository's to carry.
FUZZ_MERGE_FLAGS := -max_len=8192 -malloc_limit_mb=256 -rss_limit_mb=2048

.PHONY: fuzz fuzz-build fuzz-merge $(FUZZ_TARGETS:%=fuzz-%) $(FUZZ_TARGETS:%=fuzz-merge-%)

# The binaries first, on every core, then the fuzzers: all at once by default, so that
# the wall time is FUZZ_SECONDS whatever the cores (make ci-full runs one per core
# instead, each for 10 minutes of a core). -Otarget keeps each fuzzer's lines together.
fuzz: test-deps
	@$(MAKE) --no-print-directory -j$(JOBS) fuzz-build
	@$(MAKE) --no-print-directory -j$(FUZZ_JOBS) -Otarget $(FUZZ_TARGETS:%=fuzz-%)

# Where a target's fuzzer reads from: the working corpus (which it writes), then the
# kept corpus, the seeds and the crashes (which it only reads).
FUZZ_INPUTS = build/fuzz/corpus/$* tests/fuzz/corpus/$* tests/fuzz/seeds/$* tests/regress/$* \
              $(if $(filter config,$*),build/fuzz/configs)

fuzz-build: $(FUZZ_BINS)

build/fuzz/obj/%.o: src/%.c | test-deps
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

# The C++ seam (src/text/subwords.cc) without UBSan's vptr and function checks: their
# handlers are in UBSan's C++ runtime, which the C link of the fuzzers leaves out (the
# function check fires on the C function std::thread calls).
build/fuzz/obj/%.o: src/%.cc | test-deps
	@mkdir -p $(@D)
	$(FUZZ_CXX) -std=c++17 -Isrc -g -O1 -fno-omit-frame-pointer $(FUZZ_SAN) -fno-sanitize=vptr,function -MMD -MP \
	    $(PKG_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

build/fuzz/obj/fuzz_targets.o: tests/fuzz/fuzz_targets.c | test-deps
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -Itests -c -o $@ $<

build/fuzz/obj/main_%.o: tests/fuzz/fuzz_%.c | test-deps
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -Itests -c -o $@ $<

# An archive, so each binary takes only the objects it needs.
build/fuzz/libs2s.a: $(FUZZ_LIB_OBJS)
	rm -f $@
	ar rcs $@ $^

$(FUZZ_BINS): build/fuzz/fuzz_%: build/fuzz/obj/main_%.o build/fuzz/obj/fuzz_targets.o \
                                build/fuzz/libs2s.a
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(PKG_LIBS) -lstdc++ -lunistring -lm

# One target: the fuzzer runs from its inputs (the working corpus build/fuzz/corpus/T is
# kept between runs), and one summary line reports executions and crashes. On a crash,
# the end of the log and the crashing input (build/fuzz/artifacts/T/) are shown.
$(FUZZ_TARGETS:%=fuzz-%): fuzz-%: build/fuzz/fuzz_%
	@mkdir -p build/fuzz/corpus/$* build/fuzz/artifacts/$*
	@if [ $* = config ]; then mkdir -p build/fuzz/configs && cp configs/*.yaml build/fuzz/configs/; fi
	@echo "fuzz_$*: running for $(FUZZ_SECONDS) s (log: build/fuzz/$*.log)"
	@ASAN_OPTIONS=detect_leaks=1 ./build/fuzz/fuzz_$* $(FUZZ_RUN_FLAGS) $(FUZZ_DICT_$*) \
	    -artifact_prefix=build/fuzz/artifacts/$*/ $(FUZZ_INPUTS) \
	    >build/fuzz/$*.log 2>&1; rc=$$?; \
	runs=$$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\)/\1/p' build/fuzz/$*.log); \
	echo "fuzz_$*: $${runs:-?} runs, $$([ $$rc = 0 ] && echo 0 || echo 1) crashes"; \
	if [ $$rc != 0 ]; then tail -n 40 build/fuzz/$*.log; ls -l build/fuzz/artifacts/$*; fi; \
	exit $$rc

# The kept corpus grows by the inputs of the working corpus that reach code it does not
# (libFuzzer's -merge=1 keeps the smallest input for each feature); commit what it adds.
fuzz-merge: $(FUZZ_TARGETS:%=fuzz-merge-%)

$(FUZZ_TARGETS:%=fuzz-merge-%): fuzz-merge-%: build/fuzz/fuzz_%
	@mkdir -p tests/fuzz/corpus/$* build/fuzz/corpus/$*
	@before=$$(ls tests/fuzz/corpus/$* | wc -l); \
	ASAN_OPTIONS=detect_leaks=1 ./build/fuzz/fuzz_$* -merge=1 $(FUZZ_MERGE_FLAGS) \
	    tests/fuzz/corpus/$* build/fuzz/corpus/$* >build/fuzz/merge-$*.log 2>&1 || \
	    { tail -n 20 build/fuzz/merge-$*.log; exit 1; }; \
	echo "fuzz_$*: the kept corpus $$before -> $$(ls tests/fuzz/corpus/$* | wc -l) inputs"

# The entry points' objects are kept (not intermediate files of a chain of rules).
.SECONDARY: $(FUZZ_TARGETS:%=build/fuzz/obj/main_%.o)

-include $(wildcard build/fuzz/obj/*.d build/fuzz/obj/*/*.d)
