# Makefile - builds pkc and runs its tests.
#
#   make                 build build/bin/pkc
#   make check           run the lit test suite (last line: "N passed, N failed")
#   make demo            compile add_vectors and softmax, run them (on the GPU if there is one)
#   make samples         build the sample programs build/samples/<name> (samples/<name>.c)
#   make SANITIZE=1 ...  the same with ASan+UBSan, in build/asan (kept apart)
#   make MOSAIC=0 ...    without the Mosaic TPU back end (no MLIR), in build/nomosaic
#   make LLVM_STATIC=0   link pkc with libLLVM.so, not LLVM's static libraries
#   make fuzz            libFuzzer on the front end, then on the whole pipeline, for
#                        $(FUZZ_SECONDS) s each (fuzz-smoke: 20 s each)
#   make bench           time pkc (compile time, front end) and the host add_vectors
#                        kernel against memcpy (bench/RESULTS.md)
#   make install         install pkc, libpkrt, pk_runtime.h, pkc.pc and the CMake
#                        package under $(PREFIX) (honours DESTDIR, INSTALL_NOBUILD=1)
#   make deps            install the build dependencies (.ci/install-deps)
#
# The compiler is one folder per component (compiler/README.md); a new .c
# file in a component folder is picked up automatically; header dependencies
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
# MLIR_LIBS links the MLIR back end, the Mosaic plugin (its sources include
# mlir-c/ headers), never pkc itself.
LLVM_CFLAGS = $(shell $(LLVM_CONFIG) --cflags 2>/dev/null)
LLVM_LIBDIR = $(shell $(LLVM_CONFIG) --libdir 2>/dev/null)
LLVM_LIBS = $(shell $(LLVM_CONFIG) --ldflags --libs) $(shell $(LLVM_CONFIG) --system-libs) \
            -Wl,-rpath,$(LLVM_LIBDIR)
# pkc itself links LLVM's static libraries where the install has them
# (Debian's llvm-22-dev does; LLVM_STATIC=0 links libLLVM.so instead): ld.so
# then relocates no libLLVM.so at start-up, ~9 ms of every pkc run.  Only
# the components pkc calls are linked; their symbols are not exported
# (--exclude-libs), so that the Mosaic plugin's libLLVM.so (through
# libMLIR) keeps its own.  libzstd may lack its unversioned dev link.
LLVM_COMPONENTS := nvptx x86 passes linker bitreader
LLVM_STATIC ?= $(if $(wildcard $(LLVM_LIBDIR)/libLLVMCore.a),1,0)
ZSTD_LIB = $(if $(filter /%,$(shell $(CC) -print-file-name=libzstd.so)),-lzstd,-l:libzstd.so.1)
LLVM_STATIC_LIBS = -L$(LLVM_LIBDIR) -Wl,--exclude-libs,ALL \
                   $(shell $(LLVM_CONFIG) --link-static --libs $(LLVM_COMPONENTS)) -lstdc++ -lz $(ZSTD_LIB)
MLIR_CAPI_LIBS = $(wildcard $(LLVM_LIBDIR)/libMLIRCAPI*.a)
# The C API archives (grouped: they refer to each other) before libMLIR,
# which they call into; both are C++ underneath.
MLIR_LIBS = -L$(LLVM_LIBDIR) -Wl,--start-group $(MLIR_CAPI_LIBS) -Wl,--end-group -lMLIR -lLLVM -lstdc++ \
            -Wl,-rpath,$(LLVM_LIBDIR)
USE_LLVM := $(if $(shell grep -rl 'include <llvm-c/' compiler 2>/dev/null),1)
# MOSAIC=0 builds pkc without the Mosaic TPU back end, so without MLIR (for
# users who target only CPUs and GPUs): no plugin, and --target=mosaic-tpu
# says that this pkc was built without it.
MOSAIC ?= 1
# The same for MLIR (the Mosaic TPU back end, codegen_mosaic.c, mosaic_*.c).
USE_MLIR := $(if $(filter 0,$(MOSAIC)),,$(if $(shell grep -rl 'include <mlir-c/' compiler 2>/dev/null),1))

# ---- flags --------------------------------------------------------------------

