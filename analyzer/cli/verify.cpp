#include "cli/verify.h"

#include "cli/probe_run.h"
#include "cli/verify_scale.h"
#include "engine/frontends.h"
#include "facts/facts.h"
#include "facts/sizes.h"
#include "util/bytes.h"
#include "util/executable.h"

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

namespace oomlint {
namespace {

bool executable(const std::string& p) {
  struct stat st {};
  return !p.empty() && ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
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
  // The generic block splits its width over 4 heads: a classifier head's `Linear(48, 5)` is no width for it.
  if (auto w = out.find("width"); w != out.end() && w->second.first % 4 != 0) out.erase(w);
  return out;
}

/// One layer as the probe's `--workload` reads it (runtime_check/probe.h, LayerSpec), with its
/// output shape; null for a kind the probe cannot build.
nlohmann::json layerJson(const LayerSize& l, const std::vector<int64_t>& output) {
  static const std::set<std::string> kinds = {
      "Linear", "ReLU", "GELU", "SiLU", "Tanh", "Sigmoid", "Dropout", "LayerNorm", "Embedding", "Softmax", "LogSoftmax",
      "Conv1d", "Conv2d", "BatchNorm1d", "BatchNorm2d", "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d",
      "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "Flatten", "View", "Select", "TransformerEncoderLayer", "MultiheadAttention",
      "LSTM", "GRU", "RNN", "LSTMCell", "GRUCell", "RNNCell"};
  // The probe runs no checkpoints: what a checkpointed layer keeps would not be what the file does.
  if (!kinds.count(l.kind) || l.checkpointSegment) return nullptr;
  nlohmann::json j = {{"kind", l.kind}};
  if (l.vocabulary) j.update({{"in", l.vocabulary}, {"out", l.outFeatures}});
  else if (l.inFeatures) j.update({{"in", l.inFeatures}, {"out", l.outFeatures ? l.outFeatures : l.inFeatures}});
  static const std::set<std::string> biased = {"Linear", "Conv1d", "Conv2d", "BatchNorm1d", "BatchNorm2d", "LSTM", "GRU", "RNN",
                                                "LSTMCell", "GRUCell", "RNNCell"};
  if (biased.count(l.kind)) j["bias"] = l.bias;
  if (l.kind == "Dropout" || l.kind == "TransformerEncoderLayer" || l.kind == "MultiheadAttention" || l.stacked > 1) j["p"] = l.dropout;
  if (!l.kernel.empty())
    j.update({{"kernel", l.kernel}, {"stride", l.stride}, {"padding", l.padding}, {"dilation", l.dilation}, {"ceil", l.ceilMode}});
  if (l.kind.rfind("Conv", 0) == 0) j.update({{"groups", l.groups}, {"same", l.samePadding}});
  if (l.kind.rfind("Adaptive", 0) == 0) j["size"] = l.view;
  if (l.kind == "Flatten") j.update({{"start", l.startDim}, {"end", l.endDim}});
  if (l.kind == "Select") j.update({{"dim", l.startDim}, {"index", l.selectIndex}});
  if (l.kind == "View") j["size"] = output;  // the target with -1 and the input's dimensions resolved
  if (l.heads) j.update({{"heads", l.heads}, {"ff", l.feedforward}, {"activation", l.activation}});
  if (l.kind == "TransformerEncoderLayer" || l.kind == "MultiheadAttention" || l.stacked > 1 || l.kind == "LSTM" ||
      l.kind == "GRU" || l.kind == "RNN")
    j.update({{"batch_first", l.batchFirst}, {"layers", l.stacked}, {"bidirectional", l.bidirectional}});
  return j;
}

/// A forward call the file states fully (facts/sizes.h), as the probe's `--workload` JSON; the
/// JSON is null when a layer or the dtype is one the probe cannot build (f64).
struct StatedForward {
  NodeId call = kNone;
  nlohmann::json workload;
  std::string basis;
};

/// Every forward call of a Python file, in source order, with its workload where it has one.
std::vector<StatedForward> forwardsOf(const Facts& facts) {
  const Module& m = facts.module();
  std::vector<StatedForward> out;
  for (NodeId e = 0; e < m.exprs.size(); ++e) {
    if (m.expr(e).kind != ExprKind::Call || !facts.isForwardCall(e)) continue;
    StatedForward sf{e, nullptr, {}};
    auto w = facts.sizes().workloadOf(e);
    if (w && (w->dtype == "f32" || w->dtype == "bf16" || w->dtype == "f16")) {
      nlohmann::json layers = nlohmann::json::array();
      bool buildable = true;
      for (size_t i = 0; i < w->layers.size(); ++i) {
        nlohmann::json j = layerJson(w->layers[i], w->shapes[i]);
        if (j.is_null()) buildable = false;
        layers.push_back(j);
      }
      if (buildable) {
        sf.workload = {{"layers", layers}, {"rows", w->rows}, {"shape", w->input}, {"dtype", w->dtype}};
        sf.basis = w->basis;
      }
    }
    out.push_back(std::move(sf));
  }
  return out;
}

/// The forward a finding is about, as an index into `forwards`; SIZE_MAX when none can be told.
/// In order: a forward call inside the finding's span (OOM201 flags the forward itself); the
/// forward a value in the span comes from, directly or through the loss made of it (OOM101's
/// `total += loss`); the nearest forward of the function the finding is in, the one before it
/// first (OOM301's zero_grad before the forward of its step).
/// `index` maps each forward's call to its place in `forwards`.
size_t forwardOfFinding(const Facts& facts, const Finding& f, const std::vector<StatedForward>& forwards,
                        const std::unordered_map<NodeId, size_t>& index) {
  const Module& m = facts.module();
  auto inSpan = [&](NodeId e) { return m.expr(e).span.begin >= f.span.begin && m.expr(e).span.end <= f.span.end; };
  NodeId first = kNone;
  for (const StatedForward& sf : forwards)
    if (inSpan(sf.call)) return index.at(sf.call);
  for (NodeId e = 0; e < m.exprs.size(); ++e) {
    if (!inSpan(e)) continue;
    if (first == kNone) first = e;
    NodeId origin = facts.value(e).origin;
    for (int hop = 0; hop < 3 && origin != kNone && !index.count(origin); ++hop) {
      // A loss's history comes from its input: the forward's output.
      NodeId next = kNone;
      if (m.expr(origin).kind == ExprKind::Call && m.expr(origin).argCount > 0)
        next = facts.value(m.args[m.expr(origin).firstArg].value).origin;
      origin = next == origin ? kNone : next;
    }
    if (origin != kNone && index.count(origin)) return index.at(origin);
  }
  if (first == kNone) return SIZE_MAX;
  size_t before = SIZE_MAX, after = SIZE_MAX;
  for (size_t i = 0; i < forwards.size(); ++i) {
    const Expr& call = m.expr(forwards[i].call);
    if (call.owner != m.expr(first).owner) continue;
    if (call.span.begin <= f.span.begin) before = i;
    else if (after == SIZE_MAX) after = i;
  }
  return before != SIZE_MAX ? before : after;
}

/// Findings that share a probe run: one workload, the codes measured on it.
struct ProbeRun {
  nlohmann::json workload;  // null: the generic workload
  std::string basis;
  std::vector<Finding*> findings;
  std::set<std::string> codes;
};

/// The probe runs a file's findings need. Each finding is measured on the stated network of its
/// own forward; a finding whose forward the file does not state (or is not one the probe can
/// build) gets the generic workload, and one whose forward cannot be told gets the file's first
/// stated network, named in the measurement's workload line either way.
std::vector<ProbeRun> probeRunsOf(FileResult& r, bool stateFromFile) {
  std::vector<ProbeRun> runs;
  auto runFor = [&](const nlohmann::json& workload, const std::string& basis) -> ProbeRun& {
    for (ProbeRun& run : runs)
      if (run.workload == workload) return run;
    return runs.emplace_back(ProbeRun{workload, basis, {}, {}});
  };
  std::unique_ptr<Module> module;
  std::unique_ptr<Facts> facts;
  std::vector<StatedForward> forwards;
  std::unordered_map<NodeId, size_t> index;  // a forward's call -> its place in `forwards`
  const StatedForward* firstStated = nullptr;
  if (stateFromFile && r.lang == Lang::Python) {
    module = parseDocument(r.path, r.source, DocumentLanguage::Python).module;
    if (module) {
      facts = std::make_unique<Facts>(*module);
      forwards = forwardsOf(*facts);
      for (size_t i = 0; i < forwards.size(); ++i) index[forwards[i].call] = i;
      for (const StatedForward& sf : forwards)
        if (!sf.workload.is_null()) {
          firstStated = &sf;
          break;
        }
    }
  }
  for (Finding& f : r.findings) {
    const Rule* rule = findRule(f.code);
    if (!rule || !rule->info().probe) continue;
    const StatedForward* chosen = firstStated;
    if (firstStated) {
      size_t k = forwardOfFinding(*facts, f, forwards, index);
      if (k != SIZE_MAX) chosen = &forwards[k];
    }
    ProbeRun& run = chosen ? runFor(chosen->workload, chosen->basis) : runFor(nullptr, {});
    run.findings.push_back(&f);
    run.codes.insert(f.probe.empty() ? std::string(f.code) : f.probe);
  }
  return runs;
}

/// What a rule's cost is when it is not memory, so its measurement is not read as bytes.
const char* costOf(std::string_view code) {
  if (code == "OOM303") return "correctness";  // the loss scale: same peak, wrong gradients
  if (code == "OOM501" || code == "OOM504" || code == "OOM801" || code == "OOM802") return "time";
  return "memory";
}

}  // namespace

std::string locateProbe(const std::string& hint) {
  if (!hint.empty()) return executable(hint) ? hint : std::string();
  if (const char* env = std::getenv("OOMLINT_PROBE"); env && executable(env)) return env;
  std::string dir = executableDir();
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

namespace {

/// What a probe run measures on: the file's own network (a workload JSON), the --workload file, or
/// sizes read from the source as flags.
struct Workload {
  nlohmann::json stated;           // null unless the file's network
  std::string flags;               // --workload FILE or --batch N ...
  std::string label;               // what the measurement's workload line says
  int64_t batch = 0;               // the stated network's batch
};

Workload workloadOf(const VerifyOptions& opts, const FileResult& r, const ProbeRun& run) {
  Workload w;
  if (!run.workload.is_null()) {
    w.stated = run.workload;
    std::string dtype = w.stated["dtype"].get<std::string>();
    w.label = "shape-faithful: the file's own layers, " + run.basis + ", " +
              (dtype == "bf16" ? "bfloat16" : dtype == "f16" ? "float16" : "float32");
    w.batch = workloadRows(w.stated);
  } else if (!opts.workloadFile.empty()) {
    w.flags = " --workload " + shellQuote(opts.workloadFile);
    w.label = "sizes from " + opts.workloadFile;
  } else {
    for (const auto& [key, v] : sizesFromSource(r.source)) {
      w.flags += " --" + key + " " + std::to_string(v.first);
      w.label += (w.label.empty() ? "" : ", ") + key + "=" + std::to_string(v.first) + " (" + v.second + ")";
    }
    if (w.label.empty()) w.label = "default sizes";
  }
  return w;
}

/// Runs the probe for each of `run`'s codes and attaches what it measured to `run`'s findings,
/// saying on stderr what runs and how long it took. On the CPU, a slow stated network runs at
/// batches of 16, 32 and 64, and its growth and retained bytes are carried to its own batch
/// (verify_scale.h). Returns "" or a warning line.
std::string runProbe(const ProbeCommand& probe, const VerifyOptions& opts, const FileResult& r, ProbeRun& run, bool cpu) {
  Workload w = workloadOf(opts, r, run);
  std::vector<int64_t> points = cpu && !w.stated.is_null() ? cpuRowPoints(w.stated) : std::vector<int64_t>{};
  std::string warnings;
  for (const std::string& code : run.codes) {
    std::vector<MeasuredCost> at;
    bool failed = false;
    for (size_t i = 0; i < std::max<size_t>(points.size(), 1) && !failed; ++i) {
      nlohmann::json stated = points.empty() ? w.stated : withRows(w.stated, points[i]);
      std::cerr << "oomlint: --verify: " << code << " for " << r.path << " on the " << (cpu ? "CPU" : "GPU");
      if (!points.empty()) std::cerr << ", batch " << points[i] << " of " << w.batch;
      std::cerr << " ..." << std::flush;
      auto start = std::chrono::steady_clock::now();
      nlohmann::json doc = invokeProbe(probe, opts, code, stated, w.flags);
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::cerr << (doc.is_null() ? " failed" : " done") << " (" << std::fixed << std::setprecision(1) << seconds << " s)\n";
      std::cerr.unsetf(std::ios::floatfield);
      std::optional<MeasuredCost> m = doc.is_null() ? std::nullopt : measuredFrom(doc, code);
      if (m) at.push_back(*m);
      failed = doc.is_null();
    }
    if (failed) {
      warnings += "--verify: " + probe.name + " failed for " + r.path + " (" + code + ")\n";
      continue;
    }
    if (at.size() != std::max<size_t>(points.size(), 1)) continue;  // the probe does not measure this code
    MeasuredCost m = at.back();
    bool carried = !points.empty() && extrapolateToRows(points, at, w.batch, m);
    m.workload = w.label;
    if (!points.empty()) {
      std::string measuredAt = std::to_string(points[0]) + ", " + std::to_string(points[1]) + " and " + std::to_string(points[2]);
      std::string scaled = std::to_string(w.batch / points.back()) + "x";
      if (carried) {
        m.workload += "; measured on the CPU at batches of " + measuredAt + ": growth and retained bytes carried linearly to its batch of " +
                      std::to_string(w.batch) + " (scaled down " + scaled + "), peaks and time at a batch of " +
                      std::to_string(points.back()) + " (a peak is the largest of several phases, so it is not carried)";
      } else {
        m.workload += "; measured on the CPU at a batch of " + std::to_string(points.back()) + ", not its " + std::to_string(w.batch) +
                      " (scaled down " + scaled + "; the bytes are not linear in the batch, so not carried)";
      }
    }
    for (Finding* f : run.findings)
      if ((f->probe.empty() ? std::string(f->code) : f->probe) == code) {
        MeasuredCost mine = m;
        mine.cost = costOf(f->code);
        f->measured = mine;
      }
  }
  return warnings;
}

/// oomlint-probe where one is found; else, unless --probe named one, its PyTorch twins; else none
/// (an empty command).
ProbeCommand findProbe(const VerifyOptions& opts) {
  ProbeCommand probe;
  if (std::string path = locateProbe(opts.probePath); !path.empty()) {
    probe.shell = shellQuote(path);
    probe.name = "oomlint-probe";
    probe.where = path;
    return probe;
  }
  std::string script = opts.probePath.empty() ? shippedPythonFile("oomlint/probe.py") : std::string();
  if (script.empty()) return probe;
  const char* python = std::getenv("OOMLINT_PYTHON");
  std::string interpreter = python && *python ? python : "python3";
  probe.shell = shellQuote(interpreter) + " " + shellQuote(script);
  probe.name = "the PyTorch twins";
  probe.where = interpreter + " " + script;
  probe.twins = true;
  return probe;
}

}  // namespace

std::string verifyFindings(std::vector<FileResult>& results, const VerifyOptions& opts) {
  const std::string without = "; findings are reported without measurements";
  ProbeCommand probe = findProbe(opts);
  if (probe.shell.empty())
    return "--verify: oomlint-probe not found (build with LibTorch, or pass --probe PATH / set OOMLINT_PROBE)" + without;
  std::string device = probeDevice(probe, opts);
  if (device != "cuda" && device != "cpu")
    return "--verify: " + std::string(probe.twins ? "oomlint-probe not found, and its PyTorch twins" : "oomlint-probe") +
           " cannot run: `" + probe.where + " --which-device` says: " + (device.empty() ? "nothing" : device) +
           (probe.twins ? " (OOMLINT_PYTHON names the Python to run them)" : "") + without;
  if (probe.twins) std::cerr << "oomlint: --verify: no oomlint-probe; measuring with its PyTorch twins (" << probe.where << ")\n";
  bool cpu = device == "cpu";
  std::string warnings;
  for (FileResult& r : results)
    for (ProbeRun& run : probeRunsOf(r, opts.workloadFile.empty())) warnings += runProbe(probe, opts, r, run, cpu);
  return warnings;
}

}  // namespace oomlint
