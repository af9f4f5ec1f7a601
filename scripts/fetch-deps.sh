#!/usr/bin/env bash
# Fetches the pinned npm packages oomlint builds and tests with, and checks each
# tarball against the integrity hash the npm registry publishes for it.
# Nothing fetched here is committed: it lands in .deps/ (git-ignored).
#   tree-sitter-python 0.23.6: generated parser with grammar ABI 14, which
#     Debian 12's libtree-sitter 0.20.7 loads (0.25 does not).
#   @microsoft/sarif-multitool-linux 5.7.0: validates our SARIF output in tests.
#   @action-validator/cli 0.6.0 (+ core 0.6.0, chalk 5.2.0): validates .github/ and action.yml.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
deps="${OOMLINT_DEPS_DIR:-$root/.deps}"
mkdir -p "$deps"

fetch() { # name version integrity dest
  local name="$1" version="$2" integrity="$3" dest="$4"
  if [[ -f "$dest/.integrity" && "$(cat "$dest/.integrity")" == "$integrity" ]]; then
    return 0
  fi
  local tmp; tmp="$(mktemp -d)"
  # npm's own errors (no network, a proxy's certificate, a registry that is not reachable) go to
  # stderr: `--silent` would leave setup.sh failing without a word.
  if ! (cd "$tmp" && npm pack --loglevel=error "$name@$version" >/dev/null); then
    echo "fetch-deps: npm could not fetch $name@$version from $(npm config get registry) (npm's error above;" \
         "behind a TLS-intercepting proxy, set NODE_EXTRA_CA_CERTS to its CA bundle)" >&2
    rm -rf "$tmp"; exit 1
  fi
  local tgz; tgz="$(ls "$tmp"/*.tgz)"
  local got="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
  if [[ "$got" != "$integrity" ]]; then
    echo "fetch-deps: integrity mismatch for $name@$version" >&2
    echo "  expected $integrity" >&2
    echo "  got      $got" >&2
    rm -rf "$tmp"; exit 1
  fi
  rm -rf "$dest"; mkdir -p "$dest"
  tar -xzf "$tgz" -C "$dest" --strip-components=1
  echo "$integrity" > "$dest/.integrity"
  rm -rf "$tmp"
  echo "fetch-deps: $name@$version verified" >&2
}

fetch tree-sitter-python 0.23.6 \
  'sha512-yIM9z0oxKIxT7bAtPOhgoVl6gTXlmlIhue7liFT4oBPF/lha7Ha4dQBS82Av6hMMRZoVnFJI8M6mL+SwWoLD3A==' \
  "$deps/tree-sitter-python"

if [[ "${1:-}" == "--bench" ]]; then
  # Benchmarks only (bench/bench.py): ruff compiled to WebAssembly, the reference linter.
  fetch @astral-sh/ruff-wasm-nodejs 0.17.4 \
    'sha512-pEaJDh/ZUyfWK4w0NzIkF74brXtZyNN9/NCPluSj3Z9GYmjQxG4SqkVCiLUvxZ0baOAPaShR6nUUWubjexzEfA==' \
    "$deps/ruff-wasm-nodejs"
  exit 0
fi

if [[ "${1:-}" != "--grammar-only" ]]; then
  fetch @microsoft/sarif-multitool-linux 5.7.0 \
    'sha512-NxUbpq6ISCWoTQ/NfOYEwEDKq1Heka/rMoJ5R5LMydcAZQX/X7g5mWHcgxDub+0M07LC96tZ5LZHvF1Qy3gjTA==' \
    "$deps/sarif-multitool"
  chmod +x "$deps/sarif-multitool/Sarif.Multitool"
  # The GitHub workflows and action.yml are validated against GitHub's schemas in tests
  # (they cannot run here): action-validator and its one dependency, laid out as node_modules.
  fetch @action-validator/cli 0.6.0 \
    'sha512-Z8TYOK4GqUIpI0UuspUJPB6dhr0niTumhwI5iiZVqFRXm4u05bZawnFKltpvoFUfJg9mHbbIBlleqsRJAgl53Q==' \
    "$deps/action-validator/node_modules/@action-validator/cli"
  fetch @action-validator/core 0.6.0 \
    'sha512-tPglwCr8Mm8SWzwnVewwFmqRx91F0WvMsM0BRAqH4CLalyGndm53Xvp+UcUSzswpk1wkjIDYI7RyEhWMLyPkig==' \
    "$deps/action-validator/node_modules/@action-validator/core"
  fetch chalk 5.2.0 \
    'sha512-ree3Gqw/nazQAPuJJEy+avdl7QfZMcUvmHIKgEZkGL+xOBzRvup5Hxo6LHuMceSxOabuJLJm5Yp/92R9eMmMvA==' \
    "$deps/action-validator/node_modules/chalk"
fi
