# Makefile - builds pkc and runs its tests.
#
#   make                 build build/bin/pkc
#   make check           run the lit test suite (last line: "N passed, N failed")
#   make demo            compile the samples and show what happened
#   make SANITIZE=1 ...  the same with ASan+UBSan, in build/asan (kept apart)
#   make fuzz            libFuzzer on the front end for $(FUZZ_SECONDS) s (fuzz-smoke: 20 s)
#   make bench           time the front end on a generated 10,000-line file
#   make install         install bin/pkc under $(PREFIX) (honours DESTDIR)
#   make deps            install the build dependencies (.ci/install-deps)
#
# New compiler/*.c files are picked up automatically; header dependencies
# are tracked with -MMD.

.DEFAULT_GOAL := all
SHELL := /bin/bash

# ---- tools ------------------------------------------------------------------

LLVM_BIN := /usr/lib/llvm-22/bin
# llvm-config-22 if it is on PATH, else the one in the LLVM prefix.
LLVM_CONFIG ?= $(shell command -v llvm-config-22 2>/dev/null || echo $(LLVM_BIN)/llvm-config)
RE2C ?= re2c
BISON ?= bison
PYTHON ?= python3
LIT ?= $(LLVM_BIN)/lit
CLANG ?= $(LLVM_BIN)/clang
PREFIX ?= /usr/local

# LLVM and MLIR, for the code generators.  These are recursive variables,
# so llvm-config only runs when they are used.  LLVM is compiled and linked
# in as soon as a compiler source includes an llvm-c/ header (USE_LLVM);
# MLIR_LIBS is ready for the MLIR back end: add it to LDLIBS when code
# includes mlir-c/ headers.
LLVM_CFLAGS = $(shell $(LLVM_CONFIG) --cflags)
LLVM_LIBDIR = $(shell $(LLVM_CONFIG) --libdir)
LLVM_LIBS = $(shell $(LLVM_CONFIG) --ldflags --libs) $(shell $(LLVM_CONFIG) --system-libs) \
            -Wl,-rpath,$(LLVM_LIBDIR)
