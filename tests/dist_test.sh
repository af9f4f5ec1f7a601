#!/usr/bin/env bash
# The packages users install without building, tested as they are used (scripts/test.sh runs it
# after scripts/build-dist.sh): the wheel installed by pip into a fresh virtual environment with
# no index, the tarball unpacked anywhere, the .deb's metadata, and the self-installing pre-commit
# hook (packaging/pre-commit) built by the real pre-commit framework offline, blocking a commit
# with a finding and passing a clean one. Each gives the same findings as build/oomlint.
#   tests/dist_test.sh DIST_DIR [BUILD_DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dist="$(cd "$1" && pwd)"
build="$(cd "${2:-$root/build}" && pwd)"
version="$(sed -n 's/^project(oomlint VERSION \([0-9][0-9.]*\).*/\1/p' "$root/CMakeLists.txt")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }

wheel="$(ls "$dist"/oomlint-"$version"-py3-none-manylinux_2_*_x86_64.whl 2>/dev/null | head -1)"
tarball="$dist/oomlint-$version-x86_64-linux.tar.gz"
deb="$dist/oomlint_${version}_amd64.deb"
for f in "$wheel" "$tarball" "$deb"; do [[ -f "$f" ]] || { echo "FAIL: missing ${f:-the wheel} in $dist" >&2; exit 1; }; done
glibc_minor="$(basename "$wheel" | sed 's/.*manylinux_2_\([0-9]*\)_x86_64.whl/\1/')"
((glibc_minor <= 35)) && pass "wheel tag manylinux_2_$glibc_minor (glibc <= 2.35)" || fail "wheel needs glibc 2.$glibc_minor"

# What build/oomlint reports on the examples: every package must report the same.
cd "$root"
expected="$work/expected.txt"
"$build/oomlint" check --no-cache --isolated --exit-zero --output-format concise examples/ > "$expected"
grep -q "OOM101" "$expected" || fail "build/oomlint found nothing on examples/"
same() {  # same NAME BINARY
  "$2" check --no-cache --isolated --exit-zero --output-format concise examples/ > "$work/$1.txt" 2>&1 || true
  if diff -u "$expected" "$work/$1.txt" > "$work/$1.diff"; then pass "$1: the same $(grep -c ': OOM' "$expected") findings on examples/"
  else fail "$1 differs from build/oomlint:"; cat "$work/$1.diff" >&2; fi
}

# The wheel: pip into a fresh virtual environment, no index, no compiler, no root needed.
/usr/bin/python3 -m venv "$work/venv"
start=$(date +%s%N)
PIP_NO_INDEX=1 PIP_FIND_LINKS="$dist" "$work/venv/bin/pip" install -q --disable-pip-version-check oomlint
echo "pip install: $(( ($(date +%s%N) - start) / 1000000 )) ms"
[[ -x "$work/venv/bin/oomlint" ]] || fail "the wheel put no oomlint in the environment's bin/"
[[ -f "$work/venv/include/oomlint/trace.h" ]] && pass "wheel: <venv>/include/oomlint/trace.h" || fail "the wheel put no include/oomlint/trace.h in the environment"
[[ "$("$work/venv/bin/oomlint" --version)" == "oomlint $version" ]] || fail "venv oomlint --version"
[[ "$("$work/venv/bin/python" -m oomlint --version)" == "oomlint $version" ]] || fail "python -m oomlint"
same wheel "$work/venv/bin/oomlint"
PATH="$work/venv/bin:$PATH" oomlint check --no-cache --output-format concise examples/cpp/mnist_classifier.cpp > "$work/cpp.txt" 2>&1 || true
grep -q "mnist_classifier.cpp:43:5: OOM101" "$work/cpp.txt" && pass "wheel: the C++ front end runs" \
  || { fail "wheel: C++ not checked"; cat "$work/cpp.txt" >&2; }

# `python -m oomlint trace`: reports on a saved trace, and finds its bootstrap in the wheel (the
# environment has no PyTorch, so the bootstrap stops there and says so).
"$work/venv/bin/python" -m oomlint trace --report fixtures/trace/oom102_history.trace.json --root . --no-check \
  > "$work/trace.txt" 2>&1
grep -q "fixtures/trace/oom102_history.py:16  +1.00 MiB/step" "$work/trace.txt" && pass "wheel: trace --report" \
  || { fail "wheel: trace --report"; cat "$work/trace.txt" >&2; }
rc=0; "$work/venv/bin/oomlint" trace -- "$work/venv/bin/python" fixtures/trace/clean.py > "$work/trace.txt" 2>&1 || rc=$?
[[ $rc == 2 ]] && grep -q "PyTorch cannot be imported" "$work/trace.txt" && pass "wheel: the trace bootstrap runs" \
  || { fail "wheel: the trace bootstrap (rc $rc)"; cat "$work/trace.txt" >&2; }

# --verify without oomlint-probe: `python -m oomlint` hands its interpreter to the probes' PyTorch
# twins, which this environment's Python (no torch) cannot run: said so, findings still reported.
rc=0; env -u OOMLINT_PYTHON -u OOMLINT_PROBE "$work/venv/bin/python" -m oomlint check --isolated --no-cache --verify \
  examples/sized_mlp.py > "$work/verify.txt" 2>&1 || rc=$?
[[ $rc == 1 ]] && grep -q "its PyTorch twins cannot run: \`$work/venv/bin/python .*/lib/oomlint/python/oomlint/probe.py --which-device\` says: .*cannot import torch" "$work/verify.txt" \
  && grep -q "OOM102" "$work/verify.txt" && pass "wheel: check --verify falls back to the probes' PyTorch twins" \
  || { fail "wheel: check --verify without oomlint-probe (rc $rc)"; cat "$work/verify.txt" >&2; }

