// The LSP server, spoken to over its real stdin/stdout with real JSON-RPC framing.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "engine/engine.h"
#include "test_util.h"
#include "version.h"

namespace fs = std::filesystem;
using nlohmann::json;

using testutil::kLeaky;

namespace {

class LspClient {
 public:
  /// `extra`: one more argument after `server` (clients append `--stdio`).
  explicit LspClient(const char* extra = nullptr) {
    int in[2], out[2];
    EXPECT_EQ(0, ::pipe(in));
    EXPECT_EQ(0, ::pipe(out));
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      ::close(in[1]);
      ::close(out[0]);
      int devnull = ::open("/dev/null", O_WRONLY);
      ::dup2(devnull, 2);
      ::execl(OOMLINT_BINARY, OOMLINT_BINARY, "server", extra, static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    to_ = in[1];
    from_ = out[0];
    ::signal(SIGPIPE, SIG_IGN);
  }
  ~LspClient() {
    ::close(to_);
    ::close(from_);
    if (pid_ > 0 && !waited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  LspClient(const LspClient&) = delete;
  LspClient& operator=(const LspClient&) = delete;

  void raw(const std::string& bytes) {
    size_t off = 0;
    while (off < bytes.size()) {
      ssize_t n = ::write(to_, bytes.data() + off, bytes.size() - off);
      ASSERT_GT(n, 0);
      off += static_cast<size_t>(n);
    }
  }
  static std::string frame(const json& j) {
    std::string body = j.dump();
    return "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  }
  void send(const json& j) { raw(frame(j)); }
  void request(int id, const std::string& method, const json& params) {
    send({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}});
  }
  void notify(const std::string& method, const json& params) {
    send({{"jsonrpc", "2.0"}, {"method", method}, {"params", params}});
  }
  /// Next message, or null after `timeoutMs`.
  json next(int timeoutMs = 10000) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
    for (;;) {
      size_t hdr = buf_.find("\r\n\r\n");
      if (hdr != std::string::npos) {
        size_t len = std::stoul(buf_.substr(buf_.find(':') + 1));
        if (buf_.size() >= hdr + 4 + len) {
          json j = json::parse(buf_.substr(hdr + 4, len));
          buf_.erase(0, hdr + 4 + len);
          return j;
        }
      }
      int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count());
      if (left <= 0) return nullptr;
      pollfd p{from_, POLLIN, 0};
      if (::poll(&p, 1, left) <= 0) return nullptr;
      char chunk[65536];
      ssize_t n = ::read(from_, chunk, sizeof chunk);
      if (n <= 0) return nullptr;
      buf_.append(chunk, static_cast<size_t>(n));
    }
  }
  /// Skips notifications until the response with `id`.
  json response(int id) {
    for (int i = 0; i < 100; ++i) {
      json m = next();
      if (m.is_null()) return m;
      if (m.contains("id") && m["id"] == id) return m;
    }
    return nullptr;
  }
  json diagnosticsFor(const std::string& uri) {
    for (int i = 0; i < 100; ++i) {
      json m = next();
      if (m.is_null()) return m;
      if (m.value("method", "") == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri) return m["params"]["diagnostics"];
    }
    return nullptr;
  }
  void closeInput() {
    ::close(to_);
    to_ = -1;
  }
  int wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    waited_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  void initialize(bool utf8 = false) {
    json caps = utf8 ? json{{"general", {{"positionEncodings", {"utf-8", "utf-16"}}}}} : json::object();
    request(1, "initialize", {{"processId", nullptr}, {"rootUri", nullptr}, {"capabilities", caps}});
    json r = response(1);
    ASSERT_TRUE(r.contains("result"));
    notify("initialized", json::object());
  }

 private:
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  bool waited_ = false;
  std::string buf_;
};

std::string applyEdit(const std::string& text, const json& edit) {
  // Line/character (utf-16 == bytes here: ASCII) to offsets.
  auto offset = [&](const json& pos) {
    size_t off = 0;
    for (int l = 0; l < pos["line"].get<int>(); ++l) off = text.find('\n', off) + 1;
    return off + pos["character"].get<size_t>();
  };
  size_t b = offset(edit["range"]["start"]), e = offset(edit["range"]["end"]);
  return text.substr(0, b) + edit["newText"].get<std::string>() + text.substr(e);
}

}  // namespace

TEST(Lsp, PublishesDiagnosticsAndAppliesQuickFixes) {
  LspClient c;
  c.initialize();
  std::string uri = "file:///tmp/oomlint_lsp_a.py";
  c.notify("textDocument/didOpen", {{"textDocument", {{"uri", uri}, {"languageId", "python"}, {"version", 1}, {"text", kLeaky}}}});
  json diags = c.diagnosticsFor(uri);
  ASSERT_EQ(1u, diags.size());
  EXPECT_EQ("OOM101", diags[0]["code"]);
  EXPECT_EQ("oomlint", diags[0]["source"]);
  EXPECT_EQ(1, diags[0]["severity"]);
  EXPECT_EQ(9, diags[0]["range"]["start"]["line"]);
  EXPECT_EQ(8, diags[0]["range"]["start"]["character"]);
  EXPECT_TRUE(diags[0]["codeDescription"]["href"].is_string());
  EXPECT_EQ("unsafe", diags[0]["data"]["fix"]["applicability"]);

  c.request(2, "textDocument/codeAction",
            {{"textDocument", {{"uri", uri}}}, {"range", diags[0]["range"]}, {"context", {{"diagnostics", diags}}}});
  json actions = c.response(2)["result"];
  ASSERT_GE(actions.size(), 2u);
  EXPECT_EQ("Accumulate `loss.item()` (unsafe)", actions[0]["title"]);
  std::string fixed = applyEdit(kLeaky, actions[0]["edit"]["changes"][uri][0]);
  EXPECT_NE(std::string::npos, fixed.find("total += loss.item()"));
  std::string suppressed = applyEdit(kLeaky, actions[1]["edit"]["changes"][uri][0]);
  EXPECT_NE(std::string::npos, suppressed.find("total += loss  # noqa: OOM101\n"));

  // Incremental edit: the client sends only the changed range; the diagnostic goes away.
  c.notify("textDocument/didChange",
           {{"textDocument", {{"uri", uri}, {"version", 2}}},
            {"contentChanges", json::array({{{"range", actions[0]["edit"]["changes"][uri][0]["range"]}, {"text", "loss.item()"}}})}});
  EXPECT_EQ(0u, c.diagnosticsFor(uri).size());
  // And back: typing the leak again brings it back.
  json range = {{"start", {{"line", 9}, {"character", 17}}}, {"end", {{"line", 9}, {"character", 28}}}};
  c.notify("textDocument/didChange",
           {{"textDocument", {{"uri", uri}, {"version", 3}}}, {"contentChanges", json::array({{{"range", range}, {"text", "loss"}}})}});
  EXPECT_EQ(1u, c.diagnosticsFor(uri).size());

  // Pull diagnostics agree with the pushed ones.
  c.request(3, "textDocument/diagnostic", {{"textDocument", {{"uri", uri}}}});
  json pulled = c.response(3)["result"];
  EXPECT_EQ("full", pulled["kind"]);
  EXPECT_EQ(1u, pulled["items"].size());

  // Hover on the finding: what the rule's GPU probe measured leads, then the documentation, which
  // does not repeat it.
  c.request(4, "textDocument/hover", {{"textDocument", {{"uri", uri}}}, {"position", {{"line", 9}, {"character", 12}}}});
  std::string md = c.response(4)["result"]["contents"]["value"];
  EXPECT_EQ(0u, md.find("**OOM101**")) << md;
  size_t measured = md.find("**Measured cost:** Measured (H200");
  size_t doc = md.find("## What it does");
  EXPECT_NE(std::string::npos, measured) << md;
  EXPECT_NE(std::string::npos, doc) << md;
  EXPECT_LT(measured, doc) << md;
  EXPECT_EQ(std::string::npos, md.find("## Measured cost")) << md;
  EXPECT_NE(std::string::npos, md.find("## References")) << md;  // the sections after it stay

  c.request(5, "shutdown", nullptr);
  EXPECT_TRUE(c.response(5).contains("result"));
  c.notify("exit", nullptr);
  EXPECT_EQ(0, c.wait());
}

TEST(Lsp, HoverSaysTheEstimatedCostWhereTheSizesAreStated) {
  LspClient c;
  c.initialize();
  std::string uri = "file:///tmp/oomlint_lsp_sized.py";
  const char* text =
      "import torch\n"
      "from torch import nn\n"
      "model = nn.Sequential(nn.Linear(64, 128), nn.GELU()).cuda()\n"
      "x = torch.randn(32, 64, device='cuda')\n"
      "outs = []\n"
      "model.eval()\n"
      "for i in range(10):\n"
      "    outs.append(model(x))\n";
  c.notify("textDocument/didOpen", {{"textDocument", {{"uri", uri}, {"languageId", "python"}, {"version", 1}, {"text", text}}}});
  json diags = c.diagnosticsFor(uri);
  ASSERT_FALSE(diags.empty());
  c.request(2, "textDocument/hover", {{"textDocument", {{"uri", uri}}}, {"position", {{"line", 7}, {"character", 6}}}});
  std::string md = c.response(2)["result"]["contents"]["value"];
  EXPECT_NE(std::string::npos, md.find("OOM102"));
  // GELU saves its input, the Linear's output: 32 rows x 128 float32.
  EXPECT_NE(std::string::npos, md.find("**Estimated cost:** +16.0 KiB per iteration")) << md;
  EXPECT_NE(std::string::npos, md.find("line 3"));
  c.request(3, "shutdown", nullptr);
  EXPECT_TRUE(c.response(3).contains("result"));
  c.notify("exit", nullptr);
  EXPECT_EQ(0, c.wait());
}

TEST(Lsp, TheStdioFlagLanguageClientsAppendIsAccepted) {
  // vscode-languageclient starts a stdio server as `oomlint server --stdio`.
  LspClient c("--stdio");
  c.initialize();
  std::string uri = "file:///tmp/oomlint_lsp_stdio.py";
  c.notify("textDocument/didOpen", {{"textDocument", {{"uri", uri}, {"languageId", "python"}, {"version", 1}, {"text", kLeaky}}}});
  json diags = c.diagnosticsFor(uri);
  ASSERT_EQ(1u, diags.size()) << diags.dump();
  EXPECT_EQ("OOM101", diags[0]["code"]);
}

TEST(Lsp, ClientsThatPullGetNoPushedDiagnostics) {
  // A client declaring `textDocument.diagnostic` pulls; pushing too would show each finding
  // twice. It is asked to pull again when findings change without its edit.
  LspClient c;
  json caps = {{"textDocument", {{"diagnostic", {{"dynamicRegistration", false}}}}},
               {"workspace", {{"diagnostics", {{"refreshSupport", true}}}}}};
  c.request(1, "initialize", {{"processId", nullptr}, {"rootUri", nullptr}, {"capabilities", caps}});
  ASSERT_TRUE(c.response(1).contains("result"));
  c.notify("initialized", json::object());
  std::string uri = "file:///tmp/oomlint_lsp_pull.py";
  c.notify("textDocument/didOpen", {{"textDocument", {{"uri", uri}, {"languageId", "python"}, {"version", 1}, {"text", kLeaky}}}});
  c.request(2, "textDocument/diagnostic", {{"textDocument", {{"uri", uri}}}});
  // Messages are answered in order: a push for didOpen would come before the pull's response.
  json pulled;
  for (int i = 0; i < 20 && pulled.is_null(); ++i) {
    json m = c.next();
    ASSERT_FALSE(m.is_null());
    EXPECT_NE(m.value("method", ""), "textDocument/publishDiagnostics") << m.dump();
    if (m.contains("id") && m["id"] == 2) pulled = m["result"];
  }
  ASSERT_EQ(1u, pulled["items"].size());
  EXPECT_EQ("OOM101", pulled["items"][0]["code"]);
  c.notify("workspace/didChangeConfiguration", {{"settings", json::object()}});
  json refresh = c.next();
  ASSERT_FALSE(refresh.is_null());
  EXPECT_EQ(refresh.value("method", ""), "workspace/diagnostic/refresh") << refresh.dump();
  c.send({{"jsonrpc", "2.0"}, {"id", refresh["id"]}, {"result", nullptr}});  // the client's answer: ignored
  c.notify("textDocument/didClose", {{"textDocument", {{"uri", uri}}}});
  c.request(3, "shutdown", nullptr);
  json bye = c.next();
  EXPECT_EQ(bye.value("id", 0), 3) << bye.dump();  // no push for the close either
}

TEST(Lsp, FixAllAndUtf8PositionsOnNonAsciiLines) {
  LspClient c;
  c.initialize(/*utf8=*/true);
  std::string uri = "file:///tmp/oomlint_lsp_b.py";
  std::string src =
      "import torch\n\ndef evaluate(model, loader):\n    model.eval()\n    for x in loader:\n        é = model(x)  # ü\n";
  c.notify("textDocument/didOpen", {{"textDocument", {{"uri", uri}, {"languageId", "python"}, {"version", 1}, {"text", src}}}});
  json diags = c.diagnosticsFor(uri);
  ASSERT_EQ(1u, diags.size());
  EXPECT_EQ("OOM201", diags[0]["code"]);
  EXPECT_EQ(13, diags[0]["range"]["start"]["character"]) << "utf-8: byte column (8 spaces, é is two bytes, \" = \")";
  c.request(2, "textDocument/codeAction",
            {{"textDocument", {{"uri", uri}}}, {"range", diags[0]["range"]}, {"context", {{"diagnostics", diags}, {"only", {"source.fixAll"}}}}});
  json actions = c.response(2)["result"];
  ASSERT_EQ(1u, actions.size());
  EXPECT_EQ("source.fixAll.oomlint", actions[0]["kind"]);
  std::string all = actions[0]["edit"]["changes"][uri][0]["newText"];
  EXPECT_NE(std::string::npos, all.find("    with torch.no_grad():\n        for x in loader:\n"));
}

TEST(Lsp, Utf16ColumnsCountSurrogatePairs) {
  LspClient c;
  c.initialize(/*utf8=*/false);
  std::string uri = "file:///tmp/oomlint_lsp_c.py";
  std::string src = "import torch\n\ndef evaluate(model, loader):\n    model.eval()\n    for x in loader:\n        s = '😀'; y = model(x)\n";
  c.notify("textDocument/didOpen", {{"textDocument", {{"uri", uri}, {"languageId", "python"}, {"version", 1}, {"text", src}}}});
  json diags = c.diagnosticsFor(uri);
  ASSERT_EQ(1u, diags.size());
  // "        s = '😀'; y = " is 8 + 4 + 1 + 2 (surrogate pair) + 1 + 2 + 4 = 22 UTF-16 units.
  EXPECT_EQ(22, diags[0]["range"]["start"]["character"]);
}

TEST(Lsp, ProtocolErrorsAreAnsweredNeverFatal) {
  LspClient c;
  c.request(7, "textDocument/hover", {{"textDocument", {{"uri", "file:///x.py"}}}, {"position", {{"line", 0}, {"character", 0}}}});
  EXPECT_EQ(-32002, c.response(7)["error"]["code"]) << "request before initialize";
  c.initialize();
  c.raw("Content-Length: 9\r\n\r\n{not json");
  json parseErr = c.next();
  EXPECT_EQ(-32700, parseErr["error"]["code"]);
  c.raw("Content-Type: x\r\n\r\n");  // no Content-Length at all
  EXPECT_EQ(-32700, c.next()["error"]["code"]);
  c.request(8, "workspace/frobnicate", json::object());
  EXPECT_EQ(-32601, c.response(8)["error"]["code"]);
  // Two messages in one write, and one message split across writes.
  std::string uri = "file:///tmp/oomlint_lsp_d.py";
  std::string open = LspClient::frame({{"jsonrpc", "2.0"}, {"method", "textDocument/didOpen"},
                                       {"params", {{"textDocument", {{"uri", uri}, {"languageId", "python"}, {"version", 1}, {"text", kLeaky}}}}}});
  std::string pull = LspClient::frame({{"jsonrpc", "2.0"}, {"id", 9}, {"method", "textDocument/diagnostic"}, {"params", {{"textDocument", {{"uri", uri}}}}}});
  c.raw(open + pull.substr(0, 10));
  c.raw(pull.substr(10));
  EXPECT_EQ(1u, c.response(9)["result"]["items"].size());
  // Out-of-range positions are clamped, not trusted.
  c.notify("textDocument/didChange",
           {{"textDocument", {{"uri", uri}, {"version", 2}}},
            {"contentChanges", json::array({{{"range", {{"start", {{"line", 999}, {"character", 5}}}, {"end", {{"line", 1000}, {"character", 0}}}}},
                                             {"text", "\n# appended\n"}}})}});
  c.request(10, "textDocument/diagnostic", {{"textDocument", {{"uri", uri}}}});
  EXPECT_EQ(1u, c.response(10)["result"]["items"].size());
  c.notify("exit", nullptr);
  EXPECT_EQ(1, c.wait()) << "exit without shutdown exits 1";
}

TEST(Lsp, ConfigurationIsReadFromTheWorkspaceAndReloaded) {
  fs::path dir = fs::temp_directory_path() / ("oomlint_lsp_cfg_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  { std::ofstream(dir / "train.py") << kLeaky; }
  LspClient c;
  c.initialize();
  std::string uri = "file://" + (dir / "train.py").string();
  c.notify("textDocument/didOpen", {{"textDocument", {{"uri", uri}, {"languageId", "python"}, {"version", 1}, {"text", kLeaky}}}});
  EXPECT_EQ(1u, c.diagnosticsFor(uri).size());
  { std::ofstream(dir / "pyproject.toml") << "[tool.oomlint]\nignore = [\"OOM101\"]\n"; }
  c.notify("workspace/didChangeWatchedFiles", {{"changes", json::array({{{"uri", "file://" + (dir / "pyproject.toml").string()}, {"type", 1}}})}});
  EXPECT_EQ(0u, c.diagnosticsFor(uri).size());
  fs::remove_all(dir);
}

TEST(Lsp, FuzzerFoundInputsAreAnsweredNotCrashedOn) {
  // Inputs libFuzzer found that crashed the server (fuzz/corpus/lsp/regression-*): a code action
  // request without a usable range read a missing key through a const json.
  for (const auto& e : std::filesystem::directory_iterator(std::string(OOMLINT_SOURCE) + "/fuzz/corpus/lsp")) {
    if (e.path().filename().string().rfind("regression-", 0) != 0) continue;
    LspClient c;
    c.initialize();
    c.raw(testutil::slurp(e.path()));
    c.closeInput();
    while (!c.next(2000).is_null()) {
    }
    int rc = c.wait();
    EXPECT_TRUE(rc == 0 || rc == 1) << e.path() << ": the server died instead of exiting (" << rc << ")";
  }
  LspClient c;
  c.initialize();
  c.request(5, "textDocument/codeAction", {{"textDocument", {{"uri", "file:///nope.py"}}}});
  json r = c.response(5);
  EXPECT_TRUE(r.contains("result") || r.contains("error"));
  c.notify("textDocument/didOpen", {{"textDocument", {{"uri", "file:///t.py"}, {"languageId", "python"}, {"version", 1}, {"text", testutil::kLeaky}}}});
  c.request(6, "textDocument/codeAction", {{"textDocument", {{"uri", "file:///t.py"}}}, {"range", 7}});
  EXPECT_EQ(-32602, c.response(6)["error"]["code"]);
}

TEST(Lsp, CppDocumentsGetDiagnosticsAndNolintQuickFixes) {
  // A LibTorch file: parsed by the C++ front end from the editor's buffer, not from disk.
  const std::string src =
      "#include <torch/torch.h>\n"
      "#include <vector>\n"
      "double train(torch::nn::Linear& model, torch::optim::SGD& opt, std::vector<torch::Tensor>& xs) {\n"
      "  torch::Tensor total = torch::zeros({1});\n"
      "  for (auto& x : xs) {\n"
      "    opt.zero_grad();\n"
      "    auto loss = model(x).pow(2).mean();\n"
      "    loss.backward();\n"
      "    opt.step();\n"
      "    total += loss;\n"
      "  }\n"
      "  return total.item<double>();\n"
      "}\n";
  LspClient c;
  c.initialize();
  std::string uri = "file:///tmp/oomlint_lsp_train.cpp";
  c.notify("textDocument/didOpen", {{"textDocument", {{"uri", uri}, {"languageId", "cpp"}, {"version", 1}, {"text", src}}}});
  json diags = c.diagnosticsFor(uri);
  ASSERT_EQ(1u, diags.size());
  EXPECT_EQ("OOM101", diags[0]["code"]);
  EXPECT_EQ(9, diags[0]["range"]["start"]["line"]);
  c.request(2, "textDocument/codeAction",
            {{"textDocument", {{"uri", uri}}}, {"range", diags[0]["range"]}, {"context", {{"diagnostics", diags}}}});
  json actions = c.response(2)["result"];
  ASSERT_GE(actions.size(), 2u);
  std::string fixed = applyEdit(src, actions[0]["edit"]["changes"][uri][0]);
  EXPECT_NE(std::string::npos, fixed.find("total += loss.item<double>();"));
  std::string suppressed = applyEdit(src, actions[1]["edit"]["changes"][uri][0]);
  EXPECT_NE(std::string::npos, suppressed.find("total += loss;  // NOLINT(OOM101)\n"));
  // Editing the buffer re-analyses it: with the fix typed in, the diagnostic goes away.
  c.notify("textDocument/didChange", {{"textDocument", {{"uri", uri}, {"version", 2}}}, {"contentChanges", json::array({{{"text", fixed}}})}});
  EXPECT_EQ(0u, c.diagnosticsFor(uri).size());
  c.request(3, "shutdown", nullptr);
  EXPECT_TRUE(c.response(3).contains("result"));
  c.notify("exit", nullptr);
  EXPECT_EQ(0, c.wait());
}

TEST(Lsp, IncrementalEditsGiveTheCommandLinesFindings) {
  // The server keeps a Python document as per-statement pieces and re-parses only what an edit
  // touched; whatever the edits, its diagnostics must be the command line's for the same text.
  fs::path dir = fs::temp_directory_path() / ("oomlint_lsp_inc_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string path = (dir / "train.py").string(), uri = "file://" + path;
  std::string text = testutil::slurp(std::string(OOMLINT_EXAMPLES) + "/train.py");
  LspClient c;
  c.initialize();
  c.notify("textDocument/didOpen", {{"textDocument", {{"uri", uri}, {"languageId", "python"}, {"version", 1}, {"text", text}}}});
  // A position past the end of its line means the line's end (LSP 3.17), as the server reads it.
  auto offset = [&](int line, int character) {
    size_t off = 0;
    for (int l = 0; l < line; ++l) off = text.find('\n', off) + 1;
    return std::min(off + character, std::min(text.find('\n', off), text.size()));
  };
  auto expected = [&] {
    std::vector<std::string> out;
    for (const auto& f : oomlint::checkSource(path, text, oomlint::CheckOptions{}).findings)
      out.push_back(std::string(f.code) + ":" + std::to_string(f.span.line));
    return out;
  };
  auto received = [&](const json& diags) {
    std::vector<std::string> out;
    for (const json& d : diags) out.push_back(d["code"].get<std::string>() + ":" + std::to_string(d["range"]["start"]["line"].get<int>() + 1));
    return out;
  };
  std::vector<std::string> first = received(c.diagnosticsFor(uri));
  ASSERT_EQ(expected(), first);
  ASSERT_FALSE(first.empty());
  struct Change {
    int line, ch, endLine, endCh;
    std::string with;
  };
  // Each batch is one didChange; positions refer to the text after the batch's earlier changes.
  std::vector<std::vector<Change>> batches = {
      {{50, 0, 50, 0, "    # a comment\n"}, {62, 0, 62, 0, "        extra = loss * 2\n"}},
      {{48, 0, 48, 0, "x = model(\n"}},              // an unclosed bracket: the rest of the file is inside it
      {{48, 0, 49, 0, ""}},                           // gone again
      {{41, 0, 41, 0, "    "}},                       // indents `def make_loader` into the class above
      {{66, 0, 66, 0, "def helper():\n    return 1\n\n"}, {22, 4, 22, 8, "self"}},  // `def forward` -> `selfforward`
      {{22, 4, 22, 8, "def "}, {41, 0, 41, 4, ""}},  // both undone
      {{0, 0, (int)std::count(text.begin(), text.end(), '\n'), 0, "import torch\nx = torch.ones(3).cuda()\n"}},
  };
  int version = 2;
  for (size_t b = 0; b < batches.size(); ++b) {
    json changes = json::array();
    for (const Change& ch : batches[b]) {
      size_t from = offset(ch.line, ch.ch), to = offset(ch.endLine, ch.endCh);
      text.replace(from, to - from, ch.with);
      changes.push_back({{"range", {{"start", {{"line", ch.line}, {"character", ch.ch}}}, {"end", {{"line", ch.endLine}, {"character", ch.endCh}}}}},
                         {"text", ch.with}});
    }
    c.notify("textDocument/didChange", {{"textDocument", {{"uri", uri}, {"version", version++}}}, {"contentChanges", changes}});
    EXPECT_EQ(expected(), received(c.diagnosticsFor(uri))) << "after batch " << b << ":\n" << text;
  }
  c.request(2, "shutdown", nullptr);
  c.response(2);
  c.notify("exit", nullptr);
  EXPECT_EQ(0, c.wait());
  fs::remove_all(dir);
}

TEST(Lsp, NotebookDocumentsAreCheckedAcrossCellsAndReportedPerCell) {
  LspClient c;

  c.request(1, "initialize", {{"processId", nullptr}, {"rootUri", nullptr}, {"capabilities", json::object()}});
  json init = c.response(1);
  const json& sync = init["result"]["capabilities"]["notebookDocumentSync"];
  EXPECT_EQ(sync["notebookSelector"][0]["notebook"]["notebookType"], "jupyter-notebook");
  EXPECT_EQ(sync["notebookSelector"][0]["cells"][0]["language"], "python");
  c.notify("initialized", json::object());
  // Cell 1 builds the model, cell 2 is markdown, cell 3 trains (and has a shell escape), cell 4 evaluates.
  std::string nb = "file:///tmp/oomlint_lsp_nb.ipynb";
  auto cellUri = [&](int i) { return "vscode-notebook-cell:/tmp/oomlint_lsp_nb.ipynb#cell" + std::to_string(i); };
  std::string setup = "import torch\nmodel = torch.nn.Linear(4, 2)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n";
  std::string train =
      "!nvidia-smi\ntotal = 0\nfor x in [torch.randn(3, 4)]:\n    opt.zero_grad()\n    loss = model(x).sum()\n"
      "    loss.backward()\n    opt.step()\n    total += loss\n";
  std::string evaluate = "model.eval()\nouts = []\nfor x in [torch.randn(3, 4)]:\n    y = model(x)\n";
  json cells = json::array({{{"kind", 2}, {"document", cellUri(1)}}, {{"kind", 1}, {"document", cellUri(2)}},
                            {{"kind", 2}, {"document", cellUri(3)}}, {{"kind", 2}, {"document", cellUri(4)}}});
  json texts = json::array({{{"uri", cellUri(1)}, {"languageId", "python"}, {"version", 1}, {"text", setup}},
                            {{"uri", cellUri(2)}, {"languageId", "markdown"}, {"version", 1}, {"text", "# notes"}},
                            {{"uri", cellUri(3)}, {"languageId", "python"}, {"version", 1}, {"text", train}},
                            {{"uri", cellUri(4)}, {"languageId", "python"}, {"version", 1}, {"text", evaluate}}});
  c.notify("notebookDocument/didOpen",
           {{"notebookDocument", {{"uri", nb}, {"notebookType", "jupyter-notebook"}, {"version", 1}, {"cells", cells}}},
            {"cellTextDocuments", texts}});
  std::map<std::string, json> got;
  for (json m = c.next(); !m.is_null(); m = c.next(400)) {  // what one analysis published
    ASSERT_EQ(m.value("method", ""), "textDocument/publishDiagnostics") << m.dump();
    got[m["params"]["uri"]] = m["params"]["diagnostics"];
  }
  EXPECT_EQ(got[cellUri(1)].size(), 0u);
  ASSERT_EQ(got[cellUri(3)].size(), 1u) << got[cellUri(3)].dump();
  EXPECT_EQ(got[cellUri(3)][0]["code"], "OOM101");
  EXPECT_EQ(got[cellUri(3)][0]["range"]["start"]["line"], 7) << "line 8 of the cell, 0-based";
  EXPECT_EQ(got[cellUri(3)][0]["range"]["start"]["character"], 4);
  ASSERT_EQ(got[cellUri(4)].size(), 1u) << got[cellUri(4)].dump();
  EXPECT_EQ(got[cellUri(4)][0]["code"], "OOM201");

  // Quick fixes and noqa per cell, as edits of that cell's document.
  c.request(2, "textDocument/codeAction",
            {{"textDocument", {{"uri", cellUri(3)}}}, {"range", got[cellUri(3)][0]["range"]}, {"context", {{"diagnostics", got[cellUri(3)]}}}});
  json actions = c.response(2)["result"];
  ASSERT_GE(actions.size(), 2u) << actions.dump();
  EXPECT_NE(std::string::npos, applyEdit(train, actions[0]["edit"]["changes"][cellUri(3)][0]).find("total += loss.item()\n"));
  EXPECT_NE(std::string::npos, applyEdit(train, actions[1]["edit"]["changes"][cellUri(3)][0]).find("total += loss  # noqa: OOM101\n"));

  // An edit in one cell: only that cell's text changes; the finding goes away.
  json range = {{"start", {{"line", 7}, {"character", 17}}}, {"end", {{"line", 7}, {"character", 17}}}};
  c.notify("notebookDocument/didChange",
           {{"notebookDocument", {{"uri", nb}, {"version", 2}}},
            {"change", {{"cells", {{"textContent", json::array({{{"document", {{"uri", cellUri(3)}, {"version", 2}}},
                                                                 {"changes", json::array({{{"range", range}, {"text", ".item()"}}})}}})}}}}}});
  got.clear();
  for (json m = c.next(); !m.is_null(); m = c.next(400)) {  // what one analysis published
    ASSERT_EQ(m.value("method", ""), "textDocument/publishDiagnostics") << m.dump();
    got[m["params"]["uri"]] = m["params"]["diagnostics"];
  }
  ASSERT_EQ(got.count(cellUri(3)), 1u);
  EXPECT_EQ(got[cellUri(3)].size(), 0u) << got[cellUri(3)].dump();
  EXPECT_EQ(got.count(cellUri(4)), 0u) << "a cell whose diagnostics did not change is not re-sent";

  // The leak back, one line lower: the noqa action edits the cell's text as it is now.
  auto editCell3 = [&](int version, json changes) {
    c.notify("notebookDocument/didChange",
             {{"notebookDocument", {{"uri", nb}, {"version", version}}},
              {"change", {{"cells", {{"textContent", json::array({{{"document", {{"uri", cellUri(3)}, {"version", version}}},
                                                                   {"changes", std::move(changes)}}})}}}}}});
    got.clear();
    for (json m = c.next(); !m.is_null(); m = c.next(400)) got[m["params"]["uri"]] = m["params"]["diagnostics"];
  };
  json top = {{"start", {{"line", 0}, {"character", 0}}}, {"end", {{"line", 0}, {"character", 0}}}};
  json item = {{"start", {{"line", 8}, {"character", 17}}}, {"end", {{"line", 8}, {"character", 24}}}};
  json end = {{"start", {{"line", 9}, {"character", 0}}}, {"end", {{"line", 9}, {"character", 0}}}};
  editCell3(20, json::array({{{"range", top}, {"text", "\n"}}, {{"range", item}, {"text", ""}}, {{"range", end}, {"text", "done = True\n"}}}));
  ASSERT_EQ(got[cellUri(3)].size(), 1u) << got[cellUri(3)].dump();
  EXPECT_EQ(got[cellUri(3)][0]["range"]["start"]["line"], 8);
  c.request(20, "textDocument/codeAction",
            {{"textDocument", {{"uri", cellUri(3)}}}, {"range", got[cellUri(3)][0]["range"]}, {"context", {{"diagnostics", got[cellUri(3)]}}}});
  json moved = c.response(20)["result"];
  ASSERT_GE(moved.size(), 2u) << moved.dump();
  EXPECT_NE(std::string::npos,
            applyEdit("\n" + train + "done = True\n", moved[1]["edit"]["changes"][cellUri(3)][0]).find("\n    total += loss  # noqa: OOM101\ndone"))
      << moved[1].dump();
  EXPECT_EQ(moved[1]["edit"]["changes"][cellUri(3)][0]["range"]["start"]["line"], 8) << "the line of the cell's new text";
  json firstLine = {{"start", {{"line", 0}, {"character", 0}}}, {"end", {{"line", 1}, {"character", 0}}}};
  json leak = {{"start", {{"line", 7}, {"character", 17}}}, {"end", {{"line", 7}, {"character", 17}}}};
  json lastLine = {{"start", {{"line", 9}, {"character", 0}}}, {"end", {{"line", 10}, {"character", 0}}}};
  editCell3(21, json::array({{{"range", lastLine}, {"text", ""}}, {{"range", firstLine}, {"text", ""}}, {{"range", leak}, {"text", ".item()"}}}));
  ASSERT_EQ(got.count(cellUri(3)), 1u);
  EXPECT_EQ(got[cellUri(3)].size(), 0u) << got[cellUri(3)].dump();

  // Structure: the setup cell is removed, so cell 4's `model` is no longer a module: no finding.
  c.notify("notebookDocument/didChange",
           {{"notebookDocument", {{"uri", nb}, {"version", 3}}},
            {"change", {{"cells", {{"structure", {{"array", {{"start", 0}, {"deleteCount", 1}}}, {"didClose", json::array({{{"uri", cellUri(1)}}})}}}}}}}});
  got.clear();
  for (json m = c.next(); !m.is_null(); m = c.next(400)) {  // what one analysis published
    ASSERT_EQ(m.value("method", ""), "textDocument/publishDiagnostics") << m.dump();
    got[m["params"]["uri"]] = m["params"]["diagnostics"];
  }
  EXPECT_EQ(got.count(cellUri(1)), 1u) << "the closed cell's diagnostics are cleared";
  EXPECT_EQ(got[cellUri(1)].size(), 0u);
  ASSERT_EQ(got.count(cellUri(4)), 1u);
  EXPECT_EQ(got[cellUri(4)].size(), 0u) << got[cellUri(4)].dump();

  c.notify("notebookDocument/didClose", {{"notebookDocument", {{"uri", nb}}}, {"cellTextDocuments", json::array({{{"uri", cellUri(3)}}, {{"uri", cellUri(4)}}})}});
  EXPECT_EQ(c.diagnosticsFor(cellUri(3)).size(), 0u);
  c.request(5, "shutdown", nullptr);
  EXPECT_TRUE(c.response(5).contains("result"));
  c.notify("exit", nullptr);
  EXPECT_EQ(0, c.wait());
}

TEST(Lsp, EditingAModuleRepublishesTheOpenModulesThatDependOnIt) {
  // utils.evaluate() runs under train.py's no_grad; when an edit of train.py drops the no_grad,
  // the open utils.py is published again with the finding the project now implies.
  fs::path dir = fs::temp_directory_path() / ("oomlint_lsp_project_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::copy(fs::path(OOMLINT_FIXTURES) / "projects" / "eval_helpers_across_modules", dir, fs::copy_options::recursive);
  auto read = [](const fs::path& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  std::string utils = read(dir / "utils.py"), train = read(dir / "train.py");
  std::string utilsUri = "file://" + (dir / "utils.py").string(), trainUri = "file://" + (dir / "train.py").string();
  auto codes = [](const json& diags) {
    std::multiset<std::string> out;
    for (const json& d : diags) out.insert(d["code"].get<std::string>());
    return out;
  };
  LspClient c;
  c.initialize();
  c.notify("textDocument/didOpen", {{"textDocument", {{"uri", utilsUri}, {"languageId", "python"}, {"version", 1}, {"text", utils}}}});
  json first = c.diagnosticsFor(utilsUri);
  ASSERT_TRUE(first.is_array());
  EXPECT_EQ(codes(first), std::multiset<std::string>{"OOM201"});  // run_batches only: evaluate runs under no_grad
  // Fix-all uses the same facts: no safe no_grad wrap of evaluate() (alone it would be one), and
  // run_batches's fix is unsafe (its callers are elsewhere), so there is nothing to fix on save.
  c.request(7, "textDocument/codeAction", {{"textDocument", {{"uri", utilsUri}}},
                                           {"range", {{"start", {{"line", 0}, {"character", 0}}}, {"end", {{"line", 30}, {"character", 0}}}}},
                                           {"context", {{"diagnostics", json::array()}, {"only", {"source.fixAll.oomlint"}}}}});
  json actions = c.response(7);
  ASSERT_TRUE(actions.contains("result"));
  EXPECT_TRUE(actions["result"].empty()) << actions.dump();
  c.notify("textDocument/didOpen", {{"textDocument", {{"uri", trainUri}, {"languageId", "python"}, {"version", 1}, {"text", train}}}});
  ASSERT_TRUE(c.diagnosticsFor(trainUri).is_array());
  std::string edited = train;
  std::string guarded = "    with torch.no_grad():\n        evaluate(model, loader)\n";
  ASSERT_NE(std::string::npos, edited.find(guarded));
  edited.replace(edited.find(guarded), guarded.size(), "    evaluate(model, loader)\n");
  c.notify("textDocument/didChange", {{"textDocument", {{"uri", trainUri}, {"version", 2}}}, {"contentChanges", json::array({{{"text", edited}}})}});
  json again = c.diagnosticsFor(utilsUri);
  ASSERT_TRUE(again.is_array()) << "utils.py was not published again after train.py changed";
  EXPECT_EQ(codes(again), (std::multiset<std::string>{"OOM201", "OOM201"}));
  // Closing train.py unsaved: its file on disk (with the no_grad) stands for it again.
  c.notify("textDocument/didClose", {{"textDocument", {{"uri", trainUri}}}});
  json closed = c.diagnosticsFor(utilsUri);
  ASSERT_TRUE(closed.is_array());
  EXPECT_EQ(codes(closed), std::multiset<std::string>{"OOM201"});
  fs::remove_all(dir);
}

namespace {

/// A client that declares `workspace/configuration` and watcher registration, with `init` as
/// its initializationOptions.
void initializeWith(LspClient& c, const json& init, const json& caps = json::object()) {
  c.request(1, "initialize", {{"processId", nullptr}, {"rootUri", nullptr}, {"capabilities", caps}, {"initializationOptions", init}});
  ASSERT_TRUE(c.response(1).contains("result"));
  c.notify("initialized", json::object());
}

/// The titles of the code actions offered for a document's first diagnostic.
std::vector<std::string> actionTitles(LspClient& c, int id, const std::string& uri, const json& diags, const json& only = nullptr) {
  json context = {{"diagnostics", diags}};
  if (!only.is_null()) context["only"] = only;
  json range = diags.empty() ? json{{"start", {{"line", 0}, {"character", 0}}}, {"end", {{"line", 0}, {"character", 0}}}} : diags[0]["range"];
  c.request(id, "textDocument/codeAction", {{"textDocument", {{"uri", uri}}}, {"range", range}, {"context", context}});
  std::vector<std::string> out;
  json resp = c.response(id);
  EXPECT_TRUE(resp.contains("result")) << resp.dump();
  for (const json& a : resp["result"]) out.push_back(a["title"]);
  return out;
}

/// The next request the server sends the client with `method`.
json serverRequest(LspClient& c, const std::string& method) {
  for (int i = 0; i < 100; ++i) {
    json m = c.next();
    if (m.is_null()) return m;
    if (m.value("method", "") == method && m.contains("id")) return m;
  }
  return nullptr;
}

}  // namespace

TEST(Lsp, EditorSettingsChooseRulesFixesAndSyntaxErrors) {
  LspClient c;
  initializeWith(c, {{"settings", {{"ignore", {"OOM101"}}}}});
  std::string uri = "file:///tmp/oomlint_lsp_settings.py";
  c.notify("textDocument/didOpen", {{"textDocument", {{"uri", uri}, {"languageId", "python"}, {"version", 1}, {"text", kLeaky}}}});
  EXPECT_EQ(0u, c.diagnosticsFor(uri).size()) << "initializationOptions ignore OOM101";
  // Pushed settings, under "oomlint": the rule is back, and its unsafe fix is not offered.
  c.notify("workspace/didChangeConfiguration", {{"settings", {{"oomlint", {{"ignore", nullptr}, {"unsafeFixes", false}}}}}});
  json diags = c.diagnosticsFor(uri);
  ASSERT_EQ(1u, diags.size());
  EXPECT_EQ(std::vector<std::string>{"Suppress OOM101 with `# noqa: OOM101`"}, actionTitles(c, 2, uri, diags));
  c.notify("workspace/didChangeConfiguration", {{"settings", {{"unsafeFixes", true}}}});
  diags = c.diagnosticsFor(uri);
  EXPECT_EQ(2u, actionTitles(c, 3, uri, diags).size()) << "the unsafe fix is offered again";
  // Fix-all off: no source action, though a safe fix exists.
  std::string evalUri = "file:///tmp/oomlint_lsp_settings_eval.py";
  std::string eval = "import torch\n\ndef evaluate(model, loader):\n    model.eval()\n    for x in loader:\n        y = model(x)\n";
  c.notify("textDocument/didOpen", {{"textDocument", {{"uri", evalUri}, {"languageId", "python"}, {"version", 1}, {"text", eval}}}});
  json evalDiags = c.diagnosticsFor(evalUri);
  ASSERT_EQ(1u, evalDiags.size());
  EXPECT_EQ(1u, actionTitles(c, 4, evalUri, evalDiags, {"source.fixAll"}).size());
  c.notify("workspace/didChangeConfiguration", {{"settings", {{"fixAll", false}}}});
  evalDiags = c.diagnosticsFor(evalUri);
  EXPECT_TRUE(actionTitles(c, 5, evalUri, evalDiags, {"source.fixAll"}).empty());
  // Syntax errors shown, then not.
  std::string brokenUri = "file:///tmp/oomlint_lsp_settings_broken.py";
  std::string broken = "import torch\n\ndef f(:\n    pass\n";
  c.notify("textDocument/didOpen", {{"textDocument", {{"uri", brokenUri}, {"languageId", "python"}, {"version", 1}, {"text", broken}}}});
  json brokenDiags = c.diagnosticsFor(brokenUri);
  ASSERT_EQ(1u, brokenDiags.size());
  EXPECT_EQ("OOM000", brokenDiags[0]["code"]);
  c.notify("workspace/didChangeConfiguration", {{"settings", {{"showSyntaxErrors", false}}}});
  EXPECT_EQ(0u, c.diagnosticsFor(brokenUri).size());
  // A setting of the wrong type is said, and changes nothing.
  c.notify("workspace/didChangeConfiguration", {{"settings", {{"select", "OOM101"}}}});
  bool warned = false;
  for (int i = 0; i < 10 && !warned; ++i) {
    json m = c.next();
    if (m.is_null()) break;
    warned = m.value("method", "") == "window/showMessage" && m["params"]["message"].get<std::string>().find("`select`") != std::string::npos;
  }
  EXPECT_TRUE(warned);
}

TEST(Lsp, ConfigurationFilesAndTheEditorTakeTurnsAsPreferred) {
  fs::path dir = fs::temp_directory_path() / ("oomlint_lsp_pref_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  { std::ofstream(dir / "train.py") << kLeaky; }
  { std::ofstream(dir / "pyproject.toml") << "[tool.oomlint]\nignore = [\"OOM101\"]\n"; }
  std::string uri = "file://" + (dir / "train.py").string();
  struct Case {
    json settings;
    size_t diagnostics;
  } cases[] = {
      {json::object(), 0},                                                              // the file's ignore
      {{{"select", {"OOM1"}}}, 1},                                                      // editorFirst: select starts afresh
      {{{"select", {"OOM1"}}, {"configurationPreference", "filesystemFirst"}}, 0},      // the file wins
      {{{"configurationPreference", "editorOnly"}}, 1},                                 // the file is not read
  };
  for (const Case& k : cases) {
    LspClient c;
    initializeWith(c, k.settings);
    c.notify("textDocument/didOpen", {{"textDocument", {{"uri", uri}, {"languageId", "python"}, {"version", 1}, {"text", kLeaky}}}});
    EXPECT_EQ(k.diagnostics, c.diagnosticsFor(uri).size()) << k.settings.dump();
  }
  // `configuration`: one file for every document, wherever it lies.
  { std::ofstream(dir / "team.toml") << "ignore = [\"OOM1\"]\n"; }
  LspClient c;
  initializeWith(c, {{"configuration", (dir / "team.toml").string()}});
  std::string other = "file:///tmp/oomlint_lsp_pref_elsewhere.py";
  c.notify("textDocument/didOpen", {{"textDocument", {{"uri", other}, {"languageId", "python"}, {"version", 1}, {"text", kLeaky}}}});
  EXPECT_EQ(0u, c.diagnosticsFor(other).size());
  fs::remove_all(dir);
}

TEST(Lsp, SettingsAreAskedForWatchersRegisteredAndCommandsRun) {
  json caps = {{"workspace", {{"configuration", true}, {"didChangeWatchedFiles", {{"dynamicRegistration", true}}}}}};
  LspClient c;
  initializeWith(c, json::object(), caps);
  json reg = serverRequest(c, "client/registerCapability");
  ASSERT_FALSE(reg.is_null());
  std::string globs = reg["params"]["registrations"][0]["registerOptions"]["watchers"].dump();
  EXPECT_NE(std::string::npos, globs.find("**/pyproject.toml"));
  EXPECT_NE(std::string::npos, globs.find("**/oomlint.toml"));
  json ask = serverRequest(c, "workspace/configuration");
  ASSERT_FALSE(ask.is_null());
  EXPECT_EQ("oomlint", ask["params"]["items"][0]["section"]);
  std::string uri = "file:///tmp/oomlint_lsp_commands.py";
  c.notify("textDocument/didOpen", {{"textDocument", {{"uri", uri}, {"languageId", "python"}, {"version", 1}, {"text", kLeaky}}}});
  EXPECT_EQ(1u, c.diagnosticsFor(uri).size());
  // The answer arrives after the document opened: it is re-checked with it.
  c.send({{"jsonrpc", "2.0"}, {"id", ask["id"]}, {"result", json::array({{{"ignore", {"OOM101"}}}})}});
  EXPECT_EQ(0u, c.diagnosticsFor(uri).size());
  c.send({{"jsonrpc", "2.0"}, {"id", "unrelated"}, {"result", nullptr}});  // answers it did not ask for are ignored
  c.notify("workspace/didChangeConfiguration", {{"settings", nullptr}});
  json again = serverRequest(c, "workspace/configuration");
  ASSERT_FALSE(again.is_null()) << "an empty change notification makes the server ask";
  EXPECT_EQ(0u, c.diagnosticsFor(uri).size()) << "re-checked with the settings it has until the answer comes";
  c.send({{"jsonrpc", "2.0"}, {"id", again["id"]}, {"result", json::array({{{"ignore", nullptr}}})}});
  EXPECT_EQ(1u, c.diagnosticsFor(uri).size());

  // Commands: add noqa and fix all send the document's new text back as workspace/applyEdit.
  c.request(10, "workspace/executeCommand", {{"command", "oomlint.addNoqa"}, {"arguments", json::array({{{"uri", uri}}})}});
  json edit = serverRequest(c, "workspace/applyEdit");
  ASSERT_FALSE(edit.is_null());
  std::string noqa = edit["params"]["edit"]["changes"][uri][0]["newText"];
  EXPECT_NE(std::string::npos, noqa.find("total += loss  # noqa: OOM101\n"));
  EXPECT_TRUE(c.response(10).contains("result"));
  std::string evalUri = "file:///tmp/oomlint_lsp_commands_eval.py";
  std::string eval = "import torch\n\ndef evaluate(model, loader):\n    model.eval()\n    for x in loader:\n        y = model(x)\n";
  c.notify("textDocument/didOpen", {{"textDocument", {{"uri", evalUri}, {"languageId", "python"}, {"version", 1}, {"text", eval}}}});
  c.request(11, "workspace/executeCommand", {{"command", "oomlint.applyAutofix"}, {"arguments", json::array({{{"uri", evalUri}}})}});
  json fix = serverRequest(c, "workspace/applyEdit");
  ASSERT_FALSE(fix.is_null());
  EXPECT_NE(std::string::npos, fix["params"]["edit"]["changes"][evalUri][0]["newText"].get<std::string>().find("with torch.no_grad():"));
  EXPECT_TRUE(c.response(11).contains("result"));
  // Debug information: version, settings and each open document's configuration.
  c.request(12, "workspace/executeCommand", {{"command", "oomlint.printDebugInformation"}});
  json info = c.response(12);
  ASSERT_TRUE(info["result"].is_string());
  std::string text = info["result"];
  EXPECT_NE(std::string::npos, text.find(std::string("oomlint ") + OOMLINT_VERSION));
  EXPECT_NE(std::string::npos, text.find("\"fixAll\":true"));
  EXPECT_NE(std::string::npos, text.find("/tmp/oomlint_lsp_commands.py: configuration"));
  c.request(13, "workspace/executeCommand", {{"command", "oomlint.noSuchCommand"}});
  EXPECT_TRUE(c.response(13).contains("error"));
}

TEST(Lsp, FixesAreMadeWithTheFilesOwnConfiguration) {
  // A rule the project turns off is neither shown nor fixed, by a quick fix or by fix-all.
  fs::path dir = fs::temp_directory_path() / ("oomlint_lsp_fixcfg_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string eval = "import torch\n\ndef evaluate(model, loader):\n    model.eval()\n    for x in loader:\n        y = model(x)\n";
  { std::ofstream(dir / "eval.py") << eval; }
  std::string uri = "file://" + (dir / "eval.py").string();
  json range = {{"start", {{"line", 5}, {"character", 0}}}, {"end", {{"line", 5}, {"character", 20}}}};
  for (bool off : {false, true}) {
    if (off) { std::ofstream(dir / "pyproject.toml") << "[tool.oomlint]\n[tool.oomlint.per-file-ignores]\n\"eval.py\" = [\"OOM201\"]\n"; }
    LspClient c;
    c.initialize();
    c.notify("textDocument/didOpen", {{"textDocument", {{"uri", uri}, {"languageId", "python"}, {"version", 1}, {"text", eval}}}});
    EXPECT_EQ(off ? 0u : 1u, c.diagnosticsFor(uri).size());
    c.request(2, "textDocument/codeAction", {{"textDocument", {{"uri", uri}}}, {"range", range}, {"context", {{"diagnostics", json::array()}}}});
    json actions = c.response(2)["result"];
    bool fixAll = false, quickFix = false;
    for (const json& a : actions) {
      fixAll |= a["kind"] == "source.fixAll.oomlint";
      quickFix |= a["kind"] == "quickfix" && a["title"].get<std::string>().find("no_grad") != std::string::npos;
    }
    EXPECT_EQ(!off, fixAll) << actions.dump();
    EXPECT_EQ(!off, quickFix) << actions.dump();
  }
  fs::remove_all(dir);
}
