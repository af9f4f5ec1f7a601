#!/usr/bin/env bash
# Runs every fuzz target over its committed seeds (CI: a fixed number of runs; by hand: pass
# -max_total_time=1800 to fuzz each for 30 minutes). The Python targets are seeded straight from
# fixtures/python and examples/ (no copies); the LSP and config targets from fuzz/corpus/. New
# inputs go to a scratch folder, never into the repository; crashes are written to fuzz/crashes/.
#   bash fuzz/run.sh BUILD_DIR [libFuzzer options...]
set -euo pipefail
build="${1:?build dir with the *_fuzz targets}"; shift
root="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
opts=("$@")
[[ ${#opts[@]} -eq 0 ]] && opts=(-runs=3000)
mkdir -p "$root/crashes"
repo="$(cd "$root/.." && pwd)"
for t in python_rules fix lsp config; do
  case "$t" in
    python_rules) seeds=("$repo/fixtures/python" "$repo/examples") ;;
    fix) seeds=("$repo/fixtures/python") ;;
    *) seeds=("$root/corpus/$t") ;;
  esac
  scratch="$(mktemp -d)"
  echo "fuzz: $t ${opts[*]}"
  "$build/fuzz/${t}_fuzz" "${opts[@]}" -max_len=65536 -timeout=30 -rss_limit_mb=4096 \
    -artifact_prefix="$root/crashes/${t}-" "$scratch" "${seeds[@]}" 2>&1 | tail -3
  rm -rf "$scratch"
done
