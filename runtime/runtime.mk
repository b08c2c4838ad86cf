# runtime/runtime.mk - builds libpkrt (runtime/) and its tests (test/runtime/).
#
# Include it from the top-level Makefile (paths are relative to the
# repository root), or use it alone:  make -f runtime/runtime.mk [target]
#
# Targets:
#   $(BUILD)/lib/libpkrt.a, $(BUILD)/lib/libpkrt.so   the libraries (the .so is
#               libpkrt.so.$(PKC_VERSION), soname libpkrt.so.$(RT_SOVERSION),
#               with the links libpkrt.so.$(RT_SOVERSION) and libpkrt.so)
#   runtime              both libraries
#   check-runtime        builds and runs test/runtime (rt_test with the default
#                        pool, PK_NUM_THREADS=1 and =4, the shared-library
#                        build, the C99/C++17 header checks, the CUDA kind
#                        without a driver and against the fake driver)
#   check-runtime-asan   check-runtime under ASan+UBSan, in $(BUILD)/rt-asan
#   check-runtime-tsan   check-runtime under TSan (clang), in $(BUILD)/rt-tsan
#   check-runtime-warnings  compiles the sources with gcc and clang, -Werror
#   clean-runtime
#
# Variables (override on the command line or before the include):
#   BUILD       output root (default: build)
#   RT_OPT      optimisation and debug flags (default: -O2 -g)
#   RT_CFLAGS   extra flags for compiling *and* linking, e.g. for a sanitized
#               build: make BUILD=build/asan RT_CFLAGS='-fsanitize=address,undefined'
#   RT_LDFLAGS  extra link flags
#   CC, CXX, AR the tools

# Alone (this is the only makefile read so far) the default goal is
# `runtime`; included, the including makefile's default goal is kept.
RT_STANDALONE := $(if $(filter 1,$(words $(MAKEFILE_LIST))),1,)
RT_SAVED_GOAL := $(.DEFAULT_GOAL)

BUILD ?= build
RT_OPT ?= -O2 -g
RT_CFLAGS ?=
RT_LDFLAGS ?=

RT_SRCS := runtime/error.c runtime/device.c runtime/host.c runtime/pool.c runtime/cuda.c runtime/debug.c
RT_OBJS := $(RT_SRCS:runtime/%.c=$(BUILD)/obj/runtime/%.o)
RT_LIB_A := $(BUILD)/lib/libpkrt.a
RT_LIB_SO := $(BUILD)/lib/libpkrt.so
# The shared library is versioned as shared libraries are: the file is
# named after pkc's version, programs record its soname, which changes only
# when the runtime's ABI does (bump RT_SOVERSION then); -lpkrt finds the
# libpkrt.so link.
ifndef PKC_VERSION
PKC_VERSION := $(shell sed -n 's/^.define PKC_VERSION "\(.*\)"$$/\1/p' compiler/support/pkc.h)
endif
RT_SOVERSION := 0
RT_SONAME := libpkrt.so.$(RT_SOVERSION)
RT_LIB_SO_FILE := libpkrt.so.$(PKC_VERSION)
RT_WARN := -std=c11 -Wall -Wextra -pedantic
# -fvisibility=hidden: only functions marked PK_API (the pk_* API) are
# exported from the .so; runtime/libpkrt.map hides everything else too.
RT_ALL_CFLAGS = $(RT_WARN) $(RT_OPT) -fPIC -pthread -fvisibility=hidden -MMD -MP $(RT_CFLAGS)

.PHONY: runtime check-runtime check-runtime-asan check-runtime-tsan check-runtime-warnings clean-runtime

runtime: $(RT_LIB_A) $(RT_LIB_SO)

# A static pattern rule, so a generic $(BUILD)/obj/%.o rule elsewhere cannot
# take these objects over.
$(RT_OBJS): $(BUILD)/obj/runtime/%.o: runtime/%.c
	@mkdir -p $(@D)
	$(CC) $(RT_ALL_CFLAGS) -c $< -o $@

$(RT_LIB_A): $(RT_OBJS)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $(RT_OBJS)

