// Small helpers that drive VS Code's workbench (code-server) in Chromium through Playwright:
// opening files, reading the Problems panel, running commands. Each waits for what VS Code shows
// rather than sleeping.
"use strict";

const mod = process.platform === "darwin" ? "Meta" : "Control";

/** Waits until `fn` returns a truthy value (polled every 50 ms), or throws `what` after `ms`. */
async function until(fn, what, ms = 30000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function waitForWorkbench(page) {
  await page.waitForSelector(".monaco-workbench .part.statusbar", { timeout: 90000 });
  // The explorer lists the folder once the workspace is loaded.
  await page.waitForSelector(".explorer-folders-view .monaco-list-row", { timeout: 90000 });
}

/** Quick open (Ctrl+P): types `name`, waits for it in the list, and returns a function that
 * presses Enter, so the caller can start a clock just before. */
async function quickOpen(page, name) {
  await page.keyboard.press(`${mod}+P`);
  const input = page.locator(".quick-input-widget .quick-input-box input");
  await input.waitFor({ state: "visible" });
  await input.fill(name);
  await until(
    () => page.evaluate((n) => {
      const row = document.querySelector(".quick-input-list .monaco-list-row.focused");
      return row && (row.getAttribute("aria-label") || row.textContent || "").includes(n);
    }, name),
    `${name} in quick open`,
  );
  return () => page.keyboard.press("Enter");
}

/** Runs a command palette entry by its full title. */
async function runCommand(page, title) {
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget .quick-input-box input");
  await input.waitFor({ state: "visible" });
  await input.fill(`>${title}`);
  await until(
    () => page.evaluate((t) => {
      const row = document.querySelector(".quick-input-list .monaco-list-row.focused");
      return row && (row.getAttribute("aria-label") || "").startsWith(t);
    }, title),
    `"${title}" in the command palette`,
  );
  await page.keyboard.press("Enter");
}

/** Squiggles of the active editor (or notebook cells): how many diagnostics are drawn. */
function squiggles(page, scope) {
  return page.evaluate(
    (s) => document.querySelectorAll(`${s} .squiggly-warning, ${s} .squiggly-error, ${s} .squiggly-info`).length,
    scope,
  );
}

/** The rows the Problems panel draws now, by their index in the list: files, oomlint markers (a row
 * that ends with "oomlint(CODE) [Ln N, Col M]") and others (related information). */
function visibleRows(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll(".markers-panel .monaco-list-row")].map((row) => {
      const text = (row.textContent || "").trim();
      const index = Number(row.getAttribute("data-index"));
      // A file's row reads "7 problems in file train.py of folder ." (also as the sticky row
      // pinned at the top while its markers scroll by).
      const f = / in file (.*) of folder /.exec(row.getAttribute("aria-label") || "");
      if (f) return { index, file: f[1] };
      if (row.classList.contains("monaco-tree-sticky-row")) return { index };
      // The parentheses around the code come from CSS, not the text.
      const m = /oomlint\s*\(?(OOM\d{3})\)?\s*\[\s*Ln (\d+), Col (\d+)\s*\]$/.exec(text);
      return m ? { index, marker: { code: m[1], line: Number(m[2]), col: Number(m[3]), text } } : { index };
    }),
  );
}

/** Every oomlint marker in the Problems panel as {file, code, line, col, text}. Its list draws only
 * the rows in view, so this scrolls it from the top to the bottom and puts the views together. */
async function problems(page) {
  const box = await page.evaluate(() => {
    const row = document.querySelector(".markers-panel .monaco-list-row:not(.monaco-tree-sticky-row)");
    const r = row && row.closest(".monaco-list").getBoundingClientRect();
    return r && { x: r.x, y: r.y, width: r.width, height: r.height };
  });
  if (!box) return [];
  const rows = new Map();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  const atTop = () => page.evaluate(() => Boolean(document.querySelector('.markers-panel .monaco-list-row[data-index="0"]:not(.monaco-tree-sticky-row)')));
  for (let i = 0; i < 100 && !(await atTop()); i++) {
    await page.mouse.wheel(0, -box.height);
    await page.waitForTimeout(30);
  }
  let last = -1, unchanged = 0; // stops when a scroll shows no row further down
  for (let i = 0; i < 200 && unchanged < 2; i++) {
    await page.waitForTimeout(60);
    for (const r of await visibleRows(page)) if (!rows.has(r.index) || r.file !== undefined || r.marker) rows.set(r.index, r);
    const end = Math.max(-1, ...rows.keys());
    unchanged = end <= last ? unchanged + 1 : 0;
    last = end;
    await page.mouse.wheel(0, box.height / 2);
  }
  const out = [];
  let file = "";
  for (const r of [...rows.values()].sort((x, y) => x.index - y.index)) {
    if (r.file !== undefined) file = r.file;
    else if (r.marker) out.push({ file, ...r.marker });
  }
  return out;
}

async function showProblems(page) {
  if (!(await page.locator(".markers-panel").isVisible().catch(() => false))) {
    await runCommand(page, "View: Focus Problems (Errors, Warnings, Infos)");
  }
  await page.waitForSelector(".markers-panel .monaco-list-row", { timeout: 30000 });
}

/** Moves the cursor of the active text editor to line:col (1-based). */
async function goTo(page, line, col) {
  await page.keyboard.press(`${mod}+G`);
  const input = page.locator(".quick-input-widget .quick-input-box input");
  await input.waitFor({ state: "visible" });
  await input.fill(`:${line}:${col}`);
  await page.keyboard.press("Enter");
  await until(
    () => page.evaluate(([l, c]) => {
      const item = [...document.querySelectorAll(".statusbar-item")].find((e) => /Ln \d+, Col \d+/.test(e.textContent || ""));
      return item && item.textContent.includes(`Ln ${l}, Col ${c}`);
    }, [line, col]),
    `the cursor at ${line}:${col}`,
  );
}

/** Waits for the active editor's tab to show unsaved changes (an edit arrived), then saves. */
async function saveWhenEdited(page) {
  await page.waitForSelector(".tabs-container .tab.active.dirty", { timeout: 15000 });
  await page.keyboard.press(`${mod}+S`);
}

module.exports = { mod, until, waitForWorkbench, quickOpen, runCommand, squiggles, problems, showProblems, goTo, saveWhenEdited };