# The tarball: relocatable, wherever it is unpacked.
mkdir -p "$work/anywhere/deep"
tar -C "$work/anywhere/deep" -xzf "$tarball"
same tarball "$work/anywhere/deep/oomlint-$version-x86_64-linux/bin/oomlint"
[[ -f "$work/anywhere/deep/oomlint-$version-x86_64-linux/lib/oomlint/python/oomlint/trace.py" ]] \
  && pass "tarball: the trace bootstrap is beside the binary" || fail "tarball lacks lib/oomlint/python/oomlint/trace.py"
[[ -f "$work/anywhere/deep/oomlint-$version-x86_64-linux/lib/oomlint/python/oomlint/probe_twins.py" ]] \
  && pass "tarball: the probes' PyTorch twins are beside the binary" || fail "tarball lacks lib/oomlint/python/oomlint/probe_twins.py"
[[ -f "$work/anywhere/deep/oomlint-$version-x86_64-linux/include/oomlint/trace.h" ]] \
  && pass "tarball: include/oomlint/trace.h for LibTorch programs" || fail "tarball lacks include/oomlint/trace.h"
for bin in bin/oomlint lib/oomlint/liboomlint-cpp.so; do
  extra="$(readelf -d "$work/anywhere/deep/oomlint-$version-x86_64-linux/$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' |
           grep -v -x -E 'libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|ld-linux-x86-64\.so\.2' || true)"
  [[ -z "$extra" ]] && pass "$bin needs only glibc" || fail "$bin needs $extra"
done

# The .deb: no -dev dependency, Clang's builtin headers inside, copyright and changelog.
depends="$(dpkg-deb -f "$deb" Depends)"
[[ "$depends" == "libc6 (>= 2.35)" ]] && pass ".deb depends on: $depends" || fail ".deb depends on: $depends"
contents="$(dpkg-deb -c "$deb")"
for f in ./usr/bin/oomlint ./usr/lib/oomlint/liboomlint-cpp.so ./usr/lib/oomlint/clang/include/stddef.h \
         ./usr/lib/oomlint/python/oomlint/trace.py ./usr/lib/oomlint/python/oomlint/probe.py \
         ./usr/lib/oomlint/python/oomlint/probe_network.py ./usr/lib/oomlint/python/oomlint/probe_twins.py \
         ./usr/lib/oomlint/python/oomlint/probe_twins_blocks.py ./usr/include/oomlint/trace.h ./usr/include/oomlint/trace_run.h ./usr/include/oomlint/trace_symbols.h \
         ./usr/share/doc/oomlint/copyright ./usr/share/doc/oomlint/CHANGELOG.md; do
  grep -q " $f\$" <<<"$contents" || fail ".deb lacks $f"
done
apt-get install --simulate --no-install-recommends "$deb" > "$work/apt.txt" 2>&1 && pass ".deb installable (apt-get --simulate)" \
  || { fail ".deb not installable"; cat "$work/apt.txt" >&2; }

# The self-installing pre-commit hook, offline: its repository pins this version's wheel.
grep -q "\"oomlint==$version\"" packaging/pre-commit/pyproject.toml || fail "packaging/pre-commit pins another oomlint than $version"
hooks="$work/oomlint-pre-commit"
cp -r packaging/pre-commit "$hooks"
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
git -C "$hooks" init -q && git -C "$hooks" add -A && git -C "$hooks" commit -q -m "hooks" && git -C "$hooks" tag "v$version"
user="$work/user"
mkdir -p "$user" && cd "$user" && git init -q
printf 'repos:\n  - repo: %s\n    rev: v%s\n    hooks:\n      - id: oomlint\n' "$hooks" "$version" > .pre-commit-config.yaml
git add .pre-commit-config.yaml && git commit -q --no-verify -m config
# No oomlint on PATH: the hook must bring its own (the wheel, from the local folder only).
export PATH="$(echo "$PATH" | tr ':' '\n' | grep -v -x -F "$build" | paste -sd: -)"
! command -v oomlint >/dev/null || echo "note: an oomlint is on PATH ($(command -v oomlint)); the hook uses its own environment's"
export PRE_COMMIT_HOME="$work/pre-commit-home" PIP_NO_INDEX=1 PIP_FIND_LINKS="$dist /usr/share/python-wheels"
pre-commit install > /dev/null
cp "$root/examples/train.py" train.py
git add train.py
if git commit -q -m leaky > "$work/commit1.txt" 2>&1; then fail "the hook let a commit with findings through"; cat "$work/commit1.txt" >&2
elif grep -q "OOM101" "$work/commit1.txt"; then pass "pre-commit (language: python) blocks a commit with a finding"
else fail "the commit failed without oomlint's findings:"; cat "$work/commit1.txt" >&2; fi
ls "$PRE_COMMIT_HOME"/repo*/py_env-*/bin/oomlint > /dev/null 2>&1 && pass "pre-commit built its own environment with oomlint" \
  || fail "no oomlint in pre-commit's environment"
git rm -q --cached train.py && rm train.py
cp "$root/examples/clean_train.py" clean_train.py
git add clean_train.py
git commit -q -m clean > "$work/commit2.txt" 2>&1 && pass "pre-commit passes a clean commit" \
  || { fail "the hook blocked a clean commit"; cat "$work/commit2.txt" >&2; }

if ((failures)); then echo "dist_test: $failures failure(s)" >&2; exit 1; fi
echo "dist_test: all passed"
