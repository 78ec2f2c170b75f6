# s2s: build, test and tools. `make` builds ./s2s, `make test` runs the whole suite.
# Objects go to build/; the numerical core (CORE) is compiled twice, as float for the
# program and as double (-DS2S_REAL_DOUBLE, symbols suffixed _f64) for the gradient
# checks, and both are linked into the test binary. `make asan` builds and runs the unit
# suite in build/asan (B=, PROG=); `make valgrind` runs the tour of every command on the
# normal build under valgrind. Where each check runs: src/README.md.

CC      ?= cc
CXX     ?= c++
# sentencepiece: subword units (src/text/subwords.h, the one C++ file, behind a C seam)
PKGS    := openblas yaml-0.1 stb ompi-c sentencepiece
WARN    := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes
# -fno-trapping-math only tells the compiler that no floating-point exception handler
# watches (none does), so it may if-convert the branch-free maths of fastmath.h into
# SIMD code; results stay IEEE, bit for bit. (Never -ffast-math: the finite-difference checks need IEEE arithmetic.)
OPT     ?= -O3 -g -fno-trapping-math -fno-math-errno
# Recursively expanded, so pkg-config runs after `deps` has installed what is missing.
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS))
PKG_LIBS   = $(shell pkg-config --libs $(PKGS))
CHECK_CFLAGS = $(shell pkg-config --cflags check)
CHECK_LIBS   = $(shell pkg-config --libs check)
# libxsmm (Debian's libxsmm-dev, x86-64 only, a static library): JIT kernels for the
# small products of a training step (src/nn/small_gemm.h). Where it is missing (another
# architecture, or XSMM=0), every product is OpenBLAS's. Recursively expanded, like
# PKG_LIBS, so `deps` can install it first.
XSMM    ?= 1
XSMM_A   = $(if $(filter 1,$(XSMM)),$(wildcard /usr/lib/libxsmm.a))
CFLAGS   = -std=c11 -pthread -D_POSIX_C_SOURCE=200809L -Isrc $(WARN) $(OPT) -MMD -MP \
           $(if $(XSMM_A),-DS2S_XSMM) $(EXTRA_CFLAGS)
CXXFLAGS = -std=c++17 -pthread -Isrc -Wall -Wextra -Wshadow $(OPT) -MMD -MP $(EXTRA_CFLAGS)
LDLIBS   = $(PKG_LIBS) -lstdc++ -lunistring -lm -pthread $(if $(XSMM_A),$(XSMM_A) -ldl -lrt)

# Where objects and test binaries go, and the program the tests run.
B       ?= build
PROG    ?= s2s

# The numerical core, compiled as float and as double: the building blocks (src/nn)
# and the model over them (src/model).
CORE    := $(addprefix nn/,ops conv gru lstm rnn_tanh cell attn_kernels heads real_rows sublayers self_attention transformer_decoder tensor embedding_grad) \
           $(addprefix model/,attention encoder encoder_birnn encoder_attn encoder_image params workspace context_gate init_state model_forward model_backward decoder_transformer hard_attention)
# Built only in double: finite-difference checking (the tests and `s2s gradcheck`).
F64_ONLY := nn/fdcheck model/fdcheck_model model/explain_examples
SRCS    := $(wildcard src/*/*.c)
CXX_SRCS := $(wildcard src/*/*.cc)
LIB_OBJS := $(patsubst src/%.c,$(B)/obj/%.o,$(filter-out src/cli/main.c $(F64_ONLY:%=src/%.c),$(SRCS))) \
            $(patsubst src/%.cc,$(B)/obj/%.o,$(CXX_SRCS))
F64_OBJS := $(patsubst %,$(B)/f64/%.o,$(CORE) $(F64_ONLY))
# The same program with the test-only fault hooks of src/base/fault.h compiled in.
FAULT_OBJS := $(patsubst $(B)/obj/%,$(B)/fault/%,$(B)/obj/cli/main.o $(LIB_OBJS))
# What the double core needs from the (precision-free) rest.
F64_DEPS := $(patsubst %,$(B)/obj/%.o,model/batch model/explain_tensor base/mem base/rng)