# -z nodelete: the pool's worker threads run code from the library until the
# process exits, so dlclose must never unmap it.  -ldl: cuda.c dlopens the
# CUDA driver (part of libc from glibc 2.34; an empty stub there).  Programs
# linking libpkrt.a on an older glibc need -ldl too.
$(BUILD)/lib/$(RT_LIB_SO_FILE): $(RT_OBJS) runtime/libpkrt.map
	@mkdir -p $(@D)
	$(CC) -shared -pthread $(RT_OPT) $(RT_CFLAGS) -Wl,-soname,$(RT_SONAME) \
		-Wl,--version-script=runtime/libpkrt.map -Wl,-z,nodelete \
		-o $@ $(RT_OBJS) $(RT_LDFLAGS) -ldl

# The links (make sees the file's mtime through them).
$(RT_LIB_SO): $(BUILD)/lib/$(RT_LIB_SO_FILE)
	ln -sfn $(RT_LIB_SO_FILE) $(@D)/$(RT_SONAME)
	ln -sfn $(RT_SONAME) $@

-include $(RT_OBJS:.o=.d)

# ---- tests ----------------------------------------------------------------

RT_TEST_DIR := $(BUILD)/test/runtime

$(RT_TEST_DIR)/rt_test: test/runtime/rt_test.c test/runtime/rt_check.h runtime/pk_runtime.h $(RT_LIB_A)
	@mkdir -p $(@D)
	$(CC) $(RT_WARN) $(RT_OPT) -pthread -Iruntime $(RT_CFLAGS) $< $(RT_LIB_A) -o $@ $(RT_LDFLAGS)

# The same test against the shared library: checks the exported symbol set.
$(RT_TEST_DIR)/rt_test_shared: test/runtime/rt_test.c test/runtime/rt_check.h runtime/pk_runtime.h $(RT_LIB_SO)
	@mkdir -p $(@D)
	$(CC) $(RT_WARN) $(RT_OPT) -pthread -Iruntime $(RT_CFLAGS) $< -L$(BUILD)/lib -lpkrt \
		-Wl,-rpath,$(abspath $(BUILD)/lib) -o $@ $(RT_LDFLAGS)

# The header must be valid C++17 (and link: extern "C").
$(RT_TEST_DIR)/header_cxx: test/runtime/header_cxx.cpp runtime/pk_runtime.h $(RT_LIB_A)
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -Wall -Wextra -Werror -pthread -Iruntime $(RT_CFLAGS) $< $(RT_LIB_A) -o $@ $(RT_LDFLAGS)

# ...and valid, warning-free C99.
$(RT_TEST_DIR)/header_c99.o: test/runtime/header_c99.c runtime/pk_runtime.h
	@mkdir -p $(@D)
	$(CC) -std=c99 -Wall -Wextra -Werror -pedantic -Iruntime -c $< -o $@

# The CUDA kind without a driver (cuda_nodev_test) and against the fake
# driver (cuda_fake_test with $(RT_FAKE_CUDA) on LD_LIBRARY_PATH).  The fake
# is never sanitized: it stands in for the real, uninstrumented driver.
RT_FAKE_CUDA_DIR := $(RT_TEST_DIR)/fakecuda
RT_FAKE_CUDA := $(RT_FAKE_CUDA_DIR)/libcuda.so.1
RT_CUDA_TEST_H := test/runtime/rt_check.h test/runtime/fake_cuda.h runtime/pk_runtime.h

$(RT_TEST_DIR)/cuda_nodev_test: test/runtime/cuda_nodev_test.c $(RT_CUDA_TEST_H) $(RT_LIB_A)
	@mkdir -p $(@D)
	$(CC) $(RT_WARN) $(RT_OPT) -pthread -Iruntime $(RT_CFLAGS) $< $(RT_LIB_A) -o $@ $(RT_LDFLAGS) -ldl

$(RT_TEST_DIR)/cuda_fake_test: test/runtime/cuda_fake_test.c $(RT_CUDA_TEST_H) $(RT_LIB_A)
	@mkdir -p $(@D)
	$(CC) $(RT_WARN) $(RT_OPT) -pthread -Iruntime $(RT_CFLAGS) $< $(RT_LIB_A) -o $@ $(RT_LDFLAGS) -ldl

$(RT_FAKE_CUDA): test/runtime/fake_cuda.c test/runtime/fake_cuda.h runtime/cuda_driver.h test/gpu-emu/emu_cta.h
	@mkdir -p $(@D)
	$(CC) $(RT_WARN) -O1 -g -fPIC -shared -pthread -fvisibility=hidden -Wl,-soname,libcuda.so.1 $< -o $@

