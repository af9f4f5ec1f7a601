// The extension's settings, and the object the server reads them from (analyzer/lsp/settings.cpp:
// `select`, `ignore`, `extendSelect`, `configuration`, `configurationPreference`, `fixAll`,
// `unsafeFixes`, `showSyntaxErrors`). The server takes the same object three ways: as
// `initializationOptions.settings`, in `workspace/didChangeConfiguration`, and as the answer to
// `workspace/configuration` for the section `oomlint`.
import * as vscode from "vscode";
import { expandPath } from "./binary";

export interface ServerSettings {
  select: string[] | null;
  ignore: string[] | null;
  extendSelect: string[] | null;
  configuration: string | null;
  configurationPreference: string;
  fixAll: boolean;
  unsafeFixes: boolean;
  showSyntaxErrors: boolean;
}

/** Settings that decide how the server is started: a change restarts it. */
export const restartSettings = ["oomlint.enable", "oomlint.path", "oomlint.cpp.enable"];

function list(config: vscode.WorkspaceConfiguration, key: string): string[] | null {
  const v = config.get<unknown>(key);
  return Array.isArray(v) && v.every((c) => typeof c === "string") ? (v as string[]) : null;
}

export function serverSettings(scope?: vscode.ConfigurationScope): ServerSettings {
  const config = vscode.workspace.getConfiguration("oomlint", scope);
  const folder = scope instanceof vscode.Uri ? vscode.workspace.getWorkspaceFolder(scope) : vscode.workspace.workspaceFolders?.[0];
  const configuration = config.get<string | null>("configuration") ?? null;
  return {
    select: list(config, "select"),
    ignore: list(config, "ignore"),
    extendSelect: list(config, "extendSelect"),
    configuration: configuration ? expandPath(configuration, folder?.uri.fsPath) : null,
    configurationPreference: config.get<string>("configurationPreference") ?? "editorFirst",
    fixAll: config.get<boolean>("fixAll") ?? true,
    unsafeFixes: config.get<boolean>("unsafeFixes") ?? true,
    showSyntaxErrors: config.get<boolean>("showSyntaxErrors") ?? true,
  };
}

export function enabled(): boolean {
  return vscode.workspace.getConfiguration("oomlint").get<boolean>("enable") ?? true;
}

export function cppEnabled(): boolean {
  return vscode.workspace.getConfiguration("oomlint").get<boolean>("cpp.enable") ?? true;
}

export function pathSetting(): string {
  return vscode.workspace.getConfiguration("oomlint").get<string>("path") ?? "";
}
