#!/usr/bin/env bash
# Runs every fuzz target over its committed seeds (CI: a fixed number of runs; by hand: pass
# -max_total_time=1800 to fuzz each for 30 minutes). The Python targets are seeded straight from
# fixtures/python and examples/ (no copies); the LSP, config and trace targets from fuzz/corpus/. New
# inputs go to a scratch folder, never into the repository; crashes are written to fuzz/crashes/.
#   bash fuzz/run.sh BUILD_DIR [libFuzzer options...]
set -euo pipefail
build="${1:?build dir with the *_fuzz targets}"; shift
root="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
opts=("$@")
[[ ${#opts[@]} -eq 0 ]] && opts=(-runs=3000)
mkdir -p "$root/crashes"
# LLVM's own signal stack on Clang's threads must not be unmapped by ASan, and LeakSanitizer's
# exit-time check must not scan the C++ front end's dynamic TLS by guesswork (scripts/test.sh says
# why for both; without the second, cpp_rules died after its last run on some corpus orders).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}use_sigaltstack=0:intercept_tls_get_addr=0"
repo="$(cd "$root/.." && pwd)"
# Each C++ input is a Clang run (~0.1 s): with a fixed number of runs (CI), that target gets a
# tenth of them, still covering every seed.
targets=(python_rules fix lsp config trace)
[[ -x "$build/fuzz/cpp_rules_fuzz" ]] && targets+=(cpp_rules)
# The targets run side by side, one per core (FUZZ_JOBS overrides), longest first; each one's last
# lines are printed in order once all have ended, and the run fails if any target did.
fuzz_target() {
  local t="$1" seeds topts=() o scratch
  case "$t" in
    python_rules) seeds=("$repo/fixtures/python" "$repo/examples") ;;
    fix) seeds=("$repo/fixtures/python") ;;
    cpp_rules) seeds=("$repo/fixtures/cpp" "$repo/examples/cpp") ;;
    *) seeds=("$root/corpus/$t") ;;
  esac
  for o in "${opts[@]}"; do
    if [[ "$t" == cpp_rules && "$o" == -runs=* ]]; then o="-runs=$(( ${o#-runs=} / 10 ))"; fi
    topts+=("$o")
  done
  scratch="$(mktemp -d)"
  echo "fuzz: $t ${topts[*]}"
  set +e
  "$build/fuzz/${t}_fuzz" "${topts[@]}" -max_len=65536 -timeout=60 -rss_limit_mb=4096 \
    -artifact_prefix="$root/crashes/${t}-" "$scratch" "${seeds[@]}" > "$scratch.log" 2>&1
  local rc=$?
  set -e
  tail -3 "$scratch.log"
  rm -rf "$scratch" "$scratch.log"
  return "$rc"
}
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
lanes="${FUZZ_JOBS:-$(nproc)}"
for t in "${targets[@]}"; do
  while (( $(jobs -rp | wc -l) >= lanes )); do wait -n || true; done
  ( fuzz_target "$t" > "$logs/$t.out" 2>&1 && echo 0 > "$logs/$t.rc" || echo $? > "$logs/$t.rc" ) &
done
wait
failed=0
for t in "${targets[@]}"; do
  cat "$logs/$t.out"
  rc="$(cat "$logs/$t.rc" 2>/dev/null || echo 1)"
  if [[ "$rc" != 0 ]]; then echo "fuzz: $t failed (exit $rc)" >&2; failed=1; fi
done
exit "$failed"
