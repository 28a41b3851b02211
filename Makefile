# cutegen's build. `make` builds build/cutegen and build/cutegen-runner (installing missing
# dependencies first through scripts/deps.sh); `make test` runs every CPU test; `make test-gpu`
# the tests that need a GPU; `make asan` the unit tests under ASan+UBSan.

BUILD    ?= build
CC       ?= gcc
NVCC     ?= $(shell command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
WERROR   ?= -Werror
SANITIZE ?=
OPT      ?= -O2
CFLAGS_BASE = -std=c17 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wno-unused-parameter $(WERROR) \
	      $(OPT) -g -Isrc -Iinclude -I$(CUDA_HOME)/include -MMD -MP $(SANITIZE)
LDLIBS_CLI  = -lcurl -lsqlite3 -ljansson -lm -lpthread
# The runner's device code targets Hopper (sm_90a) and carries PTX for other GPUs.
RUNNER_GENCODE ?= -gencode arch=compute_90a,code=sm_90a -gencode arch=compute_80,code=sm_80 \
		  -gencode arch=compute_80,code=compute_80

UTIL_SRC  := $(wildcard src/util/*.c)
CORE_SRC  := $(filter-out src/cmd/main.c,$(wildcard src/*/*.c))
CORE_SRC  := $(filter-out $(UTIL_SRC),$(CORE_SRC))
EMBED_IN  := $(sort $(wildcard prompts/*.txt prompts/*/*.txt tasks/*.json docs/cli/*.txt \
	       report/*.html export/* docs/kernel-abi.md include/cutegen/*.h tools/*.py \
	       docs/cute/*.md builtin/*.cu))
RUNNER_C  := runner/runner.c runner/confine.c runner/limits.c runner/protocol.c
BASELINE_C := runner/baseline.c runner/blas.c runner/limits.c runner/protocol.c
RUNNER_CU := $(wildcard runner/*.cu)
UNIT_SRC  := $(wildcard tests/unit/*.c)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
CLI_OBJ    := $(call obj,$(UTIL_SRC) $(CORE_SRC)) $(BUILD)/obj/gen/embedded.o
RUNNER_OBJ := $(call obj,$(RUNNER_C) src/common/task.c src/common/verdict.c src/common/embedded_find.c src/common/module_run.c $(UTIL_SRC)) \
	      $(patsubst %.cu,$(BUILD)/obj/%.cu.o,$(RUNNER_CU)) $(BUILD)/obj/gen/embedded.o
BASELINE_OBJ := $(call obj,$(BASELINE_C) src/common/task.c src/common/embedded_find.c $(UTIL_SRC)) \
	      $(patsubst %.cu,$(BUILD)/obj/%.cu.o,$(RUNNER_CU)) $(BUILD)/obj/gen/embedded.o

.PHONY: all deps test test-unit test-gpu asan clean fuzz fuzz-targets fuzz-run
all: deps $(BUILD)/cutegen $(BUILD)/cutegen-runner $(BUILD)/cutegen-baseline $(BUILD)/confine-test \
	$(BUILD)/forge-harness \
	$(BUILD)/cutegen.1 $(BUILD)/cutegen.bash $(BUILD)/_cutegen

# Every compile waits for deps (order-only), so `make -jN` on a fresh machine installs the
# headers before the first compile needs them.
deps:
	@bash scripts/deps.sh

$(BUILD)/obj/%.o: %.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -c $< -o $@

$(BUILD)/obj/gen/embedded.o: $(BUILD)/gen/embedded.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -c $< -o $@

$(BUILD)/gen/embedded.c: $(BUILD)/embed $(EMBED_IN)
	@mkdir -p $(dir $@)
	$(BUILD)/embed $@ . $(EMBED_IN)

$(BUILD)/embed: tools/embed.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -o $@ $<

$(BUILD)/obj/%.cu.o: %.cu | deps
	@mkdir -p $(dir $@)
	$(NVCC) -std=c++17 -O3 $(RUNNER_GENCODE) -Isrc -Xcompiler -fPIC -MMD -MP -MF $(@:.o=.d) -c $< -o $@

$(BUILD)/cutegen: $(BUILD)/obj/src/cmd/main.o $(CLI_OBJ)
	$(CC) $(SANITIZE) -o $@ $^ $(LDLIBS_CLI)

# The man page and the shell completions, generated from the command table and docs/cli/*.txt.
$(BUILD)/cutegen.1: $(BUILD)/cutegen
	$(BUILD)/cutegen help --man >$@.tmp && mv $@.tmp $@
$(BUILD)/cutegen.bash: $(BUILD)/cutegen
	$(BUILD)/cutegen completion bash >$@.tmp && mv $@.tmp $@
$(BUILD)/_cutegen: $(BUILD)/cutegen
	$(BUILD)/cutegen completion zsh >$@.tmp && mv $@.tmp $@

# --as-needed: nothing but what the runner calls is a DT_NEEDED of it (tests/e2e/judge.sh checks
# that no cuBLAS is among them)
$(BUILD)/cutegen-runner: $(RUNNER_OBJ)
	$(CC) $(SANITIZE) -o $@ $^ -Wl,--as-needed -Wl,-z,relro,-z,now -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 \
		-lcudart -ljansson -lstdc++ -ldl -lm -lpthread

$(BUILD)/cutegen-baseline: $(BASELINE_OBJ)
	$(CC) $(SANITIZE) -o $@ $^ -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 \
		-lcublasLt -lcudart -ljansson -lstdc++ -ldl -lm -lpthread

# The seccomp filters of the runner, tried in a small process without CUDA (tests/e2e/judge.sh)
$(BUILD)/confine-test: $(call obj,tests/confine/confine_test.c runner/confine.c)
	$(CC) $(SANITIZE) -o $@ $^ -ldl -lpthread
$(BUILD)/forge-harness: $(call obj,tests/confine/forge_harness.c runner/confine.c)
	$(CC) $(SANITIZE) -o $@ $^ -ldl -lpthread

# runner/protocol.c: the timing protocol the runner and the baseline share, host code unit-tested
$(BUILD)/unit-tests: $(call obj,$(UNIT_SRC) runner/protocol.c) $(CLI_OBJ)
	$(CC) $(SANITIZE) -o $@ $^ $(LDLIBS_CLI)

# The e2e tests also need what scripts/deps-test.sh installs (a single-node Slurm, Chromium).
test: all $(BUILD)/unit-tests
	@bash scripts/deps-test.sh
	@BUILD=$(BUILD) bash tests/run.sh

test-unit: $(BUILD)/unit-tests
	@$(BUILD)/unit-tests

test-gpu: all
	@BUILD=$(BUILD) bash tests/gpu/run.sh

# Unit tests and the CLI under AddressSanitizer + UndefinedBehaviorSanitizer.
asan:
	@$(MAKE) --no-print-directory BUILD=build-asan OPT=-O1 \
		SANITIZE="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
		build-asan/cutegen build-asan/unit-tests
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 build-asan/unit-tests

# Fuzz targets (clang + libFuzzer): tests/fuzz/fuzz_NAME.c, linked against every module of src/
# (but main.c) built with clang under ASan+UBSan into build-fuzz/. `make fuzz` builds them all;
# `make fuzz-run FUZZ_SECONDS=20` also runs each for that long from its seed corpus
# tests/fuzz/corpus/NAME/ (scripts/fuzz.sh; new inputs go to build-fuzz/corpus/NAME/).
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_SAN := -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer \
	    -fno-sanitize-recover=undefined
FUZZ_SECONDS ?= 20
fuzz:
	@$(MAKE) --no-print-directory BUILD=build-fuzz CC=clang OPT=-O1 SANITIZE="$(FUZZ_SAN)" \
		fuzz-targets
fuzz-targets: $(patsubst tests/fuzz/%.c,$(BUILD)/%,$(FUZZ_SRC))
fuzz-run: fuzz
	@bash scripts/fuzz.sh $(FUZZ_SECONDS)

$(BUILD)/fuzz_%: $(BUILD)/obj/tests/fuzz/fuzz_%.o $(CLI_OBJ)
	$(CC) $(SANITIZE) -fsanitize=fuzzer -o $@ $^ $(LDLIBS_CLI)

clean:
	rm -rf build build-asan build-fuzz

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
