// Static cost estimates (rules/estimates.h over facts/sizes.h): each probe's workload, written as
// Python code states it (bench/estimates/), is estimated within 10% of what the H200 measured;
// the examples' estimates are pinned; an unknown size means no estimate, in every format.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/engine.h"
#include "test_util.h"

using nlohmann::json;

namespace {

const std::string kRoot = OOMLINT_SOURCE;

const oomlint::Finding* findingWith(const oomlint::FileResult& r, std::string_view code) {
  for (const oomlint::Finding& f : r.findings)
    if (f.code == code) return &f;
  return nullptr;
}

oomlint::FileResult check(const std::string& source) {
  return oomlint::checkSource("estimate_case.py", source, oomlint::CheckOptions{});
}

/// The estimate of the only finding of `code` in `source`; fails the test when there is no finding.
oomlint::EstimatedCost estimateOf(const std::string& source, std::string_view code) {
  oomlint::FileResult r = check(source);
  const oomlint::Finding* f = findingWith(r, code);
  EXPECT_NE(nullptr, f) << "no " << code << " in:\n" << source;
  return f ? f->estimated : oomlint::EstimatedCost{};
}

const char* kHead =
    "import torch\n"
    "from torch import nn\n"
    "import torch.nn.functional as F\n";

}  // namespace

TEST(Estimates, EachProbeWorkloadIsEstimatedWithinTenPercentOfTheH200Measurement) {
  std::ifstream in(kRoot + "/runtime_check/results/h200.json");
  std::stringstream ss;
  ss << in.rdbuf();
  json h200 = json::parse(ss.str());
  struct Case {
    const char* code;
    const char* measure;  // EstimatedCost::measure
    const char* metric;   // the probe's metric, anti minus fix
  };
  const Case cases[] = {
      {"OOM101", "growth", "growth_bytes_per_step"}, {"OOM102", "growth", "growth_bytes_per_step"},
      {"OOM103", "growth", "growth_bytes_per_step"}, {"OOM105", "retained", "retained_bytes"},
      {"OOM201", "peak", "peak_bytes"},              {"OOM301", "peak", "peak_bytes"},
  };
  for (const Case& c : cases) {
    std::string lower = c.code;
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    oomlint::FileResult r = oomlint::checkFile(kRoot + "/bench/estimates/" + lower + ".py", oomlint::CheckOptions{});
    const oomlint::Finding* f = findingWith(r, c.code);
    ASSERT_NE(nullptr, f) << c.code;
    ASSERT_TRUE(f->estimated.present) << c.code << ": " << f->message;
    EXPECT_EQ(c.measure, f->estimated.measure) << c.code;
    double measured = -1;
    for (const json& p : h200["probes"])
      if (p["code"] == c.code) measured = p["anti"][c.metric].get<double>() - p["fix"][c.metric].get<double>();
    ASSERT_GT(measured, 0) << c.code << " measured nothing to compare with";
    double error = std::fabs(f->estimated.bytes - measured) / measured;
    EXPECT_LE(error, 0.10) << c.code << ": estimated " << f->estimated.bytes << " vs measured " << measured;
  }
}

