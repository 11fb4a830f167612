# Developer entry points. CMake does the building; this file only strings
# the steps together so each is one command.
BUILD_DIR ?= build
ASAN_BUILD_DIR ?= build-asan
JOBS ?= $(shell nproc)
AIRLOCK_DATA_DIR ?= /var/lib/airlock
export AIRLOCK_DATA_DIR
# make up NODES=N: N nodes on this machine, a local cluster (scripts/up.sh).
ifdef NODES
export AIRLOCK_NODES := $(NODES)
endif

.PHONY: all deps build test test-asan bench up down clean

all: build

deps:
	@sh scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# Unit tests run in parallel; tests with real VMs hold slots of the "vm"
# resource (tests/CMakeLists.txt: two at once, a several-node test alone).
test: build
	@cd $(BUILD_DIR) && ctest --output-on-failure -j 3 --resource-spec-file ctest-resources.json

# ASan's VMs are slower (guestd too is instrumented): one VM test at a time.
test-asan: deps
	@cmake -S . -B $(ASAN_BUILD_DIR) -DCMAKE_BUILD_TYPE=Debug -DAIRLOCK_SANITIZE=ON \
		-DAIRLOCK_TEST_VM_SLOTS=1 >/dev/null
	@cmake --build $(ASAN_BUILD_DIR) -j $(JOBS)
	@cd $(ASAN_BUILD_DIR) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j 3 \
		--resource-spec-file ctest-resources.json

bench: build
	@$(BUILD_DIR)/tests/airlock-bench --out bench/results

up: build
	@sh scripts/up.sh $(BUILD_DIR)

down:
	@sh scripts/down.sh

clean:
	rm -rf $(BUILD_DIR) $(ASAN_BUILD_DIR)