# Test files compiled against the double core (gradient checks in double precision).
TESTS_F64 := $(addprefix nn/,test_fdcheck test_ops test_conv test_cell test_self_attention) \
             $(addprefix model/,test_attention test_model test_hard)
# The suite's sources: every tests/*/*.c but the fuzzers' entry points (their readers,
# fuzz_targets.c, are replayed by the suite), the cross-check's dump program and the
# BLAS probe (programs of their own).
TEST_SRCS := tests/check_main.c tests/fuzz/fuzz_targets.c \
             $(filter-out tests/crosscheck/% tests/blas/% tests/fuzz/fuzz_%.c,$(wildcard tests/*/*.c))
CROSSCHECK_DUMPS := $(B)/crosscheck_dump $(B)/crosscheck_dump_f64
TEST_OBJS := $(foreach t,$(patsubst tests/%.c,%,$(TEST_SRCS)),\
               $(if $(filter $(t),$(TESTS_F64)),$(B)/tests64/$(t).o,$(B)/tests/$(t).o))

.PHONY: all test clean deps test-deps crosscheck demo demo-image demo-check bench bench-mpi bench-gemm asan valgrind \
        valgrind-full ci-build ci-full mutate install uninstall
all: s2s

# Installs the Debian packages when something is missing: what building needs (deps),
# and on top of it what the tests need (test-deps).
deps:
	@{ pkg-config --exists $(PKGS) && test -f /usr/include/unistr.h; } >/dev/null 2>&1 || \
	    sh scripts/install-deps.sh build
test-deps: deps
	@{ pkg-config --exists check && command -v strace && command -v xmllint && command -v mpirun && \
	   command -v valgrind && command -v clang && test -x /usr/bin/chromium && \
	   /usr/bin/python3 -c 'import torch, yaml, sentencepiece, PIL'; } >/dev/null 2>&1 || sh scripts/install-deps.sh test

$(PROG): $(B)/obj/cli/main.o $(LIB_OBJS) $(F64_OBJS)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(B)/s2s-faults: $(FAULT_OBJS) $(F64_OBJS)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(B)/fault/%.o: src/%.c | deps
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -DS2S_FAULT_HOOKS $(PKG_CFLAGS) -c -o $@ $<

$(B)/obj/%.o: src/%.c | deps
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -c -o $@ $<

$(B)/obj/%.o: src/%.cc | deps
	@mkdir -p $(@D)
	$(CXX) $(CXXFLAGS) $(PKG_CFLAGS) -c -o $@ $<

$(B)/fault/%.o: src/%.cc | deps
	@mkdir -p $(@D)
	$(CXX) $(CXXFLAGS) $(PKG_CFLAGS) -c -o $@ $<

$(B)/f64/%.o: src/%.c | deps
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -DS2S_REAL_DOUBLE $(PKG_CFLAGS) -c -o $@ $<

$(B)/tests/%.o: tests/%.c | test-deps
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests $(PKG_CFLAGS) $(CHECK_CFLAGS) -c -o $@ $<

$(B)/tests64/%.o: tests/%.c | test-deps
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -DS2S_REAL_DOUBLE -Itests $(PKG_CFLAGS) $(CHECK_CFLAGS) -c -o $@ $<

$(B)/check_s2s: $(TEST_OBJS) $(LIB_OBJS) $(F64_OBJS)
	$(CC) $(CFLAGS) -o $@ $^ $(CHECK_LIBS) $(LDLIBS)

$(B)/crosscheck_dump: $(B)/tests/crosscheck_dump.o $(patsubst %,$(B)/obj/%.o,$(CORE) nn/small_gemm) $(F64_DEPS)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(B)/crosscheck_dump_f64: $(B)/tests64/crosscheck_dump.o $(F64_OBJS) $(F64_DEPS)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(B)/tests/crosscheck_dump.o: tests/crosscheck/crosscheck_dump.c | test-deps
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -c -o $@ $<

$(B)/tests64/crosscheck_dump.o: tests/crosscheck/crosscheck_dump.c | test-deps
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -DS2S_REAL_DOUBLE $(PKG_CFLAGS) -c -o $@ $<

# The whole suite, its checks side by side on every core (scripts/checks/run-checks.py;
# src/README.md, "Where each check runs"): the checks of the tree (nothing outside the
# repository named, the layering of src/, calls between its files one way, every file a
# comment or document names, every command line the documents show, sizes, every mutant
# of `make mutate` still applies), the unit tests (Check, one process per suite), the
# training-outcome tests again under one OpenBLAS core type per family of kernels the CPU
# runs (their kernels round differently), and the PyTorch cross-check. The binaries are
# built first, on every core too: JOBS= sets how many.
JOBS     ?= $(shell nproc)
TEST_BINS = $(PROG) $(B)/s2s-faults $(B)/check_s2s
RUN_CHECKS = /usr/bin/python3 scripts/checks/run-checks.py --jobs $(JOBS)

test: test-deps
	@$(MAKE) --no-print-directory -j$(JOBS) $(TEST_BINS) $(CROSSCHECK_DUMPS) build/blas_family
	$(RUN_CHECKS) --build $(B) --prog ./$(PROG) static unit outcomes crosscheck

# The C model against the same model in PyTorch (scripts/torch_reference.py), and that
# reference's own gradients against finite differences.
crosscheck: test-deps $(CROSSCHECK_DUMPS) $(PROG)
	$(RUN_CHECKS) --build $(B) --prog ./$(PROG) crosscheck

# What kernels OpenBLAS runs, told by the bits they compute (tests/blas/blas_family.c).
build/blas_family: tests/blas/blas_family.c | test-deps
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -o $@ $< $(PKG_LIBS)

# The unit suite built with AddressSanitizer and UndefinedBehaviorSanitizer (every report
# fatal, leaks included), in build/asan, its suites side by side; its code runs 2 to 3
# times slower, so each test case's timeout is 3 times its own. Only the unit suite:
# OpenBLAS is not instrumented (its core types add nothing here), and the checks of the
# tree and the cross-check's Python see no memory of ours.
SANITIZE := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
ASAN_B   := build/asan
asan: test-deps
	@$(MAKE) --no-print-directory -j$(JOBS) B=$(ASAN_B) PROG=$(ASAN_B)/s2s OPT="$(SANITIZE)" \
	    $(ASAN_B)/s2s $(ASAN_B)/s2s-faults $(ASAN_B)/check_s2s
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    CK_TIMEOUT_MULTIPLIER=3 $(RUN_CHECKS) --build $(ASAN_B) --prog ./$(ASAN_B)/s2s unit

# What ASan cannot see, under valgrind memcheck: reads of uninitialised memory in the
# optimised build. The tour (tests/cli/test_tour.c: every command once, every model
# variant through every command that runs a model, each run short) with every s2s it
# starts under valgrind (scripts/checks/under-valgrind.sh is the tests' S2S_BIN); the test
# binary itself runs at full speed. Each process logs to build/valgrind-logs/; any
# non-empty log fails the target and is shown (scripts/checks/valgrind-verdict.sh), also when a
# test failed because valgrind made its s2s exit 99.
VALGRIND_LOGS  = $(CURDIR)/build/valgrind-logs
VALGRIND_SUITES = tour_text tour_image tour_commands
valgrind: test-deps
	@$(MAKE) --no-print-directory -j$(JOBS) $(TEST_BINS)
	rm -rf $(VALGRIND_LOGS) && mkdir -p $(VALGRIND_LOGS)
	S2S_VALGRIND_PROG=$(CURDIR)/$(PROG) S2S_VALGRIND_LOGS=$(VALGRIND_LOGS) CK_TIMEOUT_MULTIPLIER=20 \
	    $(RUN_CHECKS) --build $(B) --prog scripts/checks/under-valgrind.sh --suites "$(VALGRIND_SUITES)" \
	    unit; tests=$$?; sh scripts/checks/valgrind-verdict.sh $(VALGRIND_LOGS) && exit $$tests

# The whole unit suite under valgrind, as CI ran it before issue 40 (make ci-full): the
# test binary too, following every s2s it starts, but the fault loops (tag `loop`:
# hundreds of runs), and the runs of minutes each under valgrind (tag `slow`: the length
# experiment's script, hard attention's exhaustive enumerations, the image model's longer
# runs, the shipped models' gradient checks, the mpi suite, which valgrind does not
# follow under mpirun), all of which test and asan cover.
VALGRIND := valgrind -q --trace-children=yes --trace-children-skip='/bin/*,/usr/bin/*' \
            --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
            --show-leak-kinds=definite --log-file=$(VALGRIND_LOGS)/%p.log
# valgrind hides AVX-512 from what it runs, so OpenBLAS and libxsmm pick AVX2 kernels
# under it; the processes a skipped /bin/sh starts run outside it, and a test that
# compares such a run with its resume under valgrind would compare two kernel families.
# Every process runs the kernels valgrind can run (on a CPU with AVX2).
VALGRIND_KERNELS := $(if $(shell grep -qw avx2 /proc/cpuinfo 2>/dev/null && echo y),\
                      OPENBLAS_CORETYPE=Haswell LIBXSMM_TARGET=hsw)
valgrind-full: test-deps
	@$(MAKE) --no-print-directory -j$(JOBS) $(TEST_BINS)
	rm -rf $(VALGRIND_LOGS) && mkdir -p $(VALGRIND_LOGS)
	$(VALGRIND_KERNELS) CK_TIMEOUT_MULTIPLIER=20 CK_EXCLUDE_TAGS="loop slow" $(RUN_CHECKS) --build $(B) \
	    --prog ./$(PROG) --wrap "$(VALGRIND)" unit; tests=$$?; \
	    sh scripts/checks/valgrind-verdict.sh $(VALGRIND_LOGS) && exit $$tests

# Everything CI's phases run, built at once on every core (.ci/run's `build` phase).
ci-build: test-deps
	@$(MAKE) --no-print-directory -j$(JOBS) $(TEST_BINS) $(CROSSCHECK_DUMPS) build/blas_family \
	    fuzz-build
	@$(MAKE) --no-print-directory -j$(JOBS) B=$(ASAN_B) PROG=$(ASAN_B)/s2s OPT="$(SANITIZE)" \
	    $(ASAN_B)/s2s $(ASAN_B)/s2s-faults $(ASAN_B)/check_s2s

# The whole matrix, for a release or a change to the kernels (src/README.md, "Where each
# check runs"; hours): make test, the training outcomes under every OpenBLAS core type
# the CPU runs, ASan, the whole suite under valgrind, every fuzzer for 10 minutes of a
# core with what it finds merged into the kept corpus (commit it), both demos against the
# README's numbers, then make mutate.
ci-full: test-deps
	$(MAKE) --no-print-directory test
	$(RUN_CHECKS) --build $(B) --prog ./$(PROG) --cores all --no-default outcomes
	$(MAKE) --no-print-directory asan
	$(MAKE) --no-print-directory valgrind-full
	$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=600 FUZZ_JOBS=$(JOBS)
	$(MAKE) --no-print-directory fuzz-merge
	$(MAKE) --no-print-directory demo-check
	$(MAKE) --no-print-directory mutate

# Training speed against the PyTorch baseline, side by side (README, issue 7).
bench: test-deps s2s
	/usr/bin/python3 scripts/bench/bench.py --s2s ./s2s

# Training on two processes (mpirun -np 2, one thread each) against one process of two
# threads, side by side, and the bytes a step moves across machines, on paper (README,
# "Training on several processes or machines").
bench-mpi: deps s2s
	/usr/bin/python3 scripts/bench/bench-mpi.py --s2s ./s2s

# The matrix products of a training step replayed on OpenBLAS, BLIS and libxsmm
# (scripts/bench/gemm-shapes/README.md); installs the two libraries if they are missing.
bench-gemm: deps s2s
	sh scripts/install-deps.sh gemm
	sh scripts/bench/gemm-shapes/run.sh

# Mutation testing (scripts/checks/mutate.py, scripts/checks/mutations.txt): puts each listed bug into
# src/ in turn, builds in build/mutate and runs the suite; prints the survivors. Not part
# of `make test` or CI (it takes a while: README).
mutate:
	/usr/bin/python3 scripts/checks/mutate.py

# Trains the toy-fr demo for about two minutes and shows the result (README).
demo: s2s
	sh scripts/demos/demo.sh

# Captioning: trains configs/shapes.yaml for five minutes (issue 45's budget) and draws
# where each word looked over the pictures (README).
demo-image: s2s
	sh scripts/demos/demo-image.sh

# Both demos, then whether they still give the numbers the README quotes for them
# (scripts/checks/check-demo-numbers.py; 5 minutes, in make ci-full).
demo-check: s2s
	sh scripts/demos/demo.sh
	/usr/bin/python3 scripts/checks/check-demo-numbers.py demo --strict
	sh scripts/demos/demo-image.sh
	/usr/bin/python3 scripts/checks/check-demo-numbers.py demo-image --strict

# make install [PREFIX=/usr/local] [DESTDIR=]: the program, its manual page, bash
# completion (where Debian's bash-completion looks), and the shipped configs and
# corpora as examples under share/s2s/. The installed configs name the installed corpora
# by their absolute paths, so that `s2s train PREFIX/share/s2s/configs/demo.yaml` runs
# from any directory (writing runs/ there); the corpora a user makes or fetches
# (shapes, Tatoeba) stay relative to the directory it runs in (a PREFIX holding `#`,
# `&` or `\` would need escaping for sed: not supported). make uninstall removes
# exactly these.
PREFIX  ?= /usr/local
BINDIR   = $(DESTDIR)$(PREFIX)/bin
MANDIR   = $(DESTDIR)$(PREFIX)/share/man/man1
DATADIR  = $(DESTDIR)$(PREFIX)/share/s2s
COMPDIR  = $(DESTDIR)$(PREFIX)/share/bash-completion/completions
# the corpora the repository ships: not those a script or a demo writes beside them
CORPORA := $(filter-out shapes shapes-% tatoeba-eng-fra toy-fr-long multi30k,$(patsubst corpora/%/,%,$(wildcard corpora/*/)))
install: $(PROG)
	install -d $(BINDIR) $(MANDIR) $(COMPDIR) $(DATADIR)/configs $(DATADIR)/corpora
	install -m 755 $(PROG) $(BINDIR)/s2s
	install -m 644 src/cli/s2s.1 $(MANDIR)/s2s.1
	install -m 644 src/cli/s2s.bash $(COMPDIR)/s2s
	install -m 644 configs/README.md $(DATADIR)/configs
	for f in configs/*.yaml; do \
	    sed $(foreach c,$(CORPORA),-e 's#\([: ]\)corpora/$(c)/#\1$(PREFIX)/share/s2s/corpora/$(c)/#g') \
	        $$f > $(DATADIR)/$$f && chmod 644 $(DATADIR)/$$f || exit 1; done
	install -m 644 corpora/README.md $(DATADIR)/corpora
	for c in $(CORPORA); do install -d $(DATADIR)/corpora/$$c && \
	    install -m 644 corpora/$$c/* $(DATADIR)/corpora/$$c || exit 1; done

uninstall:
	rm -f $(BINDIR)/s2s $(MANDIR)/s2s.1 $(COMPDIR)/s2s
	rm -rf $(DATADIR)

clean:
	rm -rf build s2s

include tests/fuzz/fuzz.mk

-include $(wildcard $(B)/*/*.d $(B)/*/*/*.d)
