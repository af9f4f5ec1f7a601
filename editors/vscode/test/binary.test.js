// Unit tests of the extension's binary resolution (src/binary.ts, compiled to out/binary.js by
// package-vsix.sh or `npx tsc -p .`): oomlint.path, else the bundled binary, else PATH.
"use strict";
const test = require("node:test");
const assert = require("node:assert");
const fs = require("fs");
const os = require("os");
const path = require("path");
const { resolveBinary, expandPath } = require("../out/binary.js");

function tree() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "oomlint-binary-"));
  const exe = (p) => {
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, "#!/bin/sh\n");
    fs.chmodSync(p, 0o755);
    return p;
  };
  return { dir, exe };
}

test("the oomlint.path setting wins over the bundled binary", () => {
  const { dir, exe } = tree();
  const bundled = exe(path.join(dir, "ext", "bundled", "bin", "oomlint"));
  const mine = exe(path.join(dir, "mine", "oomlint"));
  assert.deepStrictEqual(resolveBinary(mine, path.join(dir, "ext"), undefined), { path: mine, source: "setting" });
  assert.deepStrictEqual(resolveBinary("", path.join(dir, "ext"), undefined), { path: bundled, source: "bundled" });
});

test("without a bundled binary, oomlint on PATH", () => {
  const { dir, exe } = tree();
  const onPath = exe(path.join(dir, "bin", "oomlint"));
  const saved = process.env.PATH;
  process.env.PATH = `${path.join(dir, "empty")}${path.delimiter}${path.join(dir, "bin")}`;
  try {
    assert.deepStrictEqual(resolveBinary("", path.join(dir, "ext"), undefined), { path: onPath, source: "PATH" });
    process.env.PATH = path.join(dir, "empty");
    assert.throws(() => resolveBinary("", path.join(dir, "ext"), undefined), /no oomlint executable/);
  } finally {
    process.env.PATH = saved;
  }
});

test("a set oomlint.path that is not an executable is an error, not a fallback", () => {
  const { dir, exe } = tree();
  exe(path.join(dir, "ext", "bundled", "bin", "oomlint"));
  fs.writeFileSync(path.join(dir, "plain"), "not executable");
  assert.throws(() => resolveBinary(path.join(dir, "plain"), path.join(dir, "ext"), undefined), /not an executable file/);
  assert.throws(() => resolveBinary(path.join(dir, "missing"), path.join(dir, "ext"), undefined), /not an executable file/);
});

test("oomlint.path expands ${workspaceFolder} and ~", () => {
  const { dir, exe } = tree();
  const inWs = exe(path.join(dir, "tools", "oomlint"));
  assert.deepStrictEqual(resolveBinary("${workspaceFolder}/tools/oomlint", path.join(dir, "ext"), dir), { path: inWs, source: "setting" });
  assert.strictEqual(expandPath("~/x", undefined), path.join(os.homedir(), "x"));
});
