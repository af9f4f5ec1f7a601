#!/usr/bin/env bash
# Runs the tests. Expects scripts/setup.sh to have run (it installs the packages and builds `build/`).
#
#   scripts/test.sh --quick   the normal build's GoogleTest suite (ctest), after bringing build/ up to
#                             date: the tier to run before each commit
#   scripts/test.sh           everything, as CI runs it: the quick tier; the wheel, tarball and .deb
#                             used as users would; the VS Code extension's .vsix in code-server;
#                             the suite again under AddressSanitizer and
#                             UndefinedBehaviorSanitizer; each libFuzzer target over its corpus
#
# Every build compiles through ccache (CMakeLists.txt), so a second run, or a clone in another folder,
# recompiles only what changed. Each phase's wall time is printed at the end.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

quick=0
case "${1:-}" in
  --quick) quick=1 ;;
  "") ;;
  -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; exit 0 ;;
  *) echo "test: unknown option $1 (see --help)" >&2; exit 2 ;;
esac

times=()
phase_start=$SECONDS
phase() {  # phase NAME: records the time since the last phase ended
  times+=("$(printf '%-28s %4d s' "$1" $((SECONDS - phase_start)))")
  phase_start=$SECONDS
}
report() {
  ((${#times[@]})) || return 0
  echo "test: phase times"
  printf '  %s\n' "${times[@]}"
}
trap report EXIT

cmake --build build
phase "build (normal)"
ctest --test-dir build --output-on-failure -j2
phase "ctest (normal)"
((quick)) && exit 0

# What users install without building: the wheel, the tarball and the .deb of the portable build,
# and the self-installing pre-commit hook, each used as a user would (tests/dist_test.sh).
bash scripts/build-dist.sh build-dist/dist >/dev/null
phase "portable build (build-dist)"
bash tests/dist_test.sh build-dist/dist build
phase "dist test"
# The VS Code extension: its binary resolution (compiled by build-dist's package-vsix.sh), then the
# extension installed from the .vsix just built, in a real VS Code (code-server on loopback, driven
# in headless Chromium; editors/vscode/test/e2e.sh).
node --test editors/vscode/test/binary.test.js
version="$(sed -n 's/^project(oomlint VERSION \([0-9][0-9.]*\).*/\1/p' CMakeLists.txt)"
bash editors/vscode/test/e2e.sh "build-dist/dist/oomlint-$version-linux-x64.vsix" build-dist/vscode-e2e
phase "VS Code extension e2e"

# Sanitizers (the probe links an uninstrumented LibTorch, so the sanitized build leaves it out).
# OOMLINT_SANITIZE builds oomlint's code at -Og (OOMLINT_CHECKED_OPT) and the tests' own code at
# -O0, with line tables only (CMakeLists.txt says why).
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOOMLINT_SANITIZE=ON -DOOMLINT_CPP_FRONTEND=ON -DOOMLINT_RUNTIME_CHECK=OFF >/dev/null
cmake --build build-asan
phase "ASan+UBSan build"
# Two tests run no code of oomlint's, so the sanitizers have nothing to watch there and the quick
# tier has run them already: g++ compiling the C++ fixtures against LibTorch's headers, and the
# DataLoader seed probe in Python.
no_oomlint_code='^(CppFixtures\.CompileWithDebianLibTorchHeaders|SeedDataloader\..*)$'
# use_sigaltstack=0: LLVM installs its own malloc'd signal stack on the thread that first registers
# its signal handlers (a worker thread, when the C++ front end runs there); when that thread exits,
# ASan munmaps the thread's signal stack as its own and aborts ("unable to unmap"), in some runs.
# intercept_tls_get_addr=0: LLVM 14's LeakSanitizer guesses the layout of a dlopen()ed library's
# dynamic TLS (the C++ front end's) from its address; when the block lands where the guess is
# wrong, the leak check's tracer reads a bogus range and dies (signal 11 after a test passed;
# google/sanitizers#1322). Leaks are still checked; those TLS blocks are not scanned as roots.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:use_sigaltstack=0:intercept_tls_get_addr=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j2 -E "$no_oomlint_code"
phase "ASan+UBSan ctest"

# Fuzz smoke run: a fixed number of inputs per target (long runs are done by hand, see fuzz/run.sh).
CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOOMLINT_FUZZ=ON -DOOMLINT_CPP_FRONTEND=ON \
  -DOOMLINT_RUNTIME_CHECK=OFF -DOOMLINT_BUILD_TESTS=OFF >/dev/null
cmake --build build-fuzz
phase "fuzz build"
bash fuzz/run.sh build-fuzz -runs=1500
phase "fuzz smoke run"