TEST(Estimates, TheExamplesEstimatesArePinned) {
  // examples/sized_mlp.py states every size; the other examples take their model or data as
  // parameters, so none of their findings has an estimate.
  std::vector<std::string> got;
  for (const char* file : {"train.py", "grad_accum.py", "clean_train.py", "sized_mlp.py"}) {
    oomlint::FileResult r = oomlint::checkFile(kRoot + "/examples/" + file, oomlint::CheckOptions{});
    for (const oomlint::Finding& f : r.findings)
      if (f.estimated.present)
        got.push_back(std::string(file) + ":" + std::to_string(f.span.line) + " " + std::string(f.code) + " " +
                      std::to_string(static_cast<int64_t>(f.estimated.bytes)) + " " + f.estimated.measure);
  }
  // By hand: P = 512·2048+2048 + 2048·2048+2048 + 2048+1 = 5,249,025 float32 parameters;
  // batches of 4096 rows, in eval mode (dropout is the identity). The stored forward saves the
  // two ReLU outputs, 4096·2048·4 bytes each. Its peak with grad is at the second ReLU (first
  // ReLU's output kept, the second Linear's output, the second ReLU's: 96 MiB), under no_grad
  // two consecutive activations (64 MiB).
  std::vector<std::string> pinned = {
      "sized_mlp.py:36 OOM301 20996100 peak",
      "sized_mlp.py:45 OOM102 67108864 growth",
      "sized_mlp.py:45 OOM201 33554432 peak",
  };
  EXPECT_EQ(pinned, got);
  // The training loop's `epoch_loss += loss` is OOM101, but its backward frees the activations:
  // no estimate.
  oomlint::FileResult r = oomlint::checkFile(kRoot + "/examples/sized_mlp.py", oomlint::CheckOptions{});
  const oomlint::Finding* acc = findingWith(r, "OOM101");
  ASSERT_NE(nullptr, acc);
  EXPECT_FALSE(acc->estimated.present);
  EXPECT_EQ(std::string::npos, acc->message.find("estimated"));
}

TEST(Estimates, TheExamplesEstimatesAgreeWithTheH200WithinTenPercent) {
  // bench/estimates/measure_sized_mlp.py measured each cost on the H200 with PyTorch, the
  // anti-pattern against its fix at the example's batch.
  std::ifstream in(kRoot + "/runtime_check/results/h200-sized-mlp.json");
  std::stringstream ss;
  ss << in.rdbuf();
  json measured = json::parse(ss.str())["costs_by_batch"]["4096"];
  oomlint::FileResult r = oomlint::checkFile(kRoot + "/examples/sized_mlp.py", oomlint::CheckOptions{});
  int compared = 0;
  for (const oomlint::Finding& f : r.findings) {
    if (!f.estimated.present) continue;
    ASSERT_TRUE(measured.contains(std::string(f.code))) << f.code << " has an estimate but no measurement";
    const json& m = measured[std::string(f.code)];
    EXPECT_EQ(m["measure"].get<std::string>(), f.estimated.measure) << f.code;
    double delta = m["delta"].get<double>();
    EXPECT_LE(std::fabs(f.estimated.bytes - delta) / delta, 0.10) << f.code << ": " << f.estimated.bytes << " vs " << delta;
    ++compared;
  }
  EXPECT_EQ(3, compared);
}

TEST(Estimates, AModuleClassIsSizedFromItsConstructorArgumentsAndForwardChain) {
  std::string src = std::string(kHead) +
                    "class Net(nn.Module):\n"
                    "    def __init__(self, width, hidden=1024):\n"
                    "        super().__init__()\n"
                    "        self.fc1 = nn.Linear(width, hidden)\n"
                    "        self.fc2 = nn.Linear(hidden, width, bias=False)\n"
                    "    def forward(self, x):\n"
                    "        x = F.gelu(self.fc1(x))\n"
                    "        return torch.tanh(self.fc2(x))\n"
                    "model = Net(256).cuda().half()\n"
                    "x = torch.randn(8, 16, 256, device='cuda', dtype=torch.float16)\n"
                    "outs = []\n"
                    "model.eval()\n"
                    "for i in range(10):\n"
                    "    outs.append(model(x))\n";
  // 128 rows. Saved: fc1's output (GELU saves its input) 128·1024·2, GELU's output (fc2 saves
  // its input) 128·1024·2, tanh's output 128·256·2, which the stored output is.
  oomlint::EstimatedCost e = estimateOf(src, "OOM102");
  ASSERT_TRUE(e.present);
  EXPECT_DOUBLE_EQ(128.0 * 1024 * 2 * 2, e.bytes);
  EXPECT_NE(std::string::npos, e.basis.find("line 13"));
  oomlint::EstimatedCost g = estimateOf(src, "OOM201");
  ASSERT_TRUE(g.present);
  // With grad the peak is at tanh: fc1's and GELU's outputs kept (2·256 KiB), fc2's output
  // (tanh's input, 64 KiB) and tanh's (64 KiB); under no_grad fc1's + GELU's outputs (2·256 KiB).
  EXPECT_DOUBLE_EQ(128.0 * 256 * 2 * 2, g.bytes);
}

