// Lints every .py file under the given folders with ruff compiled to WebAssembly (its default
// rules, one thread), the way bench/bench.py compares oomlint with ruff. Prints files, lines and
// diagnostics on stderr; exits 0.
//   node bench/ruff_wasm.js DIR...
const fs = require("fs");
const path = require("path");
const ruff = require(path.join(__dirname, "..", ".deps", "ruff-wasm-nodejs"));

function* pythonFiles(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* pythonFiles(p);
    else if (entry.isFile() && p.endsWith(".py")) yield p;
  }
}

const workspace = new ruff.Workspace(ruff.Workspace.defaultSettings(), ruff.PositionEncoding.Utf8);
let files = 0, lines = 0, diagnostics = 0;
for (const root of process.argv.slice(2)) {
  for (const file of pythonFiles(root)) {
    const text = fs.readFileSync(file, "utf8");
    files += 1;
    lines += text.split("\n").length;
    diagnostics += workspace.check(text).length;
  }
}
console.error(`ruff-wasm ${ruff.Workspace.version()}: ${files} files, ${lines} lines, ${diagnostics} diagnostics`);
