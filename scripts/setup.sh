#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine (as root) to build and test oomlint, then builds it.
# Idempotent: re-running only rebuilds what changed.
#
#   scripts/setup.sh                       everything the tests need; builds build/
#   scripts/setup.sh --user [--prefix P] [--no-cpp]
#       only what the linter itself needs (no tests, fuzzers, probe, editors or validators):
#       installs its build dependencies, builds build-user/ and installs oomlint into P
#       (default /usr/local as root, else ~/.local). --no-cpp leaves out the LibTorch C++ front
#       end and its Clang packages.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

mode=full prefix="" cpp=ON
while (($#)); do
  case "$1" in
    --user) mode=user ;;
    --prefix) prefix="${2:?--prefix needs a folder}"; shift ;;
    --prefix=*) prefix="${1#--prefix=}" ;;
    --no-cpp) cpp=OFF ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "setup: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
if [[ $mode == full && ( -n "$prefix" || $cpp == OFF ) ]]; then
  echo "setup: --prefix and --no-cpp go with --user" >&2; exit 2
fi

packages=(
  build-essential cmake ninja-build pkg-config git ca-certificates openssl
  ccache                           # every build folder compiles through it (CMakeLists.txt says how)
  libtree-sitter-dev               # tree-sitter runtime 0.20.7 (grammar ABI 13-14)
  nlohmann-json3-dev libcli11-dev libtomlplusplus-dev
  libjemalloc-dev                  # the allocator linked into oomlint (analyzer/util/allocator.c)
  libgtest-dev                     # tests
  libtorch-dev                     # LibTorch 1.13 (CPU) for oomlint-probe, the runtime check
  libicu72                         # the SARIF validator (.NET) needs ICU
  python3                          # tests compile fixed files with py_compile
  python3-nbformat                 # tests validate every notebook oomlint writes with nbformat
  python3-venv python3-pip-whl python3-setuptools-whl  # tests pip-install the wheel offline
  python3-torch                    # the DataLoader seed probe (runtime_check/seed_dataloader.py) runs on CPU in tests
  neovim pre-commit dpkg-dev file  # tests with real clients: Neovim's LSP client, pre-commit, cpack (its .deb generator runs `file`)
  clang-14 libclang-rt-14-dev      # libFuzzer targets (scripts/test.sh runs them over their corpora)
  libclang-cpp14-dev libclang-14-dev llvm-14-dev libclang-common-14-dev  # the C++ front end (Clang LibTooling)
  clang-tools-14                   # clang-apply-replacements: tests apply --export-fixes with it
  zlib1g-dev libncurses-dev        # zlib and terminfo, which the static LLVM archives link against
  chromium libkrb5-dev             # the VS Code extension's e2e test: the browser, and a header code-server's native modules build against
)
if [[ $mode == user ]]; then
  packages=(build-essential cmake ninja-build pkg-config ca-certificates openssl
            libtree-sitter-dev nlohmann-json3-dev libcli11-dev libtomlplusplus-dev libjemalloc-dev)
  # clang-14 holds ClangConfig.cmake, which find_package(Clang) reads.
  [[ $cpp == ON ]] && packages+=(clang-14 libclang-cpp14-dev libclang-14-dev llvm-14-dev libclang-common-14-dev zlib1g-dev libncurses-dev)
fi
# npm pack fetches the pinned grammar and the SARIF validator. A machine that already has Node.js
# (for example from NodeSource, whose nodejs bundles npm) keeps it.
if ! command -v npm >/dev/null 2>&1; then packages+=(nodejs npm); fi
# Each phase's wall time, printed at the end (CI's log then lists setup's phases beside test.sh's).
times=()
phase_start=$SECONDS
phase() {
  times+=("$(printf '%-28s %4d s' "$1" $((SECONDS - phase_start)))")
  phase_start=$SECONDS
}
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup: missing Debian packages: ${missing[*]} (run as root)" >&2; exit 2
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [[ $mode == user ]]; then
  bash scripts/fetch-deps.sh --grammar-only
  [[ -n "$prefix" ]] || { [[ $(id -u) -eq 0 ]] && prefix=/usr/local || prefix="$HOME/.local"; }
  cmake -S . -B build-user -G Ninja -DCMAKE_BUILD_TYPE=Release -DOOMLINT_BUILD_TESTS=OFF -DOOMLINT_RUNTIME_CHECK=OFF \
    -DOOMLINT_CPP_FRONTEND="$cpp" >/dev/null
  cmake --build build-user --target oomlint $([[ $cpp == ON ]] && echo oomlint_cpp)
  cmake --install build-user --prefix "$prefix" >/dev/null
  echo "setup: installed $("$prefix/bin/oomlint" --version) into $prefix ($prefix/bin/oomlint)"
  case ":$PATH:" in *":$prefix/bin:"*) ;; *) echo "setup: add $prefix/bin to PATH" ;; esac
  exit 0
fi

phase "Debian packages"
bash scripts/fetch-deps.sh
phase "fetch-deps"
# The VS Code extension's e2e test: code-server, the Node 24 it needs and playwright-core, from
# editors/vscode/test/package-lock.json into ~/.cache/oomlint-vscode-e2e (only when the lock changed).
bash editors/vscode/test/e2e.sh --install
phase "VS Code e2e install"

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build
phase "build (normal)"
echo "setup: phase times"
printf '  %s\n' "${times[@]}"
