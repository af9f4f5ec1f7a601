#include "lsp/server.h"

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "config/config.h"
#include "engine/engine.h"
#include "engine/frontends.h"
#include "engine/noqa.h"
#include "fix/fix.h"
#include "lsp/document.h"
#include "lsp/notebook_sync.h"
#include "lsp/projects.h"
#include "lsp/settings.h"
#include "lsp/transport.h"
#include "python/incremental.h"
#include "report/report.h"
#include "util/path.h"
#include "version.h"

namespace oomlint::lsp {
namespace {

struct DocSection {
  std::string body;  // the section's text as one paragraph; "" when the documentation has none
  std::string rest;  // the documentation without the section
};

/// Takes the `## title` section out of a rule's Markdown documentation.
DocSection takeSection(std::string_view doc, std::string_view title) {
  std::string heading = "## " + std::string(title) + "\n";
  size_t start = 0;
  if (doc.substr(0, heading.size()) != heading) {
    start = doc.find("\n" + heading);
    if (start == std::string_view::npos) return {"", std::string(doc)};
    ++start;
  }
  size_t bodyStart = start + heading.size();
  size_t end = doc.find("\n## ", bodyStart);
  end = end == std::string_view::npos ? doc.size() : end + 1;
  std::string body;
  for (char c : doc.substr(bodyStart, end - bodyStart)) body += c == '\n' ? ' ' : c;
  while (!body.empty() && body.back() == ' ') body.pop_back();
  return {body, std::string(doc.substr(0, start)) + std::string(doc.substr(end))};
}


using nlohmann::json;

// JSON-RPC / LSP error codes.
constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;
constexpr int kServerNotInitialized = -32002;

class Server final : public NotebookHost {
 public:
  Server(int in, int out) : io_(in, out) {}

  int run() {
    std::string error;
    while (auto body = io_.read(error)) {
      if (!error.empty()) {
        respondError(nullptr, kParseError, error);
        continue;
      }
      json msg = json::parse(*body, nullptr, false);
      if (msg.is_discarded()) {
        respondError(nullptr, kParseError, "malformed JSON");
        continue;
      }
      if (!msg.is_object() || !msg.contains("method") || !msg["method"].is_string()) {
        if (msg.is_object() && msg.contains("id") && !msg.contains("method")) {  // a response to a request of ours
          handleResponse(msg);
          continue;
        }
        respondError(msg.is_object() && msg.contains("id") ? msg["id"] : json(nullptr), kInvalidRequest, "not a JSON-RPC request");
        continue;
      }
      try {
        if (handle(msg)) break;
      } catch (const std::exception& e) {
        if (msg.contains("id")) respondError(msg["id"], kInvalidParams, std::string("invalid params: ") + e.what());
      }
    }
    return shutdown_ ? 0 : 1;
  }

 private:
  Transport io_;
  bool initialized_ = false;
  bool cppErrorShown_ = false;  // the C++ front end's absence is said once, not per keystroke
  bool shutdown_ = false;
  bool utf8_ = false;  // negotiated position encoding
  bool relatedInformation_ = false;  // the client shows Diagnostic.relatedInformation
  // A client that declares pull diagnostics (`textDocument.diagnostic`) asks for them: pushing
  // as well would show every finding twice (VS Code, Neovim >= 0.10). It is told to ask again
  // when findings change without an edit of the document (`workspace/diagnostic/refresh`).
  bool pull_ = false, refreshSupport_ = false;
  int refreshes_ = 0;
  std::map<std::string, std::unique_ptr<Document>> docs_;
  NotebookSync notebooks_{*this};
  Projects projects_;
  int cascade_ = 0;  // how deep analysing one document has led to analysing its importers
  EditorSettings settings_;
  bool configurationRequests_ = false;  // the client answers `workspace/configuration`
  bool watchRegistration_ = false;      // the client registers file watchers when asked
  int requests_ = 0;                    // ids of requests sent to the client

  // ------------------------------------------------------------------ plumbing

