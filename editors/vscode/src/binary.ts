// Which oomlint executable the extension starts: the `oomlint.path` setting when it is set, else
// the binary bundled in a platform-specific .vsix, else the first `oomlint` on PATH.
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

export interface ResolvedBinary {
  path: string;
  source: "setting" | "bundled" | "PATH";
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** `~` and `${workspaceFolder}` in a path from the settings. */
export function expandPath(p: string, workspaceFolder: string | undefined): string {
  let out = p.replace(/\$\{workspaceFolder\}/g, workspaceFolder ?? "");
  if (out === "~" || out.startsWith("~/")) out = path.join(os.homedir(), out.slice(1));
  return out;
}

/** The bundled binary: `bundled/bin/oomlint`, beside `bundled/lib/oomlint/` (the C++ front end). */
export function bundledBinary(extensionPath: string): string | undefined {
  const exe = path.join(extensionPath, "bundled", "bin", process.platform === "win32" ? "oomlint.exe" : "oomlint");
  return isExecutable(exe) ? exe : undefined;
}

export function onPath(name: string, envPath = process.env.PATH ?? ""): string | undefined {
  for (const dir of envPath.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/**
 * Resolves the executable, or throws with what was tried. A set `oomlint.path` that is not an
 * executable is an error rather than a silent fallback: the user asked for that binary.
 */
export function resolveBinary(setting: string, extensionPath: string, workspaceFolder: string | undefined): ResolvedBinary {
  if (setting.trim() !== "") {
    const p = expandPath(setting.trim(), workspaceFolder);
    if (isExecutable(p)) return { path: p, source: "setting" };
    const onPathToo = !p.includes(path.sep) ? onPath(p) : undefined;
    if (onPathToo) return { path: onPathToo, source: "setting" };
    throw new Error(`oomlint.path is ${JSON.stringify(setting)}, which is not an executable file`);
  }
  const bundled = bundledBinary(extensionPath);
  if (bundled) return { path: bundled, source: "bundled" };
  const found = onPath("oomlint");
  if (found) return { path: found, source: "PATH" };
  throw new Error("no oomlint executable: this extension has none bundled, oomlint.path is not set and there is no oomlint on PATH");
}