MLIR_CAPI_LIBS = $(wildcard $(LLVM_LIBDIR)/libMLIRCAPI*.a)
MLIR_LIBS = -L$(LLVM_LIBDIR) $(MLIR_CAPI_LIBS) -lMLIR -Wl,-rpath,$(LLVM_LIBDIR)
USE_LLVM := $(if $(shell grep -l 'include <llvm-c/' compiler/*.c compiler/*.h 2>/dev/null),1)

# ---- flags --------------------------------------------------------------------

# SANITIZE=1 builds into its own directory so the two builds never mix.
ifeq ($(SANITIZE),1)
BUILD := build/asan
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
else
BUILD := build
SAN_FLAGS :=
endif

GEN := build/gen
OBJDIR := $(BUILD)/obj
PKC := $(BUILD)/bin/pkc

CFLAGS ?= -O2 -g
WARN_FLAGS := -Wall -Wextra -Wno-unused-parameter -Werror=implicit-function-declaration
ALL_CFLAGS := -std=c11 $(CFLAGS) $(WARN_FLAGS) $(SAN_FLAGS)
ALL_CPPFLAGS := -D_DEFAULT_SOURCE -Icompiler -I$(GEN) $(CPPFLAGS)
ALL_LDFLAGS := $(SAN_FLAGS) $(LDFLAGS)
LDLIBS += -lm
# The host back end (codegen_llvm_host.c, llvm_*.c) uses the LLVM C API;
# every object gets its include path (the fuzzer links the same sources).
ifeq ($(USE_LLVM),1)
ALL_CPPFLAGS += $(LLVM_CFLAGS)
LDLIBS += $(LLVM_LIBS)
endif

# ---- sources ------------------------------------------------------------------

SRCS := $(wildcard compiler/*.c)
# The lexer and parser are generated; each only once its source exists.
GEN_SRCS := $(if $(wildcard compiler/lexer.re),$(GEN)/lexer.c) \
            $(if $(wildcard compiler/parser.y),$(GEN)/parser.c)
GEN_HDRS := $(if $(wildcard compiler/parser.y),$(GEN)/parser.h)
OBJS := $(SRCS:compiler/%.c=$(OBJDIR)/%.o) $(GEN_SRCS:$(GEN)/%.c=$(OBJDIR)/gen/%.o)

# ---- build --------------------------------------------------------------------

.PHONY: all check demo fuzz fuzz-smoke bench clean install deps deps-check test-bins

# The runtime library (runtime/runtime.mk): libpkrt.a, libpkrt.so and its tests.
RT_CFLAGS := $(SAN_FLAGS)
include runtime/runtime.mk
RUNTIME_LIBS := $(BUILD)/lib/libpkrt.a $(BUILD)/lib/libpkrt.so

all: deps-check $(PKC) $(RUNTIME_LIBS)

$(PKC): $(OBJS)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $(OBJS) $(LDLIBS)

$(OBJDIR)/%.o: compiler/%.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

$(OBJDIR)/gen/%.o: $(GEN)/%.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

# Every object may include the generated token header: make sure it exists
# before the first compile (-MMD tracks it precisely afterwards).
$(OBJS): | $(GEN_HDRS)

$(GEN)/lexer.c: compiler/lexer.re
	@mkdir -p $(@D)
	$(RE2C) -W --no-generation-date --no-version $(RE2CFLAGS) -o $@ $<

$(GEN)/parser.c $(GEN)/parser.h &: compiler/parser.y
	@mkdir -p $(@D)
	$(BISON) -Wall $(BISONFLAGS) --defines=$(GEN)/parser.h -o $(GEN)/parser.c $<

-include $(OBJS:.o=.d)

# ---- dependencies ---------------------------------------------------------------

# Cheap when everything is installed (command -v / dpkg-query, no apt-get).
deps-check:
	@.ci/install-deps

deps:
	.ci/install-deps

# ---- tests ------------------------------------------------------------------

LIT_JOBS ?= 2
# Always ends with the line "N passed, N failed"; fails if any test failed.
# A failed build is reported as such (the suite is not run on a stale binary).
# Unit-test programs that lit tests (test/unit/*.test, test/runtime/*.test) run.
UNIT_DIR := $(BUILD)/test/unit
UNIT_OBJS := $(filter-out $(OBJDIR)/main.o,$(OBJS))
$(UNIT_DIR)/%: test/unit/%.c $(UNIT_OBJS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -o $@ $< $(UNIT_OBJS) $(ALL_LDFLAGS) $(LDLIBS)

TEST_BINS := $(patsubst test/unit/%.c,$(UNIT_DIR)/%,$(wildcard test/unit/*.c)) \
             $(RT_TEST_DIR)/rt_test $(RT_TEST_DIR)/rt_test_shared $(RT_TEST_DIR)/header_cxx \
             $(RT_TEST_DIR)/header_c99.o
test-bins: $(TEST_BINS)

check: deps-check
	@if $(MAKE) --no-print-directory $(PKC) $(RUNTIME_LIBS) test-bins; then \
		$(PYTHON) test/run_lit.py --lit $(LIT) --pkc $(abspath $(PKC)) \
			--build-dir $(abspath $(BUILD)) -j $(LIT_JOBS) test; \
	else \
		echo "build of $(PKC) failed: no tests run"; \
		echo "0 passed, 1 failed"; \
		exit 1; \
	fi

demo: all
	@echo "== pkc: compiling the samples to the IR =="
	@mkdir -p $(BUILD)/demo
	@for s in add_vectors softmax; do \
		echo "\$$ $(PKC) --emit=ir samples/$$s.pk -o $(BUILD)/demo/$$s.ir"; \
		$(PKC) --emit=ir samples/$$s.pk -o $(BUILD)/demo/$$s.ir || exit 1; \
		cat $(BUILD)/demo/$$s.ir; echo; \
	done
	@echo "== done: the IR of each sample is in $(BUILD)/demo/ (running kernels comes with the code generators) =="

# ---- fuzzing ------------------------------------------------------------------

FUZZ_SECONDS ?= 600
FUZZ_DIR := build/fuzz
FUZZ_BIN := $(FUZZ_DIR)/fuzz_frontend
FUZZ_SRCS := $(filter-out compiler/main.c $(LLVM_SRCS),$(SRCS)) $(GEN_SRCS) test/fuzz/fuzz_frontend.c
FUZZ_FLAGS := -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
              -fno-omit-frame-pointer $(WARN_FLAGS)

$(FUZZ_BIN): $(FUZZ_SRCS) $(wildcard compiler/*.h compiler/*.def) $(GEN_HDRS)
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_FLAGS) $(ALL_CPPFLAGS) -o $@ $(FUZZ_SRCS) $(LDLIBS)

# New inputs go to build/fuzz/corpus (the first directory); the checked-in
# seeds and the samples are read-only inputs.
fuzz: deps-check $(FUZZ_BIN)
	@mkdir -p $(FUZZ_DIR)/corpus $(FUZZ_DIR)/artifacts
	$(FUZZ_BIN) -max_total_time=$(FUZZ_SECONDS) -dict=test/fuzz/pk.dict \
		-artifact_prefix=$(FUZZ_DIR)/artifacts/ $(FUZZ_DIR)/corpus test/fuzz/corpus samples

fuzz-smoke:
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=20

# ---- benchmark ----------------------------------------------------------------

bench: all
	bench/frontend.sh $(PKC)

# ---- install and clean ----------------------------------------------------------

# Installs the compiler; the runtime and headers join it when they exist.
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include
	install -m 755 $(PKC) $(DESTDIR)$(PREFIX)/bin/pkc
	install -m 644 $(BUILD)/lib/libpkrt.a $(DESTDIR)$(PREFIX)/lib/libpkrt.a
	install -m 755 $(BUILD)/lib/libpkrt.so $(DESTDIR)$(PREFIX)/lib/libpkrt.so
	install -m 644 runtime/pk_runtime.h $(DESTDIR)$(PREFIX)/include/pk_runtime.h

clean:
	rm -rf build