  void send(const json& j) { io_.write(j.dump(-1, ' ', false, json::error_handler_t::replace)); }
  void respond(const json& id, const json& result) { send({{"jsonrpc", "2.0"}, {"id", id}, {"result", result}}); }
  void respondError(const json& id, int code, const std::string& message) {
    send({{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}});
  }

  /// Returns true when the server must stop (`exit`).
  bool handle(const json& msg) {
    const std::string method = msg["method"];
    bool isRequest = msg.contains("id");
    json id = isRequest ? msg["id"] : json(nullptr);
    // Non-const on purpose: nlohmann's const operator[] is undefined for a missing key; the
    // non-const one yields null, and a wrong type throws (answered as invalid params).
    json params = msg.value("params", json::object());
    if (!params.is_object()) params = json::object();
    if (method == "exit") return true;
    if (method == "initialize") {
      initialize(id, params);
      return false;
    }
    if (!initialized_) {
      if (isRequest) respondError(id, kServerNotInitialized, "server not initialized");
      return false;
    }
    if (shutdown_ && isRequest) {
      respondError(id, kInvalidRequest, "server is shutting down");
      return false;
    }
    if (method == "initialized") {
      registerWatchers();
      requestConfiguration();
      return false;
    }
    if (method == "$/setTrace" || method == "$/cancelRequest") return false;
    if (method == "shutdown") {
      shutdown_ = true;
      respond(id, nullptr);
    } else if (method == "notebookDocument/didOpen") {
      notebooks_.didOpen(params);
    } else if (method == "notebookDocument/didChange") {
      notebooks_.didChange(params);
    } else if (method == "notebookDocument/didSave") {
      notebooks_.didSave(params);
    } else if (method == "notebookDocument/didClose") {
      notebooks_.didClose(params);
    } else if (method == "textDocument/didOpen") {
      didOpen(params);
    } else if (method == "textDocument/didChange") {
      didChange(params);
    } else if (method == "textDocument/didSave") {
      if (Document* d = find(params)) analyze(*d);  // configuration may have changed with it
    } else if (method == "textDocument/didClose") {
      std::string uri = params["textDocument"]["uri"];
      auto it = docs_.find(uri);
      std::string path = it != docs_.end() && it->second->notebook.empty() ? it->second->path : std::string();
      docs_.erase(uri);
      if (!pull_) notify("textDocument/publishDiagnostics", {{"uri", uri}, {"diagnostics", json::array()}});
      if (isPythonPath(path)) reanalyse(projects_.closed(path));  // its file on disk stands for it again
    } else if (method == "workspace/didChangeWatchedFiles") {
      // Modules changed on disk (a checkout, a save elsewhere): what they export is read again.
      if (params.contains("changes") && params["changes"].is_array())
        for (json& c : params["changes"]) {
          std::string path = uriToPath(c.value("uri", ""));
          bool open = false;
          for (auto& [uri, doc] : docs_) open = open || absolutePath(doc->path) == absolutePath(path);
          if (isPythonPath(path) && !open) projects_.fileChanged(path);
        }
      for (auto& [uri, d] : docs_) analyze(*d);  // configuration is read afresh per analysis
      askToPullAgain();
    } else if (method == "workspace/didChangeConfiguration") {
      // Pushed settings, under "oomlint" or bare; a client that answers `workspace/configuration`
      // is asked for them too (many send an empty notification and expect to be asked).
      if (params.contains("settings") && params["settings"].is_object()) {
        const json& pushed = params["settings"];
        updateSettings(pushed.contains("oomlint") ? pushed["oomlint"] : pushed);
      }
      requestConfiguration();
      for (auto& [uri, d] : docs_) analyze(*d);  // configuration is read afresh per analysis
      askToPullAgain();
    } else if (method == "workspace/executeCommand") {
      respond(id, executeCommand(params));
    } else if (method == "textDocument/diagnostic") {
      Document* d = find(params);
      respond(id, {{"kind", "full"}, {"items", d ? diagnostics(*d) : json::array()}});
    } else if (method == "textDocument/codeAction") {
      respond(id, codeActions(params));
    } else if (method == "textDocument/hover") {
      respond(id, hover(params));
    } else if (isRequest) {
      respondError(id, kMethodNotFound, "method not found: " + method);
    }
    return false;
  }