# SANITIZE=1 builds into its own directory so the two builds never mix.
ifeq ($(SANITIZE),1)
BUILD := build/asan
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
else
BUILD := build
SAN_FLAGS :=
endif
# So does MOSAIC=0 (a plugin left from a full build must not be found).
ifeq ($(MOSAIC),0)
BUILD := $(BUILD)/nomosaic
endif

GEN := build/gen
OBJDIR := $(BUILD)/obj
PKC := $(BUILD)/bin/pkc

CFLAGS ?= -O2 -g
WARN_FLAGS := -Wall -Wextra -Wno-unused-parameter -Werror=implicit-function-declaration
ALL_CFLAGS := -std=c11 $(CFLAGS) $(WARN_FLAGS) $(SAN_FLAGS)
# The components of the compiler, in pipeline order (compiler/README.md):
# each folder's headers are on the include path.
COMPONENTS := support front ir passes llvm host cuda tpu
ALL_CPPFLAGS := -D_DEFAULT_SOURCE -Icompiler $(addprefix -Icompiler/,$(COMPONENTS)) -Iruntime -I$(GEN) \
                $(CPPFLAGS)
ALL_LDFLAGS := $(SAN_FLAGS) $(LDFLAGS)
LDLIBS += -lm
# The host back end (codegen_llvm_host.c, llvm_*.c) uses the LLVM C API;
# every object gets its include path (the fuzzer links the same sources).
PKC_LDLIBS = -lm
ifeq ($(USE_LLVM),1)
ALL_CPPFLAGS += $(LLVM_CFLAGS)
LDLIBS += $(LLVM_LIBS)
PKC_LDLIBS = $(if $(filter 1,$(LLVM_STATIC)),$(LLVM_STATIC_LIBS),$(LLVM_LIBS)) -lm
endif
# Loading libMLIR would cost every pkc run ~13 ms.  pkc exports its symbols
# (-rdynamic) for the plugin, which calls back into the compiler.
ifeq ($(USE_MLIR),1)
ALL_CPPFLAGS += -I$(shell $(LLVM_CONFIG) --includedir 2>/dev/null)
endif
PKC_LDFLAGS := -rdynamic

# ---- sources ------------------------------------------------------------------

