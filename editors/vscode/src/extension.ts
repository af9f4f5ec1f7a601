// The extension's entry point: starts the client, restarts it when the settings that shape it
// change, passes other setting changes to the server, and registers the commands.
import * as vscode from "vscode";
import { DidChangeConfigurationNotification, ExecuteCommandRequest, LanguageClient } from "vscode-languageclient/node";
import { resolveBinary } from "./binary";
import { createClient } from "./client";
import { enabled, pathSetting, restartSettings, serverSettings } from "./settings";

let client: LanguageClient | undefined;
let channel: vscode.LogOutputChannel;
let extensionPath = "";
let pending: Promise<void> = Promise.resolve();

async function stop(): Promise<void> {
  const c = client;
  client = undefined;
  if (c) await c.stop().catch((e) => channel.warn(`stopping the server: ${e}`));
}

async function start(): Promise<void> {
  await stop();
  if (!enabled()) {
    channel.info("oomlint.enable is off: the server is not started");
    return;
  }
  let binary;
  try {
    binary = resolveBinary(pathSetting(), extensionPath, vscode.workspace.workspaceFolders?.[0]?.uri.fsPath);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    channel.error(message);
    void vscode.window.showErrorMessage(`oomlint: ${message}`, "Show logs").then((a) => a && channel.show());
    return;
  }
  channel.info(`starting ${binary.path} server (from ${binary.source})`);
  const c = createClient(binary, channel);
  client = c;
  try {
    await c.start();
  } catch (e) {
    channel.error(`the server did not start: ${e}`);
    if (client === c) client = undefined;
  }
}

/** Runs start/stop one after another, so a burst of setting changes does not start two servers. */
function serialized(step: () => Promise<void>): Promise<void> {
  pending = pending.then(step, step);
  return pending;
}

/** Asks the server to rewrite the active document (`oomlint.applyAutofix` or `oomlint.addNoqa`). */
async function rewriteActiveDocument(serverCommand: string, what: string): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!client || !client.isRunning()) {
    void vscode.window.showWarningMessage("oomlint: the server is not running");
    return;
  }
  if (!editor) {
    void vscode.window.showInformationMessage(`oomlint: open a Python or C++ file to ${what}`);
    return;
  }
  if (editor.document.uri.scheme === "vscode-notebook-cell") {
    void vscode.window.showInformationMessage(`oomlint: the server does not ${what} in notebooks; use each finding's quick fix`);
    return;
  }
  const uri = client.code2ProtocolConverter.asUri(editor.document.uri);
  await client.sendRequest(ExecuteCommandRequest.type, { command: serverCommand, arguments: [{ uri, version: editor.document.version }] });
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  extensionPath = context.extensionPath;
  channel = vscode.window.createOutputChannel("oomlint", { log: true });
  context.subscriptions.push(
    channel,
    vscode.commands.registerCommand("oomlint.fixAllProblems", () => rewriteActiveDocument("oomlint.applyAutofix", "fix all problems")),
    vscode.commands.registerCommand("oomlint.addNoqaToAll", () => rewriteActiveDocument("oomlint.addNoqa", "add noqa to all findings")),
    vscode.commands.registerCommand("oomlint.showLogs", () => channel.show()),
    vscode.commands.registerCommand("oomlint.restart", () => serialized(start)),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (restartSettings.some((s) => e.affectsConfiguration(s))) {
        void serialized(start);
      } else if (e.affectsConfiguration("oomlint") && client?.isRunning()) {
        void client.sendNotification(DidChangeConfigurationNotification.type, { settings: serverSettings() });
      }
    }),
  );
  await serialized(start);
}

export function deactivate(): Promise<void> {
  return serialized(stop);
}