  void initialize(const json& id, json& params) {
    if (initialized_) {
      respondError(id, kInvalidRequest, "initialize sent twice");
      return;
    }
    utf8_ = false;
    if (params.contains("capabilities") && params["capabilities"].contains("general")) {
      const json& general = params["capabilities"]["general"];
      if (general.contains("positionEncodings") && general["positionEncodings"].is_array())
        for (const json& e : general["positionEncodings"])
          if (e == "utf-8") utf8_ = true;
    }
    relatedInformation_ = false;
    pull_ = refreshSupport_ = false;
    configurationRequests_ = watchRegistration_ = false;
    if (params.contains("initializationOptions") && params["initializationOptions"].is_object()) {
      const json& init = params["initializationOptions"];
      updateSettings(init.contains("settings") && init["settings"].is_object() ? init["settings"] : init);
    }
    if (params.contains("capabilities") && params["capabilities"].is_object()) {
      const json& caps = params["capabilities"];
      if (caps.contains("workspace") && caps["workspace"].is_object()) {
        const json& ws = caps["workspace"];
        configurationRequests_ = ws.value("configuration", false);
        if (ws.contains("didChangeWatchedFiles") && ws["didChangeWatchedFiles"].is_object())
          watchRegistration_ = ws["didChangeWatchedFiles"].value("dynamicRegistration", false);
      }
      if (caps.contains("textDocument") && caps["textDocument"].is_object() && caps["textDocument"].contains("diagnostic") &&
          caps["textDocument"]["diagnostic"].is_object())
        pull_ = true;
      if (caps.contains("workspace") && caps["workspace"].is_object() && caps["workspace"].contains("diagnostics") &&
          caps["workspace"]["diagnostics"].is_object())
        refreshSupport_ = caps["workspace"]["diagnostics"].value("refreshSupport", false);
      for (const char* where : {"publishDiagnostics", "diagnostic"}) {
        if (!caps.contains("textDocument") || !caps["textDocument"].is_object()) break;
        const json& td = caps["textDocument"];
        if (td.contains(where) && td[where].is_object() && td[where].value("relatedInformation", false)) relatedInformation_ = true;
      }
    }
    initialized_ = true;
    respond(id, {{"capabilities",
                  {{"positionEncoding", utf8_ ? "utf-8" : "utf-16"},
                   {"textDocumentSync", {{"openClose", true}, {"change", 2}, {"save", {{"includeText", false}}}}},
                   {"notebookDocumentSync",
                    {{"notebookSelector", json::array({{{"notebook", {{"notebookType", "jupyter-notebook"}}},
                                                        {"cells", json::array({{{"language", "python"}}})}}})},
                     {"save", true}}},
                   {"codeActionProvider", {{"codeActionKinds", json::array({"quickfix", "source.fixAll.oomlint"})}}},
                   {"hoverProvider", true},
                   {"executeCommandProvider", {{"commands", json::array({kApplyFixes, kAddNoqa, kDebugInformation})}}},
                   {"diagnosticProvider", {{"interFileDependencies", false}, {"workspaceDiagnostics", false}}}}},
                 {"serverInfo", {{"name", "oomlint"}, {"version", OOMLINT_VERSION}}}});
  }

  Document* find(json& params) {
    if (!params.contains("textDocument")) return nullptr;
    auto it = docs_.find(params["textDocument"].value("uri", ""));
    return it == docs_.end() ? nullptr : it->second.get();
  }

  // ------------------------------------------------------------------ positions

