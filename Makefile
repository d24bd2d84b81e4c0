# The commands README.md documents. Each one installs what is missing first.
.PHONY: setup run test test-memory-bound python test-python test-tsan check-thread-safety fuzz bench bench-tpch example clean

setup:
	@scripts/setup

# Builds the optimized tree and runs the main job on its built-in defaults:
# a verified out-of-core shuffle (4 in-process ranks, about 1 GiB, 512 MiB).
run: setup
	cmake --preset release >/dev/null
	cmake --build --preset release --target spillway_tool
	build/release/apps/spillway/spillway shuffle

# Builds under AddressSanitizer + UndefinedBehaviorSanitizer and runs every
# test, then the memory-bound tests on the optimized tool, then the Python
# package's tests.
test: setup
	cmake --preset asan >/dev/null
	cmake --build --preset asan
	ctest --preset asan
	$(MAKE) --no-print-directory test-memory-bound
	$(MAKE) --no-print-directory test-python

# Runs the tool in real memory cgroups (needs root): the memory limit holds
# for the whole process. Optimized build only; sanitizers would break any bound.
test-memory-bound: setup
	cmake --preset release >/dev/null
	cmake --build --preset release --target spillway_tool
	ctest --preset memory-bound

# Installs the Python package into .venv as `pip install .` does (its CMake
# build is kept in build/python, so a rerun compiles only what changed).
python: setup
	.venv/bin/pip install --quiet --disable-pip-version-check --no-build-isolation .

# The Python package's pytest suite: round trips with pyarrow and Polars,
# errors, MPI with 2 processes, and the memory limit as the peak resident set
# shows it.
test-python: python
	.venv/bin/python -m pytest -q tests/python

# Builds under ThreadSanitizer and runs the concurrency-heavy modules' tests.
test-tsan: setup
	cmake --preset tsan >/dev/null
	cmake --build --preset tsan
	ctest --preset tsan

# Compiles the libraries with clang -Wthread-safety -Werror.
check-thread-safety: setup
	cmake --preset clang-tsa >/dev/null
	cmake --build --preset clang-tsa

# Builds the libFuzzer targets of fuzz/ (clang, AddressSanitizer +
# UndefinedBehaviorSanitizer) and runs each for FUZZ_SECONDS, seeded with
# fuzz/corpus; reports executions, coverage and findings (build/fuzz/fuzz/).
FUZZ_SECONDS ?= 1200
fuzz: setup
	cmake --preset fuzz >/dev/null
	cmake --build --preset fuzz
	scripts/fuzz build/fuzz $(FUZZ_SECONDS)

# Builds the optimized tree, installs the Python package and the peers of
# bench/peers (scripts/setup --peers), and runs every benchmark BENCH_RUNS
# times; prints METRIC lines, then each figure's median and range (also kept
# in build/release/bench/metrics.md), and draws BENCHMARKS.md's plots into
# docs/benchmarks/. The peers benchmark alone:
# build/release/bench/peers/spillway_bench_peers.
BENCH_RUNS ?= 1
bench: python
	scripts/setup --peers
	cmake --preset release >/dev/null
	cmake --build --preset release
	scripts/bench build/release "" $(BENCH_RUNS)
	.venv/bin/python bench/metric_table.py build/release/bench/results.txt | tee build/release/bench/metrics.md
	.venv/bin/python bench/plot_benchmarks.py build/release/bench/results.txt docs/benchmarks

# TPC-H at scale 10 (about 2.8 GB of Parquet, written once under
# build/release/bench/tpch/data) against DuckDB
# under a limit of 1100 MiB; `make bench` runs scale 1. Takes tens of minutes.
bench-tpch: setup
	cmake --preset release >/dev/null
	cmake --build --preset release
	build/release/bench/tpch/spillway_bench_tpch 10 1100

# Installs the release libraries, headers, CMake package and tool under
# build/package/prefix, then builds and runs examples/ against that install
# as a separate project would (find_package(spillway CONFIG REQUIRED)).
example: setup
	cmake --preset package >/dev/null
	cmake --build --preset package --target install >/dev/null
	cmake -S examples -B build/example -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$(CURDIR)/build/package/prefix >/dev/null
	cmake --build build/example
	build/example/partition_and_spill
	build/example/streaming_pipeline

clean:
	rm -rf build
