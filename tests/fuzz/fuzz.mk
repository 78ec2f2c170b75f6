# fuzz.mk: `make fuzz`, included by the Makefile. Builds one libFuzzer binary per
# reader of untrusted input (tests/fuzz/fuzz_*.c over the targets of
# tests/fuzz/fuzz_targets.c) with clang, AddressSanitizer and UBSan, and runs each for
# FUZZ_SECONDS over a working corpus seeded from tests/fuzz/seeds/. A crash fails the
# target; minimize it into tests/regress/<target>/, where `make test` replays it.
# Everything goes to build/fuzz/ (the gcc build owns build/obj/).

FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := config corpus ckpt align image ground
# Instrumented for coverage everywhere; the fuzzer's main() only in the binaries.
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS   = -std=c11 -D_POSIX_C_SOURCE=200809L -Isrc $(WARN) -g -O1 -fno-omit-frame-pointer \
                $(FUZZ_SAN) -MMD -MP $(PKG_CFLAGS)
# What the fuzzers link from src/: all but the program's main and the double-only checks.
FUZZ_LIB_OBJS := $(patsubst src/%.c,build/fuzz/obj/%.o,\
                   $(filter-out src/cli/main.c src/nn/fdcheck.c src/model/fdcheck_model.c src/model/explain_examples.c,$(SRCS)))
FUZZ_BINS    := $(FUZZ_TARGETS:%=build/fuzz/fuzz_%)
# No input of at most a few KiB justifies more: a bigger allocation is a bug (say, a
# size read from a damaged checkpoint and trusted).
FUZZ_RUN_FLAGS := -max_total_time=$(FUZZ_SECONDS) -malloc_limit_mb=256 -rss_limit_mb=2048 \
                  -print_final_stats=1
FUZZ_DICT_config := -dict=tests/fuzz/yaml.dict

.PHONY: fuzz fuzz-build $(FUZZ_TARGETS:%=fuzz-%)

fuzz: $(FUZZ_TARGETS:%=fuzz-%)

fuzz-build: $(FUZZ_BINS)

build/fuzz/obj/%.o: src/%.c | test-deps
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

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
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(PKG_LIBS) -lunistring -lm

# One target: the working corpus (build/fuzz/corpus/T, kept between runs) gets the
# seeds, the fuzzer runs, and one summary line reports executions and crashes. On a
# crash, the end of the log and the crashing input (build/fuzz/artifacts/T/) are shown.
$(FUZZ_TARGETS:%=fuzz-%): fuzz-%: build/fuzz/fuzz_%
	@mkdir -p build/fuzz/corpus/$* build/fuzz/artifacts/$*
	@cp tests/fuzz/seeds/$*/* build/fuzz/corpus/$*/
	@if [ $* = config ]; then cp configs/*.yaml build/fuzz/corpus/config/; fi
	@echo "fuzz_$*: running for $(FUZZ_SECONDS) s (log: build/fuzz/$*.log)"
	@ASAN_OPTIONS=detect_leaks=1 ./build/fuzz/fuzz_$* $(FUZZ_RUN_FLAGS) $(FUZZ_DICT_$*) \
	    -artifact_prefix=build/fuzz/artifacts/$*/ build/fuzz/corpus/$* \
	    >build/fuzz/$*.log 2>&1; rc=$$?; \
	runs=$$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\)/\1/p' build/fuzz/$*.log); \
	echo "fuzz_$*: $${runs:-?} runs, $$([ $$rc = 0 ] && echo 0 || echo 1) crashes"; \
	if [ $$rc != 0 ]; then tail -n 40 build/fuzz/$*.log; ls -l build/fuzz/artifacts/$*; fi; \
	exit $$rc

# The entry points' objects are kept (not intermediate files of a chain of rules).
.SECONDARY: $(FUZZ_TARGETS:%=build/fuzz/obj/main_%.o)

-include $(wildcard build/fuzz/obj/*.d build/fuzz/obj/*/*.d)