  /// Byte offset of an LSP position, clamped into the document.
  uint32_t offsetOf(const Document& d, const json& pos) const {
    int64_t line = pos.value("line", int64_t{0}), character = pos.value("character", int64_t{0});
    if (line < 0) line = 0;
    if (character < 0) character = 0;
    const std::string& t = d.text;
    size_t off = 0;
    for (int64_t l = 0; l < line; ++l) {
      size_t nl = t.find('\n', off);
      if (nl == std::string::npos) return static_cast<uint32_t>(t.size());
      off = nl + 1;
    }
    size_t lineEnd = t.find('\n', off);
    if (lineEnd == std::string::npos) lineEnd = t.size();
    if (utf8_) return static_cast<uint32_t>(std::min(off + static_cast<size_t>(character), lineEnd));
    int64_t units = 0;
    size_t i = off;
    while (i < lineEnd && units < character) {
      unsigned char c = static_cast<unsigned char>(t[i]);
      size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
      units += len == 4 ? 2 : 1;
      i += len;
    }
    return static_cast<uint32_t>(std::min(i, lineEnd));
  }

  /// LSP position of a byte offset.
  json positionOf(const std::string& t, uint32_t offset) const {
    offset = std::min<uint32_t>(offset, static_cast<uint32_t>(t.size()));
    size_t lineStart = t.rfind('\n', offset == 0 ? 0 : offset - 1);
    lineStart = (offset == 0 || lineStart == std::string::npos) ? 0 : lineStart + 1;
    if (offset > 0 && t[offset - 1] == '\n') lineStart = offset;
    int64_t line = 0;
    for (size_t i = 0; i < lineStart; ++i) line += t[i] == '\n';
    int64_t character = 0;
    if (utf8_) {
      character = static_cast<int64_t>(offset - lineStart);
    } else {
      size_t i = lineStart;
      while (i < offset) {
        unsigned char c = static_cast<unsigned char>(t[i]);
        size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
        character += len == 4 ? 2 : 1;
        i += len;
      }
    }
    return {{"line", line}, {"character", character}};
  }

  json rangeOf(const std::string& t, uint32_t begin, uint32_t end) const {
    return {{"start", positionOf(t, begin)}, {"end", positionOf(t, end)}};
  }

  // ------------------------------------------------------------------ documents

  void didOpen(json& params) {
    json& td = params["textDocument"];
    auto d = std::make_unique<Document>();
    d->uri = td["uri"];
    d->path = uriToPath(d->uri);
    d->languageId = td.value("languageId", "");
    d->text = td.value("text", "");
    d->version = td.value("version", int64_t{0});
    Document& ref = *d;
    docs_[d->uri] = std::move(d);
    analyze(ref);
  }

  void didChange(json& params) {
    Document* d = find(params);
    if (!d) return;
    d->version = params["textDocument"].value("version", d->version);
    applyChanges(*d, params.value("contentChanges", json::array()));
    analyze(*d);
  }

  // ------------------------------------------------------------------ NotebookHost

  std::map<std::string, std::unique_ptr<Document>>& documents() override { return docs_; }
  json diagnosticsOf(const Document& d) const override { return diagnostics(d); }
  void notify(const std::string& method, const json& params) override {
    send({{"jsonrpc", "2.0"}, {"method", method}, {"params", params}});
  }

  void applyChanges(Document& doc, const json& changes) override {
    Document* d = &doc;
    for (json change : changes) {
      if (!change.is_object()) continue;
      std::string text = change.value("text", "");
      if (!change.contains("range")) {
        d->text = text;
        d->python.reset();
        continue;
      }
      uint32_t start = offsetOf(*d, change["range"]["start"]);
      uint32_t end = std::max(start, offsetOf(*d, change["range"]["end"]));
      d->python.edited(start, end, static_cast<uint32_t>(text.size()));
      d->text.replace(start, end - start, text);
    }
  }

  CheckOptions optionsFor(const std::string& path) override {
    CheckOptions opts;
    try {
      std::string abs = absolutePath(path);
      // Only filesystemFirst asks whether a file applies before the editor's settings do.
      bool fileApplies = settings_.preference == EditorSettings::Preference::FilesystemFirst && !configFor(abs)->file.empty();
      ConfigResolver resolver{settings_.overrides(fileApplies)};
      opts.selection = resolver.selectionFor(*resolver.forDirectory(parentDirectory(abs)), abs);
    } catch (const ConfigError& e) {
      notify("window/showMessage", {{"type", 1}, {"message", std::string("oomlint: ") + e.what()}});
    }
    return opts;
  }

