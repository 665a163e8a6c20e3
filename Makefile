# The README's two commands:  make run  (the main job)  and  make test  (the test suite).
# Both install what is missing (Debian packages), configure and build first.

BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc)
SUDO       := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

DEB_PACKAGES := cmake g++ make libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev \
                libtorch-dev python3-torch python3-numpy python3-matplotlib python3-pytest python3-dev \
                pybind11-dev python3-pybind11 dataset-fashion-mnist zlib1g-dev

.PHONY: deps configure build run test test-asan bench clean

deps:
	@missing=$$(for p in $(DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:" $$missing; \
	  $(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q $$missing; \
	fi

configure: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release

build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: build
	./$(BUILD)/cli/ecekde report --probs examples/fashion_mnist_xe_probs.npy --labels examples/fashion_mnist_labels.npy --plot $(BUILD)/report

test: build test-asan
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# The library and its unit tests again under AddressSanitizer and UndefinedBehaviorSanitizer.
test-asan: deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DECEKDE_SANITIZE=address,undefined \
	      -DECEKDE_TORCH=OFF -DECEKDE_PYTHON=OFF -DECEKDE_BENCHMARKS=OFF -DECEKDE_EXPERIMENTS=OFF
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS) -L unit

bench: build
	./$(BUILD)/bench/ecekde_bench --benchmark_min_time=0.2

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
