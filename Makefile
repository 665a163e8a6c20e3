# The README's two commands:  make run  (the main job)  and  make test  (the test suite).
# Both install what is missing (Debian packages), configure and build first.

BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
# make fuzz runs each reader's fuzzer this long (seconds); FUZZ_RUNS=N runs N inputs per target instead.
FUZZ_SECONDS ?= 10
FUZZ_RUNS    ?=
FUZZ_TARGETS := npy csv labels
JOBS       ?= $(shell nproc)
SUDO       := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

DEB_PACKAGES := cmake g++ make libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev \
                libtorch-dev python3-torch python3-numpy python3-matplotlib python3-pytest python3-dev \
                pybind11-dev python3-pybind11 dataset-fashion-mnist zlib1g-dev clang libfuzzer-14-dev libopenblas-dev \
                libopenmpi-dev openmpi-bin ninja-build

.PHONY: deps configure build run test test-asan fuzz bench clean

deps:
	@missing=$$(for p in $(DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:" $$missing; \
	  $(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q $$missing; \
	fi

# Unity builds (CMake's: each target's sources compiled six to a translation unit) halve the build here: the
# front ends' heavy headers (CLI11, pybind11, LibTorch) are compiled once per batch rather than once per
# file (Release 7.5 -> 5 minutes); the CLI and the Python module are one batch each (cli/, python/). The fuzz
# build is unity too (3.7 -> 3.1 minutes, 2026-12-06, AVX2 EPYC in a slow hour): no build of make test now
# compiles each library source on its own, so a missing include can hide behind an earlier source of its batch;
# a plain `cmake -S . -B out && cmake --build out` (no UNITY) shows it.
UNITY := -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=6
# Ninja for a new build directory: it compiles a target's sources while the libraries it links are still
# being built, so both cores stay busy (the sanitizer build 6.5 -> 5.6 minutes, 2026-12-07); a directory
# configured before keeps its generator.
generator = $(if $(wildcard $(1)/CMakeCache.txt),,-G Ninja)

configure: deps
	cmake -S . -B $(BUILD) $(call generator,$(BUILD)) -DCMAKE_BUILD_TYPE=Release $(UNITY)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: build
	./$(BUILD)/cli/ecekde report --probs examples/fashion_mnist_xe_probs.npy --labels examples/fashion_mnist_labels.npy --plot $(BUILD)/report

# The Release tests with glibc's allocator as the CLI tunes it for itself (cli/allocator.cpp): the test
# programs' large arrays in huge pages, one heap for every thread (the accuracy tests 86.6 -> 78.1 s with the
# first three, 2026-12-07).
TUNED_ALLOCATOR := GLIBC_TUNABLES=glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=268435456:glibc.malloc.arena_max=1

test: build test-asan fuzz
	$(TUNED_ALLOCATOR) ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# The sanitizer and fuzz builds' flags. UBSan's vptr check (a call through an object of another dynamic
# type) is left out: the library's one virtual interface (Communicator) is never cast down, so the check has
# nothing to find, and it took a third of the compile time of the library's largest sources.
SANITIZED_FLAGS := -O1 -g1 -DNDEBUG -fno-sanitize=vptr
# Their kernels only in the instruction sets this machine runs (src/core/CMakeLists.txt): the others' would be
# compiled and never executed (the AVX-512 kernels took 45 compile-seconds under the sanitizers).
NATIVE_ISAS := baseline$(shell grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && echo ';avx2')$(shell grep -qw avx512f /proc/cpuinfo && echo ';avx512')

# The library and its unit tests again under AddressSanitizer and UndefinedBehaviorSanitizer, at -O1 with
# line tables only (-g1: file and line in every report): half the build time of RelWithDebInfo's -O2 -g,
# and the tests run as fast. From a fresh clone, make test took 18.1 minutes on the AVX-512 EPYC
# (2026-11-28) and 18.8 on the AVX2 EPYC (2026-12-06); in slow hours of the latter (2026-12-07, its Release
# build 1.4 times slower) 29.2, then 21.4 and 24.3 after Ninja, the fuzz build's -O1 kernels, the tests at
# -O0 under sanitizers (cmake/EcekdeHelpers.cmake) and UBSan without vptr, 19.8 in a faster hour after a
# faster test oracle and QUICK study (docs/benchmarks.md, "make test's time").
# Seven unit tests whose claims are statistical (a pilot candidate kept where the data call for it, estimates
# within 10% to 25% of their truth, on 1,000 to 8,000 rows) are left out of the sanitizer run, as the accuracy
# label is: every crossfit test fits and predicts with each candidate the input's K offers (the canonical
# trees and their search at K <= 20 included), so what they add is rows, not code paths. Under the
# sanitizers the first six took 69 of the run's 509 test-seconds (AVX2 EPYC, 2026-12-06); the trees' one
# takes 20 to 37 s in Release. So is whether p = 2's narrower correction is taken where it reads more (24 s
# under the sanitizers, 2026-12-07); its sweeps over a criterion subset and the grid run in
# CriterionOnASubsetOfRowsAgreesWithThePlainFormula. They run in make test's Release stage.
STATISTICAL_UNIT_TESTS := ^Crossfit\.(A[A-Za-z]*PilotIsKept|PooledPilotWithClassInterceptsIsKept|AStepCandidate|SaturatedProbabilitiesTake|TreesAreKept|SquaredErrorTakesANarrower)

test-asan: deps
	cmake -S . -B $(ASAN_BUILD) $(call generator,$(ASAN_BUILD)) -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$(SANITIZED_FLAGS)" \
	      -DECEKDE_SANITIZE=address,undefined $(UNITY) "-DECEKDE_KERNEL_ISAS=$(NATIVE_ISAS)" \
	      -DECEKDE_TORCH=OFF -DECEKDE_PYTHON=OFF -DECEKDE_MPI=OFF -DECEKDE_BENCHMARKS=OFF -DECEKDE_EXPERIMENTS=OFF
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS) -L unit -E '$(STATISTICAL_UNIT_TESTS)'

# The readers under libFuzzer (clang, ASan+UBSan), from the committed seed corpus (fuzz/corpus) plus
# what earlier runs found (kept in $(FUZZ_BUILD)/corpus), the three targets at once. Any crash, leak,
# timeout or sanitizer report fails the target; libFuzzer leaves the input as $(FUZZ_BUILD)/crash-* to
# reproduce it.
fuzz: deps
	CXX=clang++ cmake -S . -B $(FUZZ_BUILD) $(call generator,$(FUZZ_BUILD)) -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$(SANITIZED_FLAGS)" \
	      -DECEKDE_FUZZ=ON "-DECEKDE_KERNEL_ISAS=$(NATIVE_ISAS)" \
	      -DECEKDE_SANITIZE=address,undefined -DECEKDE_TESTS=OFF -DECEKDE_CLI=OFF -DECEKDE_TORCH=OFF \
	      -DECEKDE_PYTHON=OFF -DECEKDE_MPI=OFF -DECEKDE_BENCHMARKS=OFF -DECEKDE_EXPERIMENTS=OFF -DECEKDE_INSTALL=OFF \
	      $(UNITY)
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target $(addprefix ecekde_fuzz_,$(FUZZ_TARGETS))
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_BUILD)/corpus/$$t; \
	  dict=$$( [ -f fuzz/$$t.dict ] && echo -dict=fuzz/$$t.dict ); \
	  limit=$$( [ -n "$(FUZZ_RUNS)" ] && echo -runs=$(FUZZ_RUNS) || echo -max_total_time=$(FUZZ_SECONDS) ); \
	  echo "fuzzing $$t ($$limit)"; \
	  ./$(FUZZ_BUILD)/fuzz/ecekde_fuzz_$$t $(FUZZ_BUILD)/corpus/$$t fuzz/corpus/$$t $$dict $$limit \
	      -timeout=10 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/ \
	      2> $(FUZZ_BUILD)/fuzz_$$t.log & \
	  eval "pid_$$t=$$!"; \
	done; \
	status=0; \
	for t in $(FUZZ_TARGETS); do \
	  if eval "wait \$$pid_$$t"; then grep -E "stat::number_of_executed_units|stat::peak_rss_mb" $(FUZZ_BUILD)/fuzz_$$t.log; \
	  else echo "fuzzing $$t failed:"; tail -40 $(FUZZ_BUILD)/fuzz_$$t.log; status=1; fi; \
	done; \
	exit $$status

# OpenBLAS 0.3.21 takes its AVX2 kernels on CPUs newer than it knows; where the CPU has AVX-512 the
# yardstick of ecekde_bench_scores is given OpenBLAS's AVX-512 kernels (SkylakeX), its fastest here.
OPENBLAS_BEST := $(shell grep -q avx512f /proc/cpuinfo 2>/dev/null && echo OPENBLAS_CORETYPE=SkylakeX)

bench: build
	./$(BUILD)/bench/ecekde_bench --benchmark_min_time=0.2
	$(OPENBLAS_BEST) ./$(BUILD)/bench/ecekde_bench_scores --benchmark_repetitions=5 \
	    --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