  /// The configuration file's own settings for a document (no editor settings applied).
  static std::shared_ptr<const Config> configFor(const std::string& abs) {
    ConfigResolver plain{CliOverrides{}};
    return plain.forDirectory(parentDirectory(abs));
  }

  // ------------------------------------------------------------------ editor settings and commands

  static constexpr const char* kApplyFixes = "oomlint.applyAutofix";
  static constexpr const char* kAddNoqa = "oomlint.addNoqa";
  static constexpr const char* kDebugInformation = "oomlint.printDebugInformation";

  void updateSettings(const json& s) {
    std::vector<std::string> problems;
    settings_.update(s, problems);
    for (const std::string& p : problems) notify("window/showMessage", {{"type", 2}, {"message", "oomlint: setting " + p}});
  }

  /// Sends a request to the client; its answer reaches handleResponse under `id`.
  void request(const std::string& id, const std::string& method, const json& params) {
    send({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}});
  }

  void requestConfiguration() {
    if (configurationRequests_)
      request("oomlint-configuration-" + std::to_string(++requests_), "workspace/configuration",
              {{"items", json::array({{{"section", "oomlint"}}})}});
  }

  /// Configuration files and Python modules: a change re-reads them and re-checks open documents.
  void registerWatchers() {
    if (!watchRegistration_) return;
    json watchers = json::array();
    for (const char* glob : {"**/pyproject.toml", "**/oomlint.toml", "**/.oomlint.toml", "**/*.py"}) watchers.push_back({{"globPattern", glob}});
    request("oomlint-register-" + std::to_string(++requests_), "client/registerCapability",
            {{"registrations", json::array({{{"id", "oomlint-watched-files"},
                                             {"method", "workspace/didChangeWatchedFiles"},
                                             {"registerOptions", {{"watchers", watchers}}}}})}});
  }

  void handleResponse(const json& msg) {
    if (!msg["id"].is_string()) return;
    std::string id = msg["id"];
    if (id.rfind("oomlint-configuration-", 0) != 0 || !msg.contains("result") || !msg["result"].is_array() || msg["result"].empty())
      return;
    updateSettings(msg["result"][0]);
    for (auto& [uri, d] : docs_) analyze(*d);
    askToPullAgain();
  }

  /// `workspace/executeCommand`: the whole document's new text goes to the client as a
  /// `workspace/applyEdit` request; the debug information is the command's result.
  json executeCommand(json& params) {
    std::string command = params.value("command", "");
    if (command == kDebugInformation) {
      std::string text = debugInformation();
      notify("window/logMessage", {{"type", 3}, {"message", text}});
      return text;
    }
    if (command != kApplyFixes && command != kAddNoqa) throw std::invalid_argument("unknown command " + command);
    if (!params.contains("arguments") || !params["arguments"].is_array())
      throw std::invalid_argument(command + " takes the document: [{\"uri\": ...}]");
    for (json& arg : params["arguments"]) {
      std::string uri = arg.is_object() ? arg.value("uri", "") : arg.is_string() ? arg.get<std::string>() : "";
      auto it = docs_.find(uri);
      if (it == docs_.end() || !it->second->notebook.empty() || !it->second->module) continue;
      Document& d = *it->second;
      CheckOptions co = optionsFor(d.path);
      std::unique_ptr<project::FileView> view = projects_.viewFor(d.path);
      co.project = view.get();
      std::string text;
      if (command == kApplyFixes) {
        FixOutcome out = applyFixes(d.path, d.text, co, FixOptions{});
        if (out.applied > 0) text = out.source;
      } else {
        AddNoqaOutcome out = addNoqaDirectives(d.path, d.text, co);
        if (out.added > 0) text = out.source;
      }
      if (text.empty()) continue;
      json edit = {{"changes", {{d.uri, json::array({{{"range", rangeOf(d.text, 0, static_cast<uint32_t>(d.text.size()))}, {"newText", text}}})}}}};
      request("oomlint-apply-" + std::to_string(++requests_), "workspace/applyEdit",
              {{"label", command == kApplyFixes ? "oomlint: fix all" : "oomlint: add noqa"}, {"edit", edit}});
    }
    return nullptr;
  }