# runtime/cuda_driver.h against the toolkit's <cuda.h>, when there is one
# (compile-only; skipped on machines without the CUDA toolkit).
RT_CUDA_INCLUDE ?= /usr/local/cuda/include
RT_CUDA_ABI_CHECK := $(if $(wildcard $(RT_CUDA_INCLUDE)/cuda.h),$(RT_TEST_DIR)/cuda_abi_check.o)
$(RT_TEST_DIR)/cuda_abi_check.o: test/runtime/cuda_abi_check.c runtime/cuda_driver.h
	@mkdir -p $(@D)
	$(CC) -std=c11 -Wall -Wextra -Werror -I$(RT_CUDA_INCLUDE) -c $< -o $@

# Everything the lit tests in test/runtime run (the top-level Makefile
# builds these before `make check`).
RT_TEST_BINS := $(RT_TEST_DIR)/rt_test $(RT_TEST_DIR)/rt_test_shared $(RT_TEST_DIR)/header_cxx \
                $(RT_TEST_DIR)/header_c99.o $(RT_TEST_DIR)/cuda_nodev_test $(RT_TEST_DIR)/cuda_fake_test \
                $(RT_FAKE_CUDA) $(RT_CUDA_ABI_CHECK)

RT_FAKE_ENV := LD_LIBRARY_PATH=$(abspath $(RT_FAKE_CUDA_DIR)) FAKE_CUDA_CC=90,86,103 FAKE_CUDA_MEM_LIMIT=1048576

check-runtime: $(RT_TEST_BINS)
	$(RT_TEST_DIR)/rt_test
	PK_NUM_THREADS=1 $(RT_TEST_DIR)/rt_test
	PK_NUM_THREADS=4 $(RT_TEST_DIR)/rt_test
	$(RT_TEST_DIR)/rt_test_shared
	$(RT_TEST_DIR)/header_cxx
	PK_CUDA_DRIVER=/nonexistent/libcuda.so.1 $(RT_TEST_DIR)/cuda_nodev_test none
	$(RT_TEST_DIR)/cuda_nodev_test
	LD_LIBRARY_PATH=$(abspath $(RT_FAKE_CUDA_DIR)) FAKE_CUDA_CC= $(RT_TEST_DIR)/cuda_nodev_test none
	$(RT_FAKE_ENV) $(RT_TEST_DIR)/cuda_fake_test

RT_ASAN_CFLAGS ?= -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
RT_TSAN_CC ?= $(firstword $(wildcard /usr/lib/llvm-22/bin/clang) clang)
RT_TSAN_CXX ?= $(firstword $(wildcard /usr/lib/llvm-22/bin/clang++) clang++)

check-runtime-asan:
	$(MAKE) -f runtime/runtime.mk BUILD=$(BUILD)/rt-asan RT_OPT='-O1 -g' RT_CFLAGS='$(RT_ASAN_CFLAGS)' check-runtime

check-runtime-tsan:
	$(MAKE) -f runtime/runtime.mk BUILD=$(BUILD)/rt-tsan CC='$(RT_TSAN_CC)' CXX='$(RT_TSAN_CXX)' \
		RT_OPT='-O1 -g' RT_CFLAGS='-fsanitize=thread' check-runtime

check-runtime-warnings:
	for cc in gcc clang; do for f in $(RT_SRCS) test/runtime/fake_cuda.c; do \
		$$cc $(RT_WARN) -Werror -O2 -fPIC -pthread -c $$f -o /dev/null || exit 1; done; \
		for f in test/runtime/cuda_nodev_test.c test/runtime/cuda_fake_test.c; do \
		$$cc $(RT_WARN) -Werror -O2 -pthread -Iruntime -c $$f -o /dev/null || exit 1; done; done

clean-runtime:
	rm -rf $(BUILD)/obj/runtime $(RT_LIB_A) $(RT_LIB_SO) $(RT_LIB_SO).* $(RT_TEST_DIR) $(BUILD)/rt-asan $(BUILD)/rt-tsan

ifeq ($(RT_STANDALONE),1)
.DEFAULT_GOAL := runtime
else
.DEFAULT_GOAL := $(RT_SAVED_GOAL)
endif
