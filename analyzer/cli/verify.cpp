#include "cli/verify.h"

#include "engine/frontends.h"
#include "facts/facts.h"
#include "facts/sizes.h"
#include "util/bytes.h"

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <vector>

namespace oomlint {
namespace {

bool executable(const std::string& p) {
  struct stat st {};
  return !p.empty() && ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

std::string selfDir() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return {};
  std::string p(buf, static_cast<size_t>(n));
  return p.substr(0, p.rfind('/'));
}


/// Sizes the flagged code states: `batch_size=32`, `nn.Linear(512, 2048)`, `% 8 == 0`, `vocab_size = 50257`.
std::map<std::string, std::pair<long, std::string>> sizesFromSource(const std::string& src) {
  std::map<std::string, std::pair<long, std::string>> out;
  std::smatch m;
  auto first = [&](const std::regex& re, const char* key, int group, const char* what) {
    if (std::regex_search(src, m, re)) {
      long v = std::strtol(m[group].str().c_str(), nullptr, 10);
      if (v > 0 && v < (1L << 24) && !out.count(key)) out[key] = {v, what};
    }
  };
  first(std::regex(R"(batch_size\s*=\s*(\d+))"), "batch", 1, "batch_size literal");
  first(std::regex(R"(Linear\(\s*(\d+)\s*,\s*(\d+))"), "width", 2, "nn.Linear width");
  first(std::regex(R"(%\s*(\d+)\s*==\s*0)"), "accum", 1, "accumulation `% k == 0`");
  first(std::regex(R"((?:accum\w*|gradient_accumulation_steps)\s*=\s*(\d+))"), "accum", 1, "accumulation steps literal");
  first(std::regex(R"((?:seq_len|max_len|block_size|max_seq_len|seq_length)\s*=\s*(\d+))"), "seq", 1, "sequence length literal");
  first(std::regex(R"(vocab(?:_size)?\s*=\s*(\d+))"), "vocab", 1, "vocabulary literal");
  return out;
}

/// One layer as the probe's `--workload` reads it (runtime_check/probe.h, LayerSpec), with its
/// output shape; null for a kind the probe cannot build.
nlohmann::json layerJson(const LayerSize& l, const std::vector<int64_t>& output) {
  static const std::set<std::string> kinds = {
      "Linear", "ReLU", "GELU", "SiLU", "Tanh", "Sigmoid", "Dropout", "LayerNorm", "Embedding", "Softmax", "LogSoftmax",
      "Conv1d", "Conv2d", "BatchNorm1d", "BatchNorm2d", "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d",
      "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "Flatten", "View", "TransformerEncoderLayer", "MultiheadAttention",
      "LSTM", "GRU", "RNN"};
  if (!kinds.count(l.kind)) return nullptr;
  nlohmann::json j = {{"kind", l.kind}};
  if (l.vocabulary) j.update({{"in", l.vocabulary}, {"out", l.outFeatures}});
  else if (l.inFeatures) j.update({{"in", l.inFeatures}, {"out", l.outFeatures ? l.outFeatures : l.inFeatures}});
  if (l.kind == "Linear" || l.kind.rfind("Conv", 0) == 0 || l.kind.rfind("BatchNorm", 0) == 0) j["bias"] = l.bias;
  if (l.kind == "Dropout" || l.kind == "TransformerEncoderLayer" || l.kind == "MultiheadAttention" || l.stacked > 1) j["p"] = l.dropout;
  if (!l.kernel.empty())
    j.update({{"kernel", l.kernel}, {"stride", l.stride}, {"padding", l.padding}, {"dilation", l.dilation}, {"ceil", l.ceilMode}});
  if (l.kind.rfind("Conv", 0) == 0) j.update({{"groups", l.groups}, {"same", l.samePadding}});
  if (l.kind.rfind("Adaptive", 0) == 0) j["size"] = l.view;
  if (l.kind == "Flatten") j.update({{"start", l.startDim}, {"end", l.endDim}});
  if (l.kind == "View") j["size"] = output;  // the target with -1 and the input's dimensions resolved
  if (l.heads) j.update({{"heads", l.heads}, {"ff", l.feedforward}, {"activation", l.activation}});
  if (l.kind == "TransformerEncoderLayer" || l.kind == "MultiheadAttention" || l.stacked > 1 || l.kind == "LSTM" ||
      l.kind == "GRU" || l.kind == "RNN")
    j.update({{"batch_first", l.batchFirst}, {"layers", l.stacked}, {"bidirectional", l.bidirectional}});
  return j;
}

/// The probe workload a Python file states: the layers, input rows and dtype of its first forward
/// whose sizes are all known (facts/sizes.h), as `--workload` JSON; null when there is none.
/// Layers the probe cannot build, and dtypes it has no name for (f64), fall back to the generic
/// workload.
nlohmann::json statedWorkload(const FileResult& r, std::string& basis) {
  if (r.lang != Lang::Python) return nullptr;
  ParsedDocument doc = parseDocument(r.path, r.source, DocumentLanguage::Python);
  if (!doc.module) return nullptr;
  Facts facts(*doc.module);
  const Module& m = *doc.module;
  for (NodeId e = 0; e < m.exprs.size(); ++e) {
    if (m.expr(e).kind != ExprKind::Call || !facts.isForwardCall(e)) continue;
    auto w = facts.sizes().workloadOf(e);
    if (!w || (w->dtype != "f32" && w->dtype != "bf16" && w->dtype != "f16")) continue;
    nlohmann::json layers = nlohmann::json::array();
    bool buildable = true;
    for (size_t i = 0; i < w->layers.size(); ++i) {
      nlohmann::json j = layerJson(w->layers[i], w->shapes[i]);
      if (j.is_null()) buildable = false;
      layers.push_back(j);
    }
    if (!buildable) continue;
    basis = w->basis;
    return {{"layers", layers}, {"rows", w->rows}, {"shape", w->input}, {"dtype", w->dtype}};
  }
  return nullptr;
}

/// What a rule's cost is when it is not memory, so its measurement is not read as bytes.
const char* costOf(std::string_view code) {
  if (code == "OOM303") return "correctness";  // the loss scale: same peak, wrong gradients
  if (code == "OOM501" || code == "OOM504" || code == "OOM801" || code == "OOM802") return "time";
  return "memory";
}

std::string shellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string locateProbe(const std::string& hint) {
  if (!hint.empty()) return executable(hint) ? hint : std::string();
  if (const char* env = std::getenv("OOMLINT_PROBE"); env && executable(env)) return env;
  std::string dir = selfDir();
  for (const std::string& c : {dir + "/oomlint-probe", dir + "/runtime_check/oomlint-probe"})
    if (executable(c)) return c;
  if (const char* path = std::getenv("PATH")) {
    std::string p = path;
    size_t start = 0;
    while (start <= p.size()) {
      size_t end = p.find(':', start);
      std::string d = p.substr(start, end == std::string::npos ? std::string::npos : end - start);
      if (executable(d + "/oomlint-probe")) return d + "/oomlint-probe";
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  return {};
}

std::string verifyFindings(std::vector<FileResult>& results, const VerifyOptions& opts) {
  std::string probe = locateProbe(opts.probePath);
  if (probe.empty())
    return "--verify: oomlint-probe not found (build with LibTorch, or pass --probe PATH / set OOMLINT_PROBE); findings are "
           "reported without measurements";
  std::string warnings;
  for (FileResult& r : results) {
    std::set<std::string> codes;
    for (const Finding& f : r.findings) {
      const Rule* rule = findRule(f.code);
      if (rule && rule->info().probe) codes.insert(std::string(f.code));
    }
    if (codes.empty()) continue;
    std::string cmd = shellQuote(probe) + " --device " + shellQuote(opts.device) + " --steps " + std::to_string(opts.steps) +
                      " --json -";
    std::string workload, basis, statedFile;
    nlohmann::json stated = opts.workloadFile.empty() ? statedWorkload(r, basis) : nlohmann::json(nullptr);
    if (!stated.is_null()) {
      // Shape-faithful: the probes that run an MLP run this file's own network on its input.
      // In $TMPDIR as other tools' temporary files are (a test gives each run its own).
      const char* tmp = std::getenv("TMPDIR");
      std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/oomlint-workload-XXXXXX";
      std::vector<char> path(pattern.begin(), pattern.end());
      path.push_back('\0');
      int fd = ::mkstemp(path.data());
      if (fd >= 0) {
        std::string text = stated.dump();
        bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
        ::close(fd);
        statedFile = path.data();
        if (!written) stated = nullptr;
      } else {
        stated = nullptr;
      }
    }
    if (!stated.is_null()) {
      cmd += " --workload " + shellQuote(statedFile);
      std::string dtype = stated["dtype"].get<std::string>();
      workload = "shape-faithful: the file's own layers, " + basis + ", " +
                 (dtype == "bf16" ? "bfloat16" : dtype == "f16" ? "float16" : "float32");
    } else if (!opts.workloadFile.empty()) {
      cmd += " --workload " + shellQuote(opts.workloadFile);
      workload = "sizes from " + opts.workloadFile;
    } else {
      for (const auto& [key, v] : sizesFromSource(r.source)) {
        cmd += " --" + key + " " + std::to_string(v.first);
        workload += (workload.empty() ? "" : ", ") + key + "=" + std::to_string(v.first) + " (" + v.second + ")";
      }
      if (workload.empty()) workload = "default sizes";
    }
    for (const std::string& c : codes) cmd += " " + c;
    cmd += " 2>/dev/null";
    FILE* p = ::popen(cmd.c_str(), "r");
    if (!p) {
      if (!statedFile.empty()) ::unlink(statedFile.c_str());
      continue;
    }
    std::string out;
    std::array<char, 4096> buf{};
    while (size_t n = std::fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
    int rc = ::pclose(p);
    if (!statedFile.empty()) ::unlink(statedFile.c_str());
    nlohmann::json doc = nlohmann::json::parse(out, nullptr, false);
    if (rc != 0 || doc.is_discarded()) {
      warnings += "--verify: oomlint-probe failed for " + r.path + "\n";
      continue;
    }
    std::string device = doc["provenance"].value("device", "");
    for (Finding& f : r.findings) {
      for (const nlohmann::json& pr : doc["probes"]) {
        if (pr.value("code", "") != f.code) continue;
        MeasuredCost m;
        m.device = device;
        m.workload = workload;
        m.note = pr.value("note", "");
        m.cost = costOf(f.code);
        if (pr.value("available", false) && pr.contains("anti") && pr.contains("fix")) {
          m.present = true;
          m.peakAnti = pr["anti"].value("peak_bytes", int64_t{0});
          m.peakFix = pr["fix"].value("peak_bytes", int64_t{0});
          m.retainedAnti = pr["anti"].value("retained_bytes", int64_t{0});
          m.retainedFix = pr["fix"].value("retained_bytes", int64_t{0});
          m.growthAnti = pr["anti"].value("growth_bytes_per_step", 0.0);
          m.growthFix = pr["fix"].value("growth_bytes_per_step", 0.0);
          m.msAnti = pr["anti"].value("ms_per_step", 0.0);
          m.msFix = pr["fix"].value("ms_per_step", 0.0);
        }
        f.measured = m;
      }
    }
  }
  return warnings;
}

}  // namespace oomlint