  std::string debugInformation() {
    std::string out = std::string("oomlint ") + OOMLINT_VERSION + " (language server)\n";
    out += "settings: " + settings_.toJson().dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    out += std::string("client: ") + (pull_ ? "pulls" : "is pushed") + " diagnostics, positions in " + (utf8_ ? "utf-8" : "utf-16") +
           (configurationRequests_ ? ", answers workspace/configuration" : "") + (watchRegistration_ ? ", registers file watchers" : "") + "\n";
    out += "open documents: " + std::to_string(docs_.size()) + "\n";
    for (const auto& [uri, d] : docs_) {
      out += "  " + d->path + ": ";
      try {
        std::shared_ptr<const Config> cfg = configFor(absolutePath(d->path));
        out += "configuration " + (cfg->file.empty() ? std::string("(none: defaults)") : cfg->file);
        out += ", rules " + optionsFor(d->path).selection.fingerprint();
      } catch (const ConfigError& e) {
        out += std::string("configuration error: ") + e.what();
      }
      out += ", " + std::to_string(d->findings.size()) + " findings\n";
    }
    return out;
  }

  void analyze(Document& d) {
    if (!d.notebook.empty()) {  // a cell: the notebook is checked as a whole
      notebooks_.cellChanged(d);
      return;
    }
    d.findings.clear();
    d.module.reset();
    DocumentLanguage language = languageOf(d.path, d.languageId);
    if (language == DocumentLanguage::Cpp) {
      // The editor's buffer, parsed as the file on disk would be (its compile_commands.json).
      ParsedDocument doc = parseDocument(d.path, d.text, language);
      d.module = std::move(doc.module);
      if (!doc.skippedReason.empty() && !cppErrorShown_) {
        cppErrorShown_ = true;
        notify("window/showMessage", {{"type", 2}, {"message", "oomlint: " + doc.skippedReason}});
      }
      if (!doc.parseFailure.empty()) {  // Clang could not read it with its flags: said on line 1
        Finding f;
        f.code = kParseErrorCode;
        f.message = doc.parseFailure;
        f.span.line = 1;
        f.severity = Severity::Error;
        d.findings.push_back(std::move(f));
      }
    } else if (language == DocumentLanguage::Python && d.text.find('\0') == std::string::npos) {
      d.module = d.python.model(d.path, d.text, 1, std::move(d.module));  // the per-statement incremental model
    }
    std::vector<std::string> importers;
    if (d.module && language == DocumentLanguage::Python)  // with the rest of its project
      importers = projects_.analyse(d.path, optionsFor(d.path), [&](const CheckOptions& o) { return analyzeModule(*d.module, o); },
                                    d.findings);
    else if (d.module)
      d.findings = analyzeModule(*d.module, optionsFor(d.path));
    if (!pull_) notify("textDocument/publishDiagnostics", {{"uri", d.uri}, {"version", d.version}, {"diagnostics", diagnostics(d)}});
    reanalyse(importers);
  }

  /// A pulling client's findings changed without an edit of theirs (an importer re-analysed, the
  /// configuration or a file on disk changed): it is asked to pull again, when it can be.
  void askToPullAgain() {
    if (!pull_ || !refreshSupport_) return;
    send({{"jsonrpc", "2.0"}, {"id", "oomlint-refresh-" + std::to_string(++refreshes_)}, {"method", "workspace/diagnostic/refresh"}});
  }

  /// Open documents whose answers from the rest of their project changed: analysed and published
  /// again (what they learn may change what they export in turn, a few levels deep).
  void reanalyse(const std::vector<std::string>& paths) {
    if (paths.empty() || cascade_ >= 4) return;
    ++cascade_;
    bool any = false;
    for (const std::string& path : paths)
      for (auto& [uri, doc] : docs_)
        if (doc->notebook.empty() && absolutePath(doc->path) == path) {
          analyze(*doc);
          any = true;
        }
    --cascade_;
    if (any && cascade_ == 0) askToPullAgain();
  }

