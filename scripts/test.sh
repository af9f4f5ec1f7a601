#!/usr/bin/env bash
# The whole test suite: the normal build's tests, then the same suite under AddressSanitizer +
# UndefinedBehaviorSanitizer, then each libFuzzer target over its committed corpus.
# Expects scripts/setup.sh to have run (it installs the packages and builds `build/`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

ctest --test-dir build --output-on-failure -j2

# What users install without building: the wheel, the tarball and the .deb of the portable build,
# and the self-installing pre-commit hook, each used as a user would (tests/dist_test.sh).
bash scripts/build-dist.sh build-dist/dist >/dev/null
bash tests/dist_test.sh build-dist/dist build

# Sanitizers (the probe links an uninstrumented LibTorch, so the sanitized build leaves it out).
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOOMLINT_SANITIZE=ON -DOOMLINT_CPP_FRONTEND=ON -DOOMLINT_RUNTIME_CHECK=OFF >/dev/null
cmake --build build-asan
# use_sigaltstack=0: LLVM installs its own malloc'd signal stack on the thread that first registers
# its signal handlers (a worker thread, when the C++ front end runs there); when that thread exits,
# ASan munmaps the thread's signal stack as its own and aborts ("unable to unmap"), in some runs.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:use_sigaltstack=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j2

# Fuzz smoke run: a fixed number of inputs per target (long runs are done by hand, see fuzz/run.sh).
CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOOMLINT_FUZZ=ON -DOOMLINT_CPP_FRONTEND=ON \
  -DOOMLINT_RUNTIME_CHECK=OFF -DOOMLINT_BUILD_TESTS=OFF >/dev/null
cmake --build build-fuzz
bash fuzz/run.sh build-fuzz -runs=1500
