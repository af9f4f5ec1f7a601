#!/usr/bin/env bash
# What bench/bench.py compares against, for benchmark runs by hand (CI does not need these):
# hyperfine, flake8 and pylint from Debian, and ruff's WebAssembly build from npm (pinned,
# integrity-checked, into .deps/).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
missing=()
for p in hyperfine flake8 pylint; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
bash scripts/fetch-deps.sh --bench
