// Starts `oomlint server` as a language client: which documents it gets, the settings it is
// started with, and the answer to its `workspace/configuration` requests.
import * as vscode from "vscode";
import { DocumentSelector, LanguageClient, LanguageClientOptions, ServerOptions } from "vscode-languageclient/node";
import { ResolvedBinary } from "./binary";
import { cppEnabled, serverSettings } from "./settings";

export const clientId = "oomlint"; // also the prefix of `oomlint.trace.server`, which the client reads

export function documentSelector(withCpp: boolean): DocumentSelector {
  const selector: DocumentSelector = [
    { scheme: "file", language: "python" },
    { scheme: "untitled", language: "python" },
    // Cells of Jupyter notebooks; the server checks each notebook as a whole (notebookDocument/*).
    { notebook: { notebookType: "jupyter-notebook" }, language: "python" },
  ];
  if (withCpp) selector.push({ scheme: "file", language: "cpp" }, { scheme: "file", language: "cuda-cpp" });
  return selector;
}

export function createClient(binary: ResolvedBinary, channel: vscode.LogOutputChannel): LanguageClient {
  const serverOptions: ServerOptions = {
    command: binary.path,
    args: ["server"], // over stdin/stdout; no `transport`, which would add `--stdio`
    options: { cwd: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: documentSelector(cppEnabled()),
    outputChannel: channel,
    traceOutputChannel: channel,
    initializationOptions: { settings: serverSettings() },
    middleware: {
      workspace: {
        // The server asks for the section `oomlint`: answer with the server's names and types
        // (paths expanded, nulls for unset lists) rather than the raw VS Code settings.
        configuration: async (params, token, next) => {
          const answers = await next(params, token);
          if (!Array.isArray(answers)) return answers;
          return params.items.map((item, i) =>
            item.section === "oomlint" ? serverSettings(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined) : answers[i],
          );
        },
      },
    },
  };
  return new LanguageClient(clientId, "oomlint", serverOptions, clientOptions);
}