# One wildcard per component folder: a file's folder is its component.
SRCS := $(wildcard compiler/*.c $(COMPONENTS:%=compiler/%/*.c))
# The lexer and parser are generated (front/).
GEN_SRCS := $(GEN)/lexer.c $(GEN)/parser.c
GEN_HDRS := $(GEN)/parser.h
# The Mosaic TPU back end is a plugin, $(BUILD)/lib/pkc/libpkc_mosaic.so,
# that pkc dlopens for --target=mosaic-tpu only (main.c): its sources are
# compiled -fPIC into $(OBJDIR)/pic and linked with MLIR, not into pkc.
MOSAIC_SRCS := $(wildcard compiler/tpu/*.c)
MOSAIC_OBJS := $(MOSAIC_SRCS:compiler/%.c=$(OBJDIR)/pic/%.o)
MOSAIC_PLUGIN := $(if $(USE_MLIR),$(if $(MOSAIC_SRCS),$(BUILD)/lib/pkc/libpkc_mosaic.so))
OBJS := $(patsubst compiler/%.c,$(OBJDIR)/%.o,$(filter-out $(MOSAIC_SRCS),$(SRCS))) \
        $(GEN_SRCS:$(GEN)/%.c=$(OBJDIR)/gen/%.o)

# ---- build --------------------------------------------------------------------

.PHONY: all check demo fuzz fuzz-smoke bench clean install deps deps-check test-bins

# The runtime library (runtime/runtime.mk): libpkrt.a, libpkrt.so and its tests.
RT_CFLAGS := $(SAN_FLAGS)
include runtime/runtime.mk
RUNTIME_LIBS := $(BUILD)/lib/libpkrt.a $(BUILD)/lib/libpkrt.so

all: deps-check $(PKC) $(MOSAIC_PLUGIN) $(RUNTIME_LIBS)

$(PKC): $(OBJS)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) $(PKC_LDFLAGS) -o $@ $(OBJS) $(PKC_LDLIBS)

# No copies of pkc's objects: their symbols come from the executable.
$(MOSAIC_PLUGIN): $(MOSAIC_OBJS)
	@mkdir -p $(@D)
	$(CC) -shared $(ALL_LDFLAGS) -o $@ $(MOSAIC_OBJS) $(MLIR_LIBS)

$(OBJDIR)/pic/%.o: compiler/%.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -fPIC -MMD -MP -c -o $@ $<

$(OBJDIR)/%.o: compiler/%.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

$(OBJDIR)/gen/%.o: $(GEN)/%.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

# Every object may include the generated token header: make sure it exists
# before the first compile (-MMD tracks it precisely afterwards).
$(OBJS) $(MOSAIC_OBJS): | $(GEN_HDRS)

$(GEN)/lexer.c: compiler/front/lexer.re
	@mkdir -p $(@D)
	$(RE2C) -W --no-generation-date --no-version $(RE2CFLAGS) -o $@ $<

$(GEN)/parser.c $(GEN)/parser.h &: compiler/front/parser.y
	@mkdir -p $(@D)
	$(BISON) -Wall $(BISONFLAGS) --defines=$(GEN)/parser.h -o $(GEN)/parser.c $<

-include $(OBJS:.o=.d) $(MOSAIC_OBJS:.o=.d)

# ---- dependencies ---------------------------------------------------------------

# The flags above ask llvm-config while make reads this file, before any
# target runs: on a fresh machine that is before deps-check could install
# LLVM, and `make -j` would run bison beside the install.  So the install
# check is an included makefile: make remakes it first (running
# .ci/install-deps, alone), then reads this file again with the packages in
# place.  Once per build directory and install-deps version; deps-check
# still checks on every `make`.
DEPS_STAMP := $(BUILD)/deps.mk
ifeq ($(filter-out clean deps deps-check,$(or $(MAKECMDGOALS),all)),)
else
include $(DEPS_STAMP)
endif
$(DEPS_STAMP): .ci/install-deps
	@MOSAIC=$(MOSAIC) .ci/install-deps
	@mkdir -p $(@D)
	@echo '# .ci/install-deps found every build dependency (Makefile: DEPS_STAMP)' > $@

# Cheap when everything is installed (command -v / dpkg-query, no apt-get).
# MOSAIC=0 needs no MLIR packages.
deps-check:
	@MOSAIC=$(MOSAIC) .ci/install-deps

deps:
	MOSAIC=$(MOSAIC) .ci/install-deps

# ==== Python env for the Pallas fidelity tests (owner: test/pallas/) =========
# `make pyenv` makes build/pyenv, a virtualenv with jax and jaxlib 0.11.2 and
# numpy from PyPI (pinned in test/pallas/requirements.txt), where
# test/pallas/compare.py runs each sample's Pallas mirror (samples/pallas/) in
# interpret mode and compares it with pkc.  Only these tests need Python; pkc
# never does.  Made once (build/pyenv/.stamp), again when the requirements or
# test/pallas/mkpyenv.sh change; always build/pyenv, shared by SANITIZE=1
# builds.  Needs Python >= 3.12 (found on PATH or in pyenv, or given as
# PYENV_PYTHON=/path/to/python3.12) and PyPI; `make check` depends on it and
# fails if it cannot be made.
PYENV := build/pyenv
PYENV_STAMP := $(PYENV)/.stamp
.PHONY: pyenv
pyenv: $(PYENV_STAMP)
$(PYENV_STAMP): test/pallas/requirements.txt test/pallas/mkpyenv.sh
	@echo "pyenv: making $(PYENV) for the Pallas fidelity tests (jax from PyPI, about a minute)"
	@PYENV_PYTHON="$(PYENV_PYTHON)" test/pallas/mkpyenv.sh $(PYENV) test/pallas/requirements.txt

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

TEST_BINS := $(patsubst test/unit/%.c,$(UNIT_DIR)/%,$(wildcard test/unit/*.c)) $(RT_TEST_BINS)
test-bins: $(TEST_BINS)

check: deps-check pyenv
	@if $(MAKE) --no-print-directory $(PKC) $(MOSAIC_PLUGIN) $(RUNTIME_LIBS) test-bins; then \
		$(MAKE) --no-print-directory -k samples || echo "check: some samples did not build (their tests fail)"; \
		PKC_REQUIRE_PALLAS=1 $(PYTHON) test/run_lit.py --lit $(LIT) --pkc $(abspath $(PKC)) \
			--build-dir $(abspath $(BUILD)) -j $(LIT_JOBS) test; \
	else \
		echo "build of $(PKC) failed: no tests run"; \
		echo "0 passed, 1 failed"; \
		exit 1; \
	fi

# ==== samples and demo (sample programs; owner: samples/*.c) ==================
# build/samples/<name>.o and <name>.h come from pkc; build/samples/<name>
# links samples/<name>.c with that object, samples/common/sample_util.c and
# libpkrt.a (with the sanitizer flags under SANITIZE=1).  `make samples`
# builds every sample that has both a .pk and a .c; run one with --help.
SAMPLE_DIR := $(BUILD)/samples
SAMPLE_NAMES := $(sort $(notdir $(basename $(filter $(patsubst %.pk,%.c,$(wildcard samples/*.pk)),\
                  $(wildcard samples/*.c)))))
SAMPLE_BINS := $(SAMPLE_NAMES:%=$(SAMPLE_DIR)/%)
SAMPLE_UTIL_OBJ := $(SAMPLE_DIR)/common/sample_util.o
SAMPLE_CFLAGS := -std=c11 $(CFLAGS) $(WARN_FLAGS) $(SAN_FLAGS)
SAMPLE_CPPFLAGS := -I$(SAMPLE_DIR) -Iruntime -Isamples/common
SAMPLE_LIBS := $(BUILD)/lib/libpkrt.a -lm -pthread -ldl

.PHONY: samples
samples: deps-check $(SAMPLE_BINS)

# One pkc run writes the object, the header and the depfile (-MD: includes;
# -MP: a deleted include does not break make).  pkc rewrites the header only
# when its bytes change, so the header has a rule of its own with no recipe:
# make then goes by its real mtime (a C file that includes it is recompiled
# only when it changed), as ninja's restat does.  A missing header is made
# again.
$(SAMPLE_DIR)/%.o: samples/%.pk $(PKC)
	@mkdir -p $(@D)
	$(PKC) -MD -MP $< -o $@

$(SAMPLE_DIR)/%.h: $(SAMPLE_DIR)/%.o
	@test -f $@ || $(PKC) samples/$*.pk -o $< -H $@

$(SAMPLE_UTIL_OBJ): samples/common/sample_util.c samples/common/sample_util.h runtime/pk_runtime.h
	@mkdir -p $(@D)
	$(CC) $(SAMPLE_CPPFLAGS) $(SAMPLE_CFLAGS) -c -o $@ $<

$(SAMPLE_BINS): $(SAMPLE_DIR)/%: samples/%.c $(SAMPLE_DIR)/%.o $(SAMPLE_DIR)/%.h $(SAMPLE_UTIL_OBJ) \
                $(BUILD)/lib/libpkrt.a samples/common/sample_util.h runtime/pk_runtime.h
	$(CC) $(SAMPLE_CPPFLAGS) $(SAMPLE_CFLAGS) -o $@ $< $(SAMPLE_DIR)/$*.o $(SAMPLE_UTIL_OBJ) \
		$(SAMPLE_LIBS)

-include $(SAMPLE_NAMES:%=$(SAMPLE_DIR)/%.d)

# make demo: compile add_vectors and softmax with pkc, link them with
# libpkrt and run them, showing every command, the sizes, the launch time
# and the error against the C reference.  Always recompiles (into
# $(BUILD)/demo), so the pkc commands are shown every time.
DEMO_DIR := $(BUILD)/demo
DEMO_SAMPLES := add_vectors softmax

demo: all
	@set -e; mkdir -p $(DEMO_DIR); \
	echo "== pkc demo: compile .pk kernels ahead of time, link them, run them =="; \
	targets=host; device=host; \
	if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then \
		cc=$$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d ' .'); \
		sm=sm_$$cc; [ "$$cc" = 90 ] && sm=sm_90a; \
		echo "GPU present: $$(nvidia-smi -L | head -n 1): compiling for host and $$sm, running on the GPU"; \
		targets=host,$$sm; device=cuda; \
	else \
		echo "no GPU here: compiling for the host and running there"; \
	fi; \
	run() { echo "\$$ $$*"; "$$@"; }; \
	run $(CC) -Iruntime -Isamples/common $(SAMPLE_CFLAGS) -c samples/common/sample_util.c -o $(DEMO_DIR)/sample_util.o; \
	for s in $(DEMO_SAMPLES); do \
		echo; echo "== $$s =="; \
		run $(PKC) --target=$$targets samples/$$s.pk -o $(DEMO_DIR)/$$s.o; \
		echo "   (pkc wrote the object $(DEMO_DIR)/$$s.o for $$targets and the header $(DEMO_DIR)/$$s.h)"; \
		grep '^pk_status' $(DEMO_DIR)/$$s.h | sed 's/^/   /'; \
		run $(CC) -I$(DEMO_DIR) -Iruntime -Isamples/common $(SAMPLE_CFLAGS) samples/$$s.c \
			$(DEMO_DIR)/$$s.o $(DEMO_DIR)/sample_util.o $(SAMPLE_LIBS) -o $(DEMO_DIR)/$$s; \
		run env PK_DEVICE=$$device $(DEMO_DIR)/$$s -v; \
	done; \
	echo; echo "== done: add_vectors and softmax ran on the $$device and matched the C reference =="

# ---- fuzzing ------------------------------------------------------------------

# Two libFuzzer targets (test/fuzz/README.md), each run for $(FUZZ_SECONDS) s:
#   fuzz_frontend  lexer, parser, sema and the verifier on arbitrary bytes
#   fuzz_pipeline  the whole pipeline (host, NVPTX without ptxas, Mosaic) on
#                  mutants of valid kernels (a token-level custom mutator)
FUZZ_SECONDS ?= 600
FUZZ_DIR := build/fuzz
FUZZ_BIN := $(FUZZ_DIR)/fuzz_frontend
FUZZ_PIPE_BIN := $(FUZZ_DIR)/fuzz_pipeline
# The front-end fuzzer links the components up to the IR, no back end.
FUZZ_SRCS := $(wildcard $(addsuffix /*.c,$(addprefix compiler/,support front ir))) $(GEN_SRCS) \
             test/fuzz/fuzz_frontend.c
# The pipeline fuzzer links every component but the driver, the Mosaic
# sources included (with MLIR, which brings libLLVM too), not as a plugin.
FUZZ_PIPE_SRCS := $(filter-out compiler/main.c,$(SRCS)) $(GEN_SRCS) test/fuzz/fuzz_pipeline.c \
                  test/fuzz/pk_mutator.c
FUZZ_FLAGS := -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
              -fno-omit-frame-pointer $(WARN_FLAGS)
FUZZ_DEPS := $(wildcard compiler/*/*.h compiler/*/*.def) $(GEN_HDRS)
# Bounded work per input: -timeout (a hang), -rss_limit_mb, -max_len.
FUZZ_OPTS := -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 -dict=test/fuzz/pk.dict

$(FUZZ_BIN): $(FUZZ_SRCS) $(FUZZ_DEPS)
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_FLAGS) $(ALL_CPPFLAGS) -o $@ $(FUZZ_SRCS) $(LDLIBS)

$(FUZZ_PIPE_BIN): $(FUZZ_PIPE_SRCS) $(FUZZ_DEPS)
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_FLAGS) $(ALL_CPPFLAGS) -o $@ \
		$(FUZZ_PIPE_SRCS) $(LDLIBS) $(MLIR_LIBS)

# New inputs go to $(FUZZ_CORPUS) and $(FUZZ_CORPUS)-pipeline (the first
# directory); the checked-in seeds, the samples and the regression inputs are
# read-only.  The pipeline target starts from every valid kernel of samples/
# and test/ (test/fuzz/seeds.sh collects them into build/fuzz/seeds).
FUZZ_CORPUS ?= $(FUZZ_DIR)/corpus
fuzz: deps-check $(FUZZ_BIN) $(FUZZ_PIPE_BIN) $(PKC)
	@mkdir -p $(FUZZ_CORPUS) $(FUZZ_CORPUS)-pipeline $(FUZZ_DIR)/artifacts
	$(FUZZ_BIN) $(FUZZ_OPTS) -artifact_prefix=$(FUZZ_DIR)/artifacts/frontend- \
		$(FUZZ_CORPUS) test/fuzz/corpus samples
	test/fuzz/seeds.sh $(PKC) $(FUZZ_DIR)/seeds
	$(FUZZ_PIPE_BIN) $(FUZZ_OPTS) -max_len=16384 -artifact_prefix=$(FUZZ_DIR)/artifacts/pipeline- \
		$(FUZZ_CORPUS)-pipeline $(FUZZ_DIR)/seeds test/fuzz/regress

# Short: 20 s each, from the seeds only (libFuzzer first runs every input of
# the corpus, which takes minutes for a grown one).
fuzz-smoke:
	rm -rf $(FUZZ_DIR)/smoke
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=20 FUZZ_CORPUS=$(FUZZ_DIR)/smoke/corpus

# ---- benchmark ----------------------------------------------------------------

# Benchmarks, not tests (results: bench/RESULTS.md): pkc's compile time
# (bench/compile_time.sh, which runs bench/frontend.sh too) and the host
# add_vectors kernel's bandwidth against memcpy (bench/host.sh).
bench: all
	bench/compile_time.sh $(PKC)
	BENCH_CFLAGS='$(SAN_FLAGS)' bench/host.sh $(BUILD)

# ---- install and clean ----------------------------------------------------------

# Installs the compiler, the runtime, its header, and pkg-config and CMake
# package files made from runtime/packaging/*.in (for PREFIX; DESTDIR only
# stages).  INSTALL_NOBUILD=1 installs what $(BUILD) already holds without
# building first (test/install does, so it never rebuilds the binaries under
# test).  A SANITIZE=1 installation tells its users to link with -fsanitize.
# libpkrt.so is installed as its versioned file with the links
# runtime/runtime.mk makes; PKC_VERSION comes from there too.  A MOSAIC=0
# installation removes the plugin an earlier one may have left.
INSTALL_ROOT = $(DESTDIR)$(PREFIX)
PACKAGING_SUBST = sed -e 's|@PREFIX@|$(abspath $(PREFIX))|g' -e 's|@VERSION@|$(PKC_VERSION)|g' \
                      -e 's|@SOVERSION@|$(RT_SOVERSION)|g' \
                      -e 's|@EXTRA_LIBS@|$(addprefix $(PACKAGING_SPACE),$(filter -fsanitize=%,$(SAN_FLAGS)))|g'
PACKAGING_SPACE := $(subst ,, )
install: $(if $(filter 1,$(INSTALL_NOBUILD)),,all)
	install -d $(INSTALL_ROOT)/bin $(INSTALL_ROOT)/lib/pkgconfig $(INSTALL_ROOT)/lib/cmake/pkc $(INSTALL_ROOT)/include
	install -m 755 $(PKC) $(INSTALL_ROOT)/bin/pkc
	install -m 644 $(BUILD)/lib/libpkrt.a $(INSTALL_ROOT)/lib/libpkrt.a
	install -m 755 $(BUILD)/lib/$(RT_LIB_SO_FILE) $(INSTALL_ROOT)/lib/$(RT_LIB_SO_FILE)
	ln -sfn $(RT_LIB_SO_FILE) $(INSTALL_ROOT)/lib/$(RT_SONAME)
	ln -sfn $(RT_SONAME) $(INSTALL_ROOT)/lib/libpkrt.so
	install -m 644 runtime/pk_runtime.h $(INSTALL_ROOT)/include/pk_runtime.h
	$(if $(MOSAIC_PLUGIN),install -d $(INSTALL_ROOT)/lib/pkc)
	$(if $(MOSAIC_PLUGIN),install -m 755 $(MOSAIC_PLUGIN) $(INSTALL_ROOT)/lib/pkc/libpkc_mosaic.so)
	$(if $(MOSAIC_PLUGIN),,rm -f $(INSTALL_ROOT)/lib/pkc/libpkc_mosaic.so)
	@set -e; for f in pkgconfig/pkc.pc cmake/pkc/pkcConfig.cmake cmake/pkc/pkcConfigVersion.cmake; do \
		echo "generate $(INSTALL_ROOT)/lib/$$f"; \
		$(PACKAGING_SUBST) runtime/packaging/$${f##*/}.in >$(INSTALL_ROOT)/lib/$$f; \
		chmod 644 $(INSTALL_ROOT)/lib/$$f; \
	done

clean:
	rm -rf build