  json diagnostic(const Document& d, const Finding& f) const {
    uint32_t begin = f.span.begin, end = f.span.end;
    if (f.code == kParseErrorCode || f.code == kIoErrorCode) end = std::max(end, begin);
    int severity = f.severity == Severity::Error ? 1 : f.severity == Severity::Warning ? 2 : 3;
    json diag = {{"range", rangeOf(d.text, begin, end)},
                 {"severity", severity},
                 {"code", std::string(f.code)},
                 {"codeDescription", {{"href", report::ruleUrl(f.code)}}},
                 {"source", "oomlint"},
                 {"message", f.message}};
    if (!f.related.empty() && relatedInformation_) {
      // Only clients that declare `relatedInformation` support get it (LSP 3.17 §publishDiagnostics).
      json rel = json::array();
      for (const Related& r : f.related)
        rel.push_back({{"location", {{"uri", d.uri}, {"range", rangeOf(d.text, r.span.begin, r.span.end)}}}, {"message", r.message}});
      diag["relatedInformation"] = std::move(rel);
    }
    if (f.hasFix) {
      json edits = json::array();
      for (const Edit& e : f.fix.edits) edits.push_back({{"range", rangeOf(d.text, e.begin, e.end)}, {"newText", e.content}});
      diag["data"] = {{"fix", {{"applicability", std::string(applicabilityName(f.fix.applicability))}, {"message", f.fix.message}, {"edits", edits}}}};
    }
    return diag;
  }

  json diagnostics(const Document& d) const {
    json out = json::array();
    for (const Finding& f : d.findings)
      if (settings_.showSyntaxErrors || f.code != kParseErrorCode) out.push_back(diagnostic(d, f));
    return out;
  }

  // ------------------------------------------------------------------ code actions and hover

  json codeActions(json& params) {
    json actions = json::array();
    Document* d = find(params);
    if (!d) return actions;
    if (!d->notebook.empty() && !NotebookSync::cellModule(*d)) return actions;  // a cell that is not text
    uint32_t begin = offsetOf(*d, params["range"]["start"]);
    uint32_t end = offsetOf(*d, params["range"]["end"]);
    std::vector<std::string> only;
    if (params.contains("context") && params["context"].contains("only"))
      for (const json& k : params["context"]["only"]) only.push_back(k);
    auto wants = [&](const std::string& kind) {
      if (only.empty()) return true;
      for (const std::string& o : only)
        if (kind == o || kind.rfind(o + ".", 0) == 0) return true;
      return false;
    };
    if (wants("quickfix")) {
      for (const Finding& f : d->findings) {
        if (f.code == kParseErrorCode || f.code == kIoErrorCode) continue;
        if (f.span.end < begin || f.span.begin > std::max(end, begin)) continue;
        json diag = diagnostic(*d, f);
        if (f.hasFix && !f.fix.edits.empty() && (settings_.unsafeFixes || f.fix.applicability != Applicability::Unsafe)) {
          json edits = json::array();
          for (const Edit& e : f.fix.edits) edits.push_back({{"range", rangeOf(d->text, e.begin, e.end)}, {"newText", e.content}});
          std::string title = f.fix.message + (f.fix.applicability == Applicability::Unsafe ? " (unsafe)" : "");
          actions.push_back({{"title", title},
                             {"kind", "quickfix"},
                             {"diagnostics", json::array({diag})},
                             {"isPreferred", f.fix.applicability == Applicability::Safe},
                             {"edit", {{"changes", {{d->uri, edits}}}}}});
        }
        std::string how = d->module->lang == Lang::Cpp ? "`// NOLINT(" + std::string(f.code) + ")`" : "`# noqa: " + std::string(f.code) + "`";
        actions.push_back({{"title", "Suppress " + std::string(f.code) + " with " + how},
                           {"kind", "quickfix"},
                           {"diagnostics", json::array({diag})},
                           {"edit", {{"changes", {{d->uri, json::array({noqaEdit(*d, f)})}}}}}});
      }
    }
    if (settings_.fixAll && wants("source.fixAll.oomlint") && d->notebook.empty() && d->module && !d->findings.empty()) {
      FixOptions fo;
      // The settings and project facts the diagnostics were made with.
      CheckOptions co = optionsFor(d->path);
      std::unique_ptr<project::FileView> view = projects_.viewFor(d->path);
      co.project = view.get();
      FixOutcome out = applyFixes(d->path, d->text, co, fo);
      if (out.applied > 0)
        actions.push_back({{"title", "Fix all safe oomlint findings"},
                           {"kind", "source.fixAll.oomlint"},
                           {"edit", {{"changes", {{d->uri, json::array({{{"range", rangeOf(d->text, 0, static_cast<uint32_t>(d->text.size()))},
                                                                          {"newText", out.source}}})}}}}}});
    }
    return actions;
  }

