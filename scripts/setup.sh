#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine (as root) to build and test oomlint, then builds it.
# Idempotent: re-running only rebuilds what changed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

packages=(
  build-essential cmake ninja-build pkg-config git ca-certificates openssl
  libtree-sitter-dev               # tree-sitter runtime 0.20.7 (grammar ABI 13-14)
  nlohmann-json3-dev libcli11-dev libtomlplusplus-dev
  libgtest-dev                     # tests
  libtorch-dev                     # LibTorch 1.13 (CPU) for oomlint-probe, the runtime check
  libicu72                         # the SARIF validator (.NET) needs ICU
  python3                          # tests compile fixed files with py_compile
  python3-nbformat                 # tests validate every notebook oomlint writes with nbformat
  python3-torch                    # the DataLoader seed probe (runtime_check/seed_dataloader.py) runs on CPU in tests
  neovim pre-commit dpkg-dev       # tests with real clients: Neovim's LSP client, pre-commit, cpack
  clang-14 libclang-rt-14-dev      # libFuzzer targets (scripts/test.sh runs them over their corpora)
  libclang-cpp14-dev libclang-14-dev llvm-14-dev libclang-common-14-dev  # the C++ front end (Clang LibTooling)
  clang-tools-14                   # clang-apply-replacements: tests apply --export-fixes with it
  zlib1g-dev libncurses-dev        # zlib and terminfo, which the static LLVM archives link against
)
# npm pack fetches the pinned grammar and the SARIF validator. A machine that already has Node.js
# (for example from NodeSource, whose nodejs bundles npm) keeps it.
if ! command -v npm >/dev/null 2>&1; then packages+=(nodejs npm); fi
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

bash scripts/fetch-deps.sh

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build
