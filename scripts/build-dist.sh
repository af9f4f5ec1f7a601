#!/usr/bin/env bash
# Builds what users install without building: from one portable build (OOMLINT_PORTABLE: only
# glibc's shared libraries), in OUTDIR (default dist/):
#   oomlint-X.Y.Z-py3-none-manylinux_2_NN_x86_64.whl   pip install; oomlint on PATH, C++ included
#   oomlint-X.Y.Z-x86_64-linux.tar.gz                  the same files, relocatable (bin/, lib/oomlint/)
#   oomlint_X.Y.Z_amd64.deb                            apt-get install ./oomlint_X.Y.Z_amd64.deb
#   oomlint-X.Y.Z-linux-x64.vsix                       the VS Code extension with the same binaries
#                                                      (editors/vscode; needs npm and Node.js 20+)
# It fails when a binary needs a shared library other than glibc's, or a glibc newer than
# OOMLINT_MAX_GLIBC (default 2.35: Ubuntu 22.04, Debian 12 and newer).
# Needs what `scripts/setup.sh --user` installs, plus dpkg-dev for the .deb.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out="$(mkdir -p "${1:-dist}" && cd "${1:-dist}" && pwd)"
build="${OOMLINT_DIST_BUILD:-$root/build-dist}"
max_glibc="${OOMLINT_MAX_GLIBC:-2.35}"
version="$(sed -n 's/^project(oomlint VERSION \([0-9][0-9.]*\).*/\1/p' CMakeLists.txt)"
[[ -n "$version" ]] || { echo "build-dist: no version in CMakeLists.txt" >&2; exit 1; }

bash scripts/fetch-deps.sh --grammar-only
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOOMLINT_PORTABLE=ON \
  -DOOMLINT_BUILD_TESTS=OFF -DOOMLINT_RUNTIME_CHECK=OFF >/dev/null
cmake --build "$build"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
stage="$work/oomlint-$version-x86_64-linux"
cmake --install "$build" --prefix "$stage" --strip >/dev/null
cp README.md "$stage/"

# Only glibc's libraries, and no symbol newer than the floor.
floor="2.0"
allowed=" libc.so.6 libm.so.6 libdl.so.2 libpthread.so.0 librt.so.1 ld-linux-x86-64.so.2 "
for bin in "$stage/bin/oomlint" "$stage/lib/oomlint/liboomlint-cpp.so"; do
  [[ -f "$bin" ]] || continue
  while read -r lib; do
    [[ "$allowed" == *" $lib "* ]] || { echo "build-dist: $(basename "$bin") needs $lib, not only glibc" >&2; exit 1; }
  done < <(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  need="$(objdump -T "$bin" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -1)"
  floor="$(printf '%s\n%s\n' "$floor" "$need" | sort -V | tail -1)"
done
if [[ "$(printf '%s\n%s\n' "$floor" "$max_glibc" | sort -V | tail -1)" != "$max_glibc" ]]; then
  echo "build-dist: the binaries need glibc $floor, above OOMLINT_MAX_GLIBC=$max_glibc" >&2; exit 1
fi
echo "glibc floor: $floor"

tar -C "$work" --owner=0 --group=0 --numeric-owner -czf "$out/oomlint-$version-x86_64-linux.tar.gz" "$(basename "$stage")"
/usr/bin/env python3 scripts/make_wheel.py "$stage" "$version" "$floor" "$out" >/dev/null
if command -v dpkg-shlibdeps >/dev/null 2>&1; then
  (cd "$build" && cpack -G DEB -B "$out" >/dev/null && rm -rf "$out/_CPack_Packages")
else
  echo "build-dist: dpkg-dev is not installed, no .deb" >&2
fi
if command -v npm >/dev/null 2>&1; then
  rc=0
  bash editors/vscode/package-vsix.sh "$stage" "$out" "$version" >/dev/null || rc=$?
  ((rc == 3)) && echo "build-dist: no Node.js 20 or newer, no .vsix" >&2
  ((rc == 0 || rc == 3)) || exit "$rc"
else
  echo "build-dist: npm is not installed, no .vsix" >&2
fi
ls -l "$out"