  /// Appends `# noqa: CODE` (C++: `// NOLINT(CODE)`) to the finding's line, or adds the code to
  /// a directive of the same kind already there.
  json noqaEdit(const Document& d, const Finding& f) const {
    const Module& m = *d.module;
    const bool cpp = m.lang == Lang::Cpp;
    for (const NoqaDirective& dir : collectNoqa(m)) {
      if (dir.fileLevel || dir.line != f.span.line || dir.all || dir.scope != NoqaDirective::Scope::Line) continue;
      if (cpp != dir.nolint) continue;
      std::string codes;
      for (const std::string& c : dir.codes) codes += (codes.empty() ? "" : ", ") + c;
      codes += (codes.empty() ? "" : ", ") + std::string(f.code);
      return {{"range", rangeOf(d.text, dir.begin, dir.end)}, {"newText", cpp ? "NOLINT(" + codes + ")" : "# noqa: " + codes}};
    }
    uint32_t lineEnd = f.span.line < m.lineStarts.size() ? m.lineStarts[f.span.line] : static_cast<uint32_t>(d.text.size());
    while (lineEnd > 0 && lineEnd > m.lineStarts[f.span.line - 1] && (d.text[lineEnd - 1] == '\n' || d.text[lineEnd - 1] == '\r')) --lineEnd;
    return {{"range", rangeOf(d.text, lineEnd, lineEnd)},
            {"newText", cpp ? "  // NOLINT(" + std::string(f.code) + ")" : "  # noqa: " + std::string(f.code)}};
  }

  /// The finding, what it costs (this file's estimate, then what the rule's GPU probe measured)
  /// and the rule's documentation: the costs lead, as they are what a reader weighs first.
  json hover(json& params) {
    Document* d = find(params);
    if (!d) return nullptr;
    uint32_t at = offsetOf(*d, params["position"]);
    for (const Finding& f : d->findings) {
      if (at < f.span.begin || at > f.span.end) continue;
      const Rule* r = findRule(f.code);
      std::string md = "**" + std::string(f.code) + "** " + f.message + "\n\n";
      if (f.estimated.present)
        md += "**Estimated cost:** " + f.estimated.summary() + " = " + f.estimated.formula + ". Sizes from " + f.estimated.basis + ".\n\n";
      if (r) {
        DocSection measured = takeSection(r->info().doc, "Measured cost");
        if (!measured.body.empty()) md += "**Measured cost:** " + measured.body + "\n\n---\n\n";
        md += measured.rest;
      }
      return {{"contents", {{"kind", "markdown"}, {"value", md}}}, {"range", rangeOf(d->text, f.span.begin, f.span.end)}};
    }
    return nullptr;
  }
};

}  // namespace

std::string uriToPath(const std::string& uri) {
  std::string p = uri.rfind("file://", 0) == 0 ? uri.substr(7) : uri;
  std::string out;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == '%' && i + 2 < p.size() && std::isxdigit(static_cast<unsigned char>(p[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(p[i + 2]))) {
      out += static_cast<char>(std::stoi(p.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += p[i];
    }
  }
  return out;
}

int runServer(int in, int out) {
  Server s(in, out);
  return s.run();
}

}  // namespace oomlint::lsp