TEST(Estimates, AnUnknownSizeMeansNoEstimate) {
  std::string loop =
      "outs = []\n"
      "model.eval()\n"
      "for i in range(10):\n"
      "    outs.append(model(x))\n";
  std::string sized = "model = nn.Sequential(nn.Linear(64, 64), nn.GELU()).cuda()\n";
  std::string input = "x = torch.randn(4, 64, device='cuda')\n";
  // The positive twin of every case below.
  ASSERT_TRUE(estimateOf(kHead + sized + input + loop, "OOM102").present);
  const std::pair<const char*, std::string> cases[] = {
      {"a width from the command line",
       "import sys\nW = int(sys.argv[1])\nmodel = nn.Sequential(nn.Linear(W, 64), nn.ReLU()).cuda()\n" + input},
      {"a layer that needs spatial sizes", "model = nn.Sequential(nn.Conv2d(3, 64, 3), nn.ReLU()).cuda()\n" + input},
      {"layers from a list", "layers = [nn.Linear(64, 64), nn.ReLU()]\nmodel = nn.Sequential(*layers).cuda()\n" + input},
      {"a batch size from a config", sized + "x = torch.randn(cfg.batch, 64, device='cuda')\n"},
      {"an input whose width does not chain", sized + "x = torch.randn(4, 32, device='cuda')\n"},
      {"two dtypes on the module's path", sized + "if fast:\n    model.half()\nelse:\n    model.double()\n" + input},
      {"a constant bound twice", "B = 4\nif big:\n    B = 64\n" + sized + "x = torch.randn(B, 64, device='cuda')\n"},
      {"a LayerNorm over another width", "model = nn.Sequential(nn.Linear(64, 64), nn.LayerNorm(32)).cuda()\n" + input},
      {"bf16 and f16 on the module's path", sized + "if fast:\n    model.half()\nelse:\n    model.bfloat16()\n" + input},
  };
  // The twins of the LayerNorm and dtype cases, sized.
  EXPECT_TRUE(estimateOf(kHead + std::string("model = nn.Sequential(nn.Linear(64, 64), nn.LayerNorm(64)).cuda()\n") + input + loop,
                         "OOM102").present);
  EXPECT_TRUE(estimateOf(kHead + sized + "if fast:\n    model.half()\nelse:\n    model.half()\n" + input + loop, "OOM102").present);
  for (const auto& [what, setup] : cases) {
    oomlint::FileResult r = check(kHead + setup + loop);
    const oomlint::Finding* f = findingWith(r, "OOM102");
    ASSERT_NE(nullptr, f) << what;
    EXPECT_FALSE(f->estimated.present) << what << ": " << f->estimated.summary();
    EXPECT_EQ(std::string::npos, f->message.find("estimated")) << what;
  }
  // A forward with control flow is not one chain: no network.
  std::string branchy = std::string(kHead) +
                        "class Net(nn.Module):\n"
                        "    def __init__(self):\n"
                        "        super().__init__()\n"
                        "        self.fc = nn.Linear(64, 64)\n"
                        "    def forward(self, x):\n"
                        "        if x.sum() > 0:\n"
                        "            x = self.fc(x)\n"
                        "        return self.fc(x)\n"
                        "model = Net().cuda()\n" +
                        input + loop;
  EXPECT_FALSE(estimateOf(branchy, "OOM102").present);
}

TEST(Estimates, JsonSarifAndTheCacheCarryTheEstimate) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / "oomlint_estimates_cli";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(kRoot + "/examples/sized_mlp.py", dir / "sized_mlp.py");
  std::string bin = std::string(OOMLINT_BINARY);
  std::string base = "cd " + dir.string() + " && " + bin + " check --exit-zero sized_mlp.py ";
  for (int run = 0; run < 2; ++run) {  // the second run reads the results cache
    ASSERT_EQ(0, testutil::sh(base + "--output-format json > out.json"));
    json out = json::parse(testutil::slurp(dir / "out.json"));
    int estimated = 0;
    for (const json& f : out) {
      if (f["estimated"].is_null()) continue;
      ++estimated;
      EXPECT_GT(f["estimated"]["bytes"].get<int64_t>(), 0);
      EXPECT_FALSE(f["estimated"]["formula"].get<std::string>().empty());
      EXPECT_NE(std::string::npos, f["estimated"]["basis"].get<std::string>().find("line"));
      EXPECT_NE(std::string::npos, f["message"].get<std::string>().find("(estimated " + f["estimated"]["summary"].get<std::string>() + ")"));
    }
    EXPECT_EQ(3, estimated) << "run " << run;
  }
  EXPECT_TRUE(fs::exists(dir / ".oomlint_cache"));
  ASSERT_EQ(0, testutil::sh(base + "--output-format sarif > out.sarif"));
  json sarif = json::parse(testutil::slurp(dir / "out.sarif"));
  int withProperty = 0;
  for (const json& r : sarif["runs"][0]["results"])
    if (r.contains("properties") && r["properties"].contains("estimated")) {
      ++withProperty;
      const json& e = r["properties"]["estimated"];
      EXPECT_GT(e["bytes"].get<int64_t>(), 0);
      std::string measure = e["measure"];
      EXPECT_TRUE(measure == "growth" || measure == "peak") << measure;
    }
  EXPECT_EQ(3, withProperty);
  fs::remove_all(dir);
}

TEST(Estimates, ANotebooksBasisNamesCellsAndTheirLines) {
  // The sizes come from cells 2 and 3 (cell 1 is markdown): the basis says so in the notebook's
  // own terms, as its findings' locations do.
  json nb = {{"nbformat", 4}, {"nbformat_minor", 5}, {"metadata", {{"kernelspec", {{"language", "python"}, {"name", "python3"}}}}}};
  auto code = [](const std::string& src) {
    return json{{"cell_type", "code"}, {"execution_count", nullptr}, {"metadata", json::object()}, {"outputs", json::array()}, {"source", src}};
  };
  nb["cells"] = json::array({json{{"cell_type", "markdown"}, {"metadata", json::object()}, {"source", "# sizes"}},
                             code(std::string(kHead) + "model = nn.Sequential(nn.Linear(64, 64), nn.GELU()).cuda()\n"),
                             code("\nx = torch.randn(4, 64, device='cuda')\n"),
                             code("outs = []\nmodel.eval()\nfor i in range(10):\n    outs.append(model(x))\n")});
  oomlint::FileResult r = oomlint::checkSource("sized.ipynb", nb.dump(1), oomlint::CheckOptions{});
  const oomlint::Finding* f = findingWith(r, "OOM102");
  ASSERT_NE(nullptr, f);
  ASSERT_TRUE(f->estimated.present);
  EXPECT_NE(std::string::npos, f->estimated.basis.find("`nn.Sequential(nn.Linear(64, 64), nn.GELU())` at cell 2, line 4")) << f->estimated.basis;
  EXPECT_NE(std::string::npos, f->estimated.basis.find("at cell 3, line 2")) << f->estimated.basis;
  EXPECT_EQ(std::string::npos, f->estimated.basis.find("at line")) << f->estimated.basis;
}
