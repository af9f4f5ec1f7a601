// The runtime check: the committed H200 results cover every probe, and on CPU (Debian's LibTorch)
// each probe's numbers obey what must hold physically. No exact byte counts are asserted.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <sys/wait.h>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>

#include "cli/verify_scale.h"
#include "engine/engine.h"
#include "test_paths.h"

using nlohmann::json;

namespace {

json loadResults() {
  std::ifstream in(std::string(OOMLINT_SOURCE) + "/runtime_check/results/h200.json");
  std::stringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str());
}

}  // namespace

TEST(ProbeResults, CommittedH200ResultsParseAndCoverEveryProbe) {
  json j = loadResults();
  ASSERT_TRUE(j.contains("provenance"));
  EXPECT_NE(std::string::npos, j["provenance"]["device"].get<std::string>().find("H200"));
  EXPECT_FALSE(j["provenance"]["libtorch"].get<std::string>().empty());
  EXPECT_FALSE(j["provenance"]["date"].get<std::string>().empty());
  EXPECT_FALSE(j["provenance"]["command"].get<std::string>().empty());
  std::set<std::string> present;
  for (const json& p : j["probes"]) {
    present.insert(p["code"].get<std::string>());
    if (p["available"].get<bool>()) {
      ASSERT_TRUE(p.contains("anti")) << p["code"];
      ASSERT_TRUE(p.contains("fix")) << p["code"];
      EXPECT_GT(p["anti"]["allocated_per_step"].size(), 0u) << p["code"];
    } else {
      EXPECT_FALSE(p["note"].get<std::string>().empty()) << p["code"] << " is unavailable without saying why";
    }
  }
  for (const oomlint::Rule* r : oomlint::allRules())
    if (r->info().probe) EXPECT_TRUE(present.count(std::string(r->info().code))) << r->info().code << " has no H200 result";
  for (const char* seed : {"SEED-lambda-lr", "SEED-logging", "SEED-unscaled-accumulation", "SEED-empty-cache",
                           "SEED-dense-checkpointing", "SEED-eval-without-no-grad"})
    EXPECT_TRUE(present.count(seed)) << seed;
}

TEST(ProbeResults, CrossCheckedProbesAgreeWithPyTorchWithinFivePercent) {
  // bench/crosscheck.py's twins (the same pattern in Python, measured with
  // torch.cuda.max_memory_allocated under the probe's protocol) against the probe, on the H200.
  std::ifstream in(std::string(OOMLINT_SOURCE) + "/runtime_check/results/h200-crosscheck.json");
  std::stringstream ss;
  ss << in.rdbuf();
  json j = json::parse(ss.str());
  ASSERT_TRUE(j.contains("provenance"));
  EXPECT_NE(std::string::npos, j["provenance"]["device"].get<std::string>().find("H200"));
  std::map<std::string, int> rows;
  for (const json& r : j["rows"]) {
    std::string code = r["probe"].get<std::string>();
    ++rows[code];
    double c = r["libtorch"].get<double>(), p = r["pytorch"].get<double>();
    double diff = std::max(c, p) == 0 ? 0 : std::abs(c - p) / std::max(c, p);
    EXPECT_LE(diff, 0.05) << code << " " << r["variant"] << " " << r["metric"];
  }
  // Every twin (the rules' ones that `check --verify` runs, shipped in packaging/python/oomlint/,
  // and the seed claims' in crosscheck.py) has its four rows (anti and fix, peak and retained) in
  // the table.
  size_t listed = 0;
  for (const char* file : {"/packaging/python/oomlint/probe_twins.py", "/packaging/python/oomlint/probe_twins_blocks.py",
                           "/bench/crosscheck.py"}) {
    std::ifstream script(std::string(OOMLINT_SOURCE) + file);
    std::stringstream text;
    text << script.rdbuf();
    size_t start = text.str().find("\nTWINS = ");
    ASSERT_NE(std::string::npos, start) << file << " lists no TWINS";
    std::string twins = text.str().substr(start);
    twins = twins.substr(0, twins.find("\n\n", 1));
    for (size_t at = twins.find("(\""); at != std::string::npos; at = twins.find("(\"", at + 1)) {
      size_t begin = at + 2, end = twins.find('"', begin);
      std::string code = twins.substr(begin, end - begin);
      ++listed;
      EXPECT_EQ(4, rows[code]) << code << " is a twin without its rows in h200-crosscheck.json";
    }
  }
  EXPECT_EQ(listed, rows.size());
  // And every probe and seed claim of the committed H200 run that measures both variants has a twin.
  json probes = loadResults();
  size_t seeds = 0;
  for (const json& p : probes["probes"]) {
    std::string code = p["code"].get<std::string>();
    if (!p["available"].get<bool>()) continue;
    seeds += code.rfind("SEED-", 0) == 0;
    EXPECT_EQ(4, rows[code]) << code << " has no Python twin in bench/crosscheck.py";
  }
  EXPECT_EQ(6u, seeds) << "the six seed claims are probes of the H200 run";
}

#ifdef OOMLINT_PROBE_BINARY
namespace {

std::map<std::string, json> runProbes(const std::string& args) {
  std::string cmd = std::string(OOMLINT_PROBE_BINARY) + " --device cpu --json - " + args + " 2>/dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf{};
  while (size_t n = std::fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  EXPECT_EQ(0, ::pclose(p));
  std::map<std::string, json> byCode;
  json doc = json::parse(out);
  for (const json& r : doc["probes"]) byCode[r["code"].get<std::string>()] = r;
  return byCode;
}

const char* kSmall = "--width 64 --depth 3 --heads 4 --batch 8 --seq 32 --vocab 512 --accum 4";

}  // namespace

TEST(ProbeCpu, AccumulatedHistoryGrowsLinearlyAndTheFixDoesNot) {
  auto r = runProbes(std::string(kSmall) + " --steps 8 OOM101 OOM102 OOM106 OOM107");
  for (const char* code : {"OOM101", "OOM102", "OOM106", "OOM107"}) {
    const json& p = r.at(code);
    std::vector<int64_t> a = p["anti"]["allocated_per_step"];
    ASSERT_EQ(8u, a.size()) << code;
    double s = p["anti"]["growth_bytes_per_step"];
    EXPECT_GT(s, 0) << code;
    for (size_t i = 1; i < a.size(); ++i) EXPECT_GT(a[i], a[i - 1]) << code << " step " << i;
    // Linear: the last sample is where the slope says it should be, within 10%.
    double predicted = static_cast<double>(a[0]) + s * static_cast<double>(a.size() - 1);
    EXPECT_NEAR(predicted, static_cast<double>(a.back()), 0.1 * static_cast<double>(a.back())) << code;
    EXPECT_LT(p["fix"]["growth_bytes_per_step"].get<double>(), s / 4) << code;
  }
  EXPECT_EQ(0, r.at("OOM101")["fix"]["growth_bytes_per_step"].get<double>());
  EXPECT_EQ(0, r.at("OOM107")["fix"]["growth_bytes_per_step"].get<double>());
}

TEST(ProbeCpu, EvalWithoutNoGradPeaksAboveBySavedActivations) {
  auto r = runProbes(std::string(kSmall) + " --steps 3 OOM201");
  const json& p = r.at("OOM201");
  // Linear and GELU each save their input: at least (depth - 1) layers of [batch*seq, width] f32.
  int64_t saved = 2 * 8 * 32 * 64 * 4;
  EXPECT_GE(p["anti"]["peak_bytes"].get<int64_t>() - p["fix"]["peak_bytes"].get<int64_t>(), saved);
}

TEST(ProbeCpu, UnscaledAccumulationPeaksEqually) {
  auto r = runProbes(std::string(kSmall) + " --steps 3 OOM303 OOM305");
  const json& p = r.at("OOM303");
  // Equal up to the scalar `loss / k` temporary (a few bytes): within 1%.
  double a = p["anti"]["peak_bytes"].get<double>(), f = p["fix"]["peak_bytes"].get<double>();
  EXPECT_NEAR(a, f, 0.01 * f);
  EXPECT_EQ(0, p["anti"]["growth_bytes_per_step"].get<double>());
  const json& q = r.at("OOM305");
  EXPECT_EQ(q["anti"]["retained_bytes"], q["fix"]["retained_bytes"]) << "Adam keeps no state for frozen parameters";
}

TEST(ProbeCpu, AdagradKeepsStateForFrozenParameters) {
  // The probe MLP's first half of parameters is frozen; Adagrad builds a sum like each parameter it
  // is given, so over all of them it keeps the frozen half's bytes more than over the trainable half.
  auto r = runProbes(std::string(kSmall) + " --steps 3 OOM305-adagrad");
  const json& q = r.at("OOM305-adagrad");
  int64_t kept = q["anti"]["retained_bytes"].get<int64_t>() - q["fix"]["retained_bytes"].get<int64_t>();
  // By hand: the frozen tensors of 3 Linear(64, 64), weight, bias, weight: (4096 + 64 + 4096) floats.
  EXPECT_EQ((4096 + 64 + 4096) * 4, kept) << q;
}

TEST(ProbeCpu, SummedMicroBatchesAndRetainedGraphsPeakHigher) {
  auto r = runProbes(std::string(kSmall) + " --steps 3 OOM104 OOM105 OOM301 OOM404");
  for (const char* code : {"OOM104", "OOM105", "OOM301", "OOM404"})
    EXPECT_GT(r.at(code)["anti"]["peak_bytes"].get<int64_t>(), r.at(code)["fix"]["peak_bytes"].get<int64_t>()) << code;
}

TEST(ProbeCpu, SeedClaimVerdictsAndEveryProbeRuns) {
  auto r = runProbes(std::string(kSmall) + " --steps 3");
  for (const auto& [code, p] : r) {
    if (!p["available"].get<bool>()) {
      EXPECT_TRUE(code == "OOM506" || code == "OOM401") << code << ": " << p["note"];  // 401's fix needs LibTorch >= 2
      continue;
    }
    EXPECT_TRUE(p.contains("anti") && p.contains("fix")) << code;
  }
  EXPECT_EQ(0u, r.at("SEED-lambda-lr")["verdict"].get<std::string>().find("refuted"));
  EXPECT_EQ(0u, r.at("SEED-logging")["verdict"].get<std::string>().find("refuted"));
  EXPECT_EQ(0u, r.at("SEED-unscaled-accumulation")["verdict"].get<std::string>().find("refuted"));
  EXPECT_EQ(0u, r.at("SEED-eval-without-no-grad")["verdict"].get<std::string>().find("confirmed"));
}
#endif

#ifdef OOMLINT_PROBE_BINARY
TEST(Verify, CheckVerifyAttachesMeasuredCostsToFindings) {
  std::string dir = ::testing::TempDir() + "oomlint_verify";
  std::string mk = "mkdir -p " + dir;
  ASSERT_EQ(0, std::system(mk.c_str()));
  {
    std::ofstream f(dir + "/train.py");
    f << "import torch\nfrom torch.utils.data import DataLoader\n\n"
         "def train(model, ds, optimizer, criterion):\n"
         "    loader = DataLoader(ds, batch_size=8)\n"
         "    total = 0\n"
         "    for x, y in loader:\n"
         "        optimizer.zero_grad()\n"
         "        loss = criterion(model(x), y)\n"
         "        loss.backward()\n"
         "        optimizer.step()\n"
         "        total += loss\n";
  }
  std::string cmd = std::string(OOMLINT_BINARY) + " check --isolated --verify --verify-device cpu --probe " + OOMLINT_PROBE_BINARY +
                    " --output-format json " + dir + "/train.py 2>/dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf{};
  while (size_t n = std::fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  EXPECT_EQ(1, WEXITSTATUS(::pclose(p)));
  json j = json::parse(out);
  ASSERT_EQ(1u, j.size());
  const json& m = j[0]["measured"];
  ASSERT_TRUE(m.is_object()) << out;
  EXPECT_NE(std::string::npos, m["device"].get<std::string>().find("cpu"));
  EXPECT_NE(std::string::npos, m["workload"].get<std::string>().find("batch=8"));
  EXPECT_GT(m["growth_bytes_per_step"]["anti"].get<double>(), 0);
  EXPECT_EQ(0, m["growth_bytes_per_step"]["fix"].get<double>());
  // Without a probe the findings still come, with a clear note on stderr.
  std::string none = std::string(OOMLINT_BINARY) + " check --isolated --verify --probe /nonexistent " + dir + "/train.py >/dev/null 2>" + dir + "/err.txt";
  EXPECT_EQ(1, WEXITSTATUS(std::system(none.c_str())));
  std::ifstream err(dir + "/err.txt");
  std::stringstream es;
  es << err.rdbuf();
  EXPECT_NE(std::string::npos, es.str().find("oomlint-probe not found")) << es.str();
}

namespace {

/// `oomlint check --verify` on the CPU probe of a file holding `source`, in a folder of its own;
/// the JSON findings as text.
std::string verifyOnCpu(const std::string& folder, const std::string& source) {
  std::string dir = ::testing::TempDir() + "/" + folder;
  std::filesystem::create_directories(dir);
  {
    std::ofstream f(dir + "/probe_me.py");
    f << source;
  }
  // Its own temporary folder: Verify tests run side by side, and each checks what it leaves behind.
  std::filesystem::create_directories(dir + "/tmp");
  std::string cmd = "TMPDIR=" + dir + "/tmp " + std::string(OOMLINT_BINARY) + " check --isolated --no-cache --verify --verify-device cpu --probe " +
                    OOMLINT_PROBE_BINARY + " --output-format json " + dir + "/probe_me.py 2>/dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf{};
  while (size_t n = std::fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  ::pclose(p);
  return out;
}

/// The findings of a `--verify` run's JSON whose code is one of `codes`; each must have been
/// measured on the workload `workloadPrefix` names.
std::vector<json> measuredOn(const std::string& out, const std::vector<std::string>& codes, const std::string& workloadPrefix) {
  std::vector<json> found;
  for (const json& f : json::parse(out)) {
    if (std::find(codes.begin(), codes.end(), f["code"].get<std::string>()) == codes.end()) continue;
    const json& m = f["measured"];
    EXPECT_TRUE(m.is_object()) << out;
    if (!m.is_object()) continue;
    EXPECT_EQ(0u, m["workload"].get<std::string>().rfind(workloadPrefix, 0)) << m["workload"];
    found.push_back(f);
  }
  return found;
}

/// The OOM102 findings of a `--verify` run's JSON, each of which must be measured on the file's
/// own layers.
std::vector<json> shapeFaithfulOom102(const std::string& out) {
  return measuredOn(out, {"OOM102"}, "shape-faithful: the file's own layers");
}

/// For the OOM102 and OOM201 findings of `--verify` JSON: the measurement was made on the
/// workload `workloadPrefix` names and lies within 10% of the estimate. Returns how many compared.
int shapeFaithfulMatchesEstimates(const std::string& out, const std::string& workloadPrefix) {
  int checked = 0;
  for (const json& f : measuredOn(out, {"OOM102", "OOM201"}, workloadPrefix)) {
    EXPECT_TRUE(f["estimated"].is_object()) << out;
    if (!f["estimated"].is_object()) continue;
    const json& m = f["measured"];
    double measured = f["code"] == "OOM102" ? m["growth_bytes_per_step"]["anti"].get<double>() - m["growth_bytes_per_step"]["fix"].get<double>()
                                            : m["peak_bytes"]["delta"].get<double>();
    double estimated = f["estimated"]["bytes"].get<double>();
    EXPECT_LE(std::fabs(measured - estimated) / estimated, 0.10) << f["code"] << ": measured " << measured << " estimated " << estimated;
    ++checked;
  }
  return checked;
}

}  // namespace

TEST(VerifyScale, TheCpuMeasuresThreeSmallBatchesOfALargeSlowOne) {
  auto mlp = [](int64_t rows, int64_t width) {
    return json{{"layers", {{{"kind", "Linear"}, {"in", width}, {"out", width}, {"bias", true}}}},
                {"rows", rows}, {"shape", {rows, width}}, {"dtype", "f32"}};
  };
  EXPECT_EQ(oomlint::cpuRowPoints(mlp(4096, 2048)), (std::vector<int64_t>{16, 32, 64}));
  EXPECT_TRUE(oomlint::cpuRowPoints(mlp(128, 256)).empty());   // fast enough at its own size
  EXPECT_TRUE(oomlint::cpuRowPoints(mlp(64, 8192)).empty());   // no smaller batches to measure
  EXPECT_TRUE(oomlint::cpuRowPoints(nullptr).empty());         // the generic workload
}

TEST(VerifyScale, ABatchIsTheInputsFirstDimensionAndAReshapesLeadingOne) {
  json flat = json::parse(R"({"layers":[{"kind":"Linear","in":64,"out":8,"bias":true}],"rows":256,"shape":[256,64],"dtype":"f32"})");
  EXPECT_EQ(oomlint::workloadRows(flat), 256);
  json small = oomlint::withRows(flat, 16);
  EXPECT_EQ(small["shape"], json::parse("[16,64]"));
  EXPECT_EQ(small["rows"], 16);
  json tokens = json::parse(R"({"layers":[{"kind":"Linear","in":32,"out":32,"bias":true},{"kind":"View","size":[8,4096]}],)"
                            R"("rows":1024,"shape":[8,128,32],"dtype":"f32"})");
  json scaled = oomlint::withRows(tokens, 2);
  EXPECT_EQ(scaled["shape"], json::parse("[2,128,32]"));
  EXPECT_EQ(scaled["rows"], 256);
  EXPECT_EQ(scaled["layers"][1]["size"], json::parse("[2,4096]"));
  // A reshape that folds the batch into another dimension cannot be scaled by its first one.
  json folded = json::parse(R"({"layers":[{"kind":"View","size":[1024,32]}],"rows":1024,"shape":[8,128,32],"dtype":"f32"})");
  EXPECT_TRUE(oomlint::withRows(folded, 2).is_null());
}

TEST(VerifyScale, FiguresAreCarriedToTheFullBatchOnlyWhenLinearInIt) {
  auto at = [](int64_t rows, int64_t fixed) {
    oomlint::MeasuredCost m;
    m.present = true;
    m.peakAnti = fixed + 3 * rows * 1048576, m.peakFix = fixed + rows * 1048576;
    m.retainedAnti = fixed, m.retainedFix = fixed;
    m.growthAnti = static_cast<double>(rows) * 4096, m.growthFix = 0;
    m.msAnti = static_cast<double>(rows);
    return m;
  };
  oomlint::MeasuredCost out;
  ASSERT_TRUE(oomlint::extrapolateToRows({16, 32, 64}, {at(16, 7 << 20), at(32, 7 << 20), at(64, 7 << 20)}, 4096, out));
  EXPECT_DOUBLE_EQ(out.growthAnti, 4096.0 * 4096);
  EXPECT_DOUBLE_EQ(out.growthFix, 0.0);
  EXPECT_EQ(out.retainedAnti, 7 << 20);
  // Peaks and time stay the largest run's: which phase sets a peak can change above batch 64.
  EXPECT_EQ(out.peakAnti, (7 << 20) + 3 * int64_t{64} * 1048576);
  EXPECT_EQ(out.peakFix, (7 << 20) + int64_t{64} * 1048576);
  EXPECT_DOUBLE_EQ(out.msAnti, 64.0);
  // A middle point off the line (a step in the allocator's blocks, say) stops the carry.
  oomlint::MeasuredCost bent = at(32, 7 << 20);
  bent.growthAnti += 1 << 20;
  EXPECT_FALSE(oomlint::extrapolateToRows({16, 32, 64}, {at(16, 7 << 20), bent, at(64, 7 << 20)}, 4096, out));
}

TEST(Verify, OnTheCpuALargeBatchIsMeasuredSmallAndCarriedToItsOwnSize) {
  // Batch 2048 through 256 x 1024 layers is slow enough to scale (2^29 multiply-adds a forward)
  // and still small enough to measure directly, so the carried figures can be checked against
  // the probe run on the full batch.
  std::string dir = ::testing::TempDir() + "/oomlint_verify_scaled";
  std::filesystem::create_directories(dir);
  {
    std::ofstream f(dir + "/probe_me.py");
    f << "import torch\nfrom torch import nn\n\n"
         "model = nn.Sequential(nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 256), nn.GELU())\n"
         "x = torch.randn(2048, 256)\n"
         "outs = []\n"
         "model.eval()\n"
         "for i in range(10):\n"
         "    outs.append(model(x))\n";
    std::ofstream w(dir + "/full.json");
    w << R"({"layers":[{"kind":"Linear","in":256,"out":1024,"bias":true},{"kind":"GELU"},)"
         R"({"kind":"Linear","in":1024,"out":256,"bias":true},{"kind":"GELU"}],"rows":2048,"shape":[2048,256],"dtype":"f32"})";
  }
  std::string cmd = std::string(OOMLINT_BINARY) + " check --isolated --no-cache --verify --verify-device cpu --probe " +
                    OOMLINT_PROBE_BINARY + " --select OOM102 --output-format json " + dir + "/probe_me.py >" + dir + "/out.json 2>" +
                    dir + "/err.txt";
  std::system(cmd.c_str());
  std::ifstream outFile(dir + "/out.json"), errFile(dir + "/err.txt");
  std::stringstream out, err;
  out << outFile.rdbuf();
  err << errFile.rdbuf();
  // Progress on stderr, a line per probe run, with the batch it ran.
  for (const char* batch : {"batch 16 of 2048", "batch 32 of 2048", "batch 64 of 2048"})
    EXPECT_NE(err.str().find(std::string("oomlint: --verify: OOM102 for ") + dir + "/probe_me.py on the CPU, " + batch + " ... done ("),
              std::string::npos)
        << err.str();
  std::vector<json> found = measuredOn(out.str(), {"OOM102"}, "shape-faithful: the file's own layers");
  ASSERT_EQ(found.size(), 1u) << out.str();
  const json& m = found[0]["measured"];
  EXPECT_NE(m["workload"].get<std::string>().find(
                "measured on the CPU at batches of 16, 32 and 64: growth and retained bytes carried linearly to its batch of 2048"),
            std::string::npos)
      << m["workload"];
  std::string direct = std::string(OOMLINT_PROBE_BINARY) + " --device cpu --steps 6 --workload " + dir + "/full.json --json - OOM102 2>/dev/null";
  FILE* p = ::popen(direct.c_str(), "r");
  std::string text;
  std::array<char, 4096> buf{};
  while (size_t n = std::fread(buf.data(), 1, buf.size(), p)) text.append(buf.data(), n);
  ::pclose(p);
  const json doc = json::parse(text);
  const json& full = doc["probes"][0];
  double carried = m["growth_bytes_per_step"]["anti"].get<double>(), measured = full["anti"]["growth_bytes_per_step"].get<double>();
  EXPECT_NEAR(carried, measured, 0.01 * measured);
  double keptCarried = m["retained_bytes"]["anti"].get<double>(), kept = full["anti"]["retained_bytes"].get<double>();
  EXPECT_NEAR(keptCarried, kept, 0.01 * kept);
}

TEST(Verify, AFileThatStatesItsLayersIsProbedWithThemAndMeasuresWhatItsEstimateSays) {
  // Shape-faithful: the probe runs the file's own network (facts/sizes.h) on its input's rows,
  // instead of the generic MLP; the measured growth is then the estimate's (CPU counting allocator).
  std::string out = verifyOnCpu("oomlint_verify_stated",
                                "import torch\nfrom torch import nn\n\n"
                                "model = nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 64), nn.GELU())\n"
                                "x = torch.randn(128, 64)\n"
                                "outs = []\n"
                                "model.eval()\n"
                                "for i in range(10):\n"
                                "    outs.append(model(x))\n");
  EXPECT_EQ(2, shapeFaithfulMatchesEstimates(out, "shape-faithful: the file's own layers, `nn.Sequential(")) << out;
  // No temporary workload file is left behind (in the run's own $TMPDIR, see verifyOnCpu).
  for (const auto& entry : std::filesystem::directory_iterator(::testing::TempDir() + "/oomlint_verify_stated/tmp"))
    EXPECT_EQ(std::string::npos, entry.path().filename().string().find("oomlint-workload-")) << entry.path();
}

TEST(Verify, ALanguageModelsEmbeddingIsProbedWithTokenIds) {
  // An nn.Embedding first: the probe looks up random token ids (one per row of the stated
  // (batch, sequence) input) instead of a float input, and measures what the estimate says.
  std::string out = verifyOnCpu("oomlint_verify_embedding",
                                "import torch\nfrom torch import nn\n\n"
                                "model = nn.Sequential(nn.Embedding(1000, 64), nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 64))\n"
                                "tokens = torch.randint(0, 1000, (8, 32))\n"
                                "outs = []\n"
                                "model.eval()\n"
                                "for i in range(10):\n"
                                "    outs.append(model(tokens))\n");
  EXPECT_EQ(2, shapeFaithfulMatchesEstimates(out, "shape-faithful: the file's own layers")) << out;
}

TEST(Verify, AConvolutionalNetworkIsProbedWithItsOwnLayersOnItsImages) {
  // Conv2d, BatchNorm2d, max pooling and a flatten in a module class: the probe builds them and
  // runs them on the stated (batch, channels, height, width) input; what it measures is the estimate.
  std::string out = verifyOnCpu("oomlint_verify_conv",
                                "import torch\nfrom torch import nn\nimport torch.nn.functional as F\n\n"
                                "class Net(nn.Module):\n"
                                "    def __init__(self):\n"
                                "        super().__init__()\n"
                                "        self.conv = nn.Conv2d(3, 16, 3, padding=1)\n"
                                "        self.bn = nn.BatchNorm2d(16)\n"
                                "        self.pool = nn.MaxPool2d(2)\n"
                                "        self.fc = nn.Linear(16 * 8 * 8, 10)\n"
                                "    def forward(self, x):\n"
                                "        x = self.pool(F.relu(self.bn(self.conv(x))))\n"
                                "        return self.fc(torch.flatten(x, 1))\n\n"
                                "model = Net()\n"
                                "x = torch.randn(8, 3, 16, 16)\n"
                                "outs = []\n"
                                "model.eval()\n"
                                "for i in range(10):\n"
                                "    outs.append(model(x))\n");
  EXPECT_EQ(2, shapeFaithfulMatchesEstimates(out, "shape-faithful: the file's own layers, `Net()`")) << out;
}

TEST(Verify, AttentionAndRecurrentLayersAreProbedWithoutAnEstimate) {
  // A TransformerEncoderLayer and self-attention (batch first), an LSTM language model and an
  // LSTM classifier of its last step (`out[:, -1]`): the probe builds and measures them; no formula sizes them, so the findings carry no estimate.
  const std::pair<const char*, std::string> files[] = {
      {"oomlint_verify_attention",
       "class Net(nn.Module):\n"
       "    def __init__(self):\n"
       "        super().__init__()\n"
       "        self.block = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, batch_first=True)\n"
       "        self.attn = nn.MultiheadAttention(32, 4, batch_first=True)\n"
       "    def forward(self, x):\n"
       "        h = self.block(x)\n"
       "        h, _ = self.attn(h, h, h)\n"
       "        return h\n\n"
       "model = Net()\n"
       "x = torch.randn(4, 16, 32)\n"},
      {"oomlint_verify_lstm",
       "class Net(nn.Module):\n"
       "    def __init__(self):\n"
       "        super().__init__()\n"
       "        self.embed = nn.Embedding(500, 32)\n"
       "        self.rnn = nn.LSTM(32, 64, num_layers=2, batch_first=True)\n"
       "        self.head = nn.Linear(64, 500)\n"
       "    def forward(self, x):\n"
       "        out, _ = self.rnn(self.embed(x))\n"
       "        return self.head(out)\n\n"
       "model = Net()\n"
       "x = torch.randint(0, 500, (4, 16))\n"},
      {"oomlint_verify_lstm_last_step",
       "class Net(nn.Module):\n"
       "    def __init__(self):\n"
       "        super().__init__()\n"
       "        self.lstm = nn.LSTM(32, 64, batch_first=True)\n"
       "        self.fc = nn.Linear(64, 5)\n"
       "    def forward(self, x):\n"
       "        out, _ = self.lstm(x)\n"
       "        return self.fc(out[:, -1])\n\n"
       "model = Net()\n"
       "x = torch.randn(8, 20, 32)\n"},
  };
  for (const auto& [dir, model] : files) {
    std::string out = verifyOnCpu(dir, "import torch\nfrom torch import nn\n\n" + model +
                                           "outs = []\nmodel.eval()\nfor i in range(10):\n    outs.append(model(x))\n");
    json j = json::parse(out);
    int measured = 0;
    for (const json& f : j) {
      if (f["code"] != "OOM102") continue;
      const json& m = f["measured"];
      ASSERT_TRUE(m.is_object()) << out;
      EXPECT_EQ(0u, m["workload"].get<std::string>().rfind("shape-faithful: the file's own layers, `Net()`", 0)) << m["workload"];
      EXPECT_FALSE(f.contains("estimated") && f["estimated"].is_object()) << out;
      // The stored outputs keep their graphs: the anti-pattern grows, the fix does not.
      EXPECT_GT(m["growth_bytes_per_step"]["anti"].get<double>(), 2 * m["growth_bytes_per_step"]["fix"].get<double>()) << out;
      ++measured;
    }
    EXPECT_EQ(1, measured) << dir << ": " << out;
  }
}

TEST(Verify, RecurrentCellsAreProbedAsOneStepWithoutAnEstimate) {
  // A GRU cell chained in a Sequential (it returns its new state), an LSTM cell read as `h, c`
  // in a module's forward, an RNN cell without biases: the probe builds each cell and runs one
  // step from a zero state. The parameters, by hand: 3·128·(64+128+2) + 2,112 + 1,290 = 77,898;
  // 4·48·(32+48+2) + 245 = 15,989; 24·(16+24) + 75 = 1,035.
  const std::tuple<const char*, std::string, const char*> files[] = {
      {"oomlint_verify_gru_cell", "model = nn.Sequential(nn.Linear(32, 64), nn.GRUCell(64, 128), nn.Linear(128, 10))\nx = torch.randn(8, 32)\n",
       "(3 layers, 77.9k parameters)"},
      {"oomlint_verify_lstm_cell",
       "class Net(nn.Module):\n"
       "    def __init__(self):\n"
       "        super().__init__()\n"
       "        self.cell = nn.LSTMCell(32, 48)\n"
       "        self.head = nn.Linear(48, 5)\n"
       "    def forward(self, x):\n"
       "        h, c = self.cell(x)\n"
       "        return self.head(h)\n\n"
       "model = Net()\n"
       "x = torch.randn(8, 32)\n",
       "(2 layers, 16.0k parameters)"},
      {"oomlint_verify_rnn_cell", "model = nn.Sequential(nn.RNNCell(16, 24, bias=False), nn.Linear(24, 3))\nx = torch.randn(8, 16)\n",
       "(2 layers, 1.0k parameters)"},
  };
  for (const auto& [dir, model, size] : files) {
    std::string out = verifyOnCpu(dir, "import torch\nfrom torch import nn\n\n" + model +
                                           "outs = []\nmodel.eval()\nfor i in range(10):\n    outs.append(model(x))\n");
    std::vector<json> found = shapeFaithfulOom102(out);
    ASSERT_EQ(1u, found.size()) << dir << ": " << out;
    const json& f = found[0];
    const json& m = f["measured"];
    EXPECT_NE(std::string::npos, m["workload"].get<std::string>().find(size)) << m["workload"];
    EXPECT_FALSE(f.contains("estimated") && f["estimated"].is_object()) << out;
    EXPECT_GT(m["growth_bytes_per_step"]["anti"].get<double>(), 2 * m["growth_bytes_per_step"]["fix"].get<double>()) << out;
  }
}

TEST(Verify, EachFindingIsProbedWithTheNetworkOfItsOwnForward) {
  // Two stated networks in one file, each with its own leaking loop: each finding is measured on
  // the network its forward runs (its workload line names that network), which is what its own
  // estimate says; a finding of the second network is not measured on the first.
  std::string out = verifyOnCpu("oomlint_verify_two_networks",
                                "import torch\nfrom torch import nn\n\n"
                                "small = nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 64))\n"
                                "wide = nn.Sequential(nn.Linear(32, 1024), nn.Tanh(), nn.Linear(1024, 1024), nn.Tanh(), nn.Linear(1024, 8))\n"
                                "x = torch.randn(128, 64)\n"
                                "z = torch.randn(96, 32)\n"
                                "small.eval()\n"
                                "wide.eval()\n"
                                "outs = []\n"
                                "for i in range(10):\n"
                                "    outs.append(small(x))\n"
                                "kept = []\n"
                                "for i in range(10):\n"
                                "    kept.append(wide(z))\n");
  // OOM102 of both loops, and OOM201 of the first forward (it reports one per function).
  EXPECT_EQ(3, shapeFaithfulMatchesEstimates(out, "shape-faithful: the file's own layers, `nn.Sequential(")) << out;
  std::set<std::string> networks;
  for (const json& f : json::parse(out)) {
    if (f["code"] != "OOM102") continue;
    std::string workload = f["measured"]["workload"].get<std::string>();
    std::string expected = f["location"]["row"] == 12 ? "line 4" : "line 5";
    EXPECT_NE(std::string::npos, workload.find(expected)) << f["location"] << ": " << workload;
    networks.insert(workload);
  }
  EXPECT_EQ(2u, networks.size()) << out;
}

namespace {

/// The OOM102 findings of `--verify` JSON that were measured on the generic workload (not the
/// file's own layers); each is expected to carry an estimate exactly when `estimated`.
int genericallyMeasuredOom102(const std::string& out, bool estimated) {
  int measured = 0;
  for (const json& f : json::parse(out)) {
    if (f["code"] != "OOM102") continue;
    const json& m = f["measured"];
    EXPECT_TRUE(m.is_object()) << out;
    if (!m.is_object()) continue;
    EXPECT_EQ(estimated, f.contains("estimated") && f["estimated"].is_object()) << out;
    EXPECT_EQ(std::string::npos, m["workload"].get<std::string>().find("shape-faithful")) << m["workload"];
    ++measured;
  }
  return measured;
}

}  // namespace

TEST(Verify, AFindingOnAModelTheFileDoesNotStateIsNotProbedWithAnotherNetwork) {
  // The file states one network, but the finding's forward runs a model handed in: it gets the
  // generic workload, not the stated network of some other forward.
  std::string out = verifyOnCpu("oomlint_verify_unstated_model",
                                "import torch\nfrom torch import nn\n\n"
                                "small = nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 64))\n"
                                "x = torch.randn(128, 64)\n"
                                "print(small(x).shape)\n\n"
                                "def evaluate(model, batches):\n"
                                "    model.eval()\n"
                                "    preds = []\n"
                                "    for b in batches:\n"
                                "        preds.append(model(b))\n"
                                "    return preds\n");
  EXPECT_EQ(1, genericallyMeasuredOom102(out, false)) << out;
}

TEST(Verify, ACellGivenItsStateOrChainedAsAPairFallsBackToTheGenericWorkload) {
  // The probe steps a cell once from a zero state: a cell given the state a loop carries, or an
  // LSTM cell's (h, c) pair fed on by a Sequential, is not that network: the generic workload,
  // which takes its width from the file's first Linear where 4 heads split it.
  const std::pair<const char*, std::string> files[] = {
      {"oomlint_verify_cell_with_state",
       "class Net(nn.Module):\n"
       "    def __init__(self):\n"
       "        super().__init__()\n"
       "        self.cell = nn.LSTMCell(32, 48)\n"
       "        self.head = nn.Linear(48, 64)\n"
       "    def forward(self, x, state):\n"
       "        h, c = self.cell(x, state)\n"
       "        return self.head(h)\n\n"
       "model = Net()\n"
       "x = torch.randn(8, 32)\n"},
      {"oomlint_verify_lstm_cell_in_sequential", "model = nn.Sequential(nn.LSTMCell(32, 48), nn.Linear(48, 64))\nx = torch.randn(8, 32)\n"},
      // A first Linear of width 5, which the generic block's 4 heads cannot split: its default width.
      {"oomlint_verify_cell_narrow_head", "model = nn.Sequential(nn.LSTMCell(32, 48), nn.Linear(48, 5))\nx = torch.randn(8, 32)\n"},
  };
  for (const auto& [dir, model] : files) {
    std::string out = verifyOnCpu(dir, "import torch\nfrom torch import nn\n\n" + model +
                                           "outs = []\nmodel.eval()\nfor i in range(10):\n    outs.append(model(x))\n");
    EXPECT_EQ(1, genericallyMeasuredOom102(out, false)) << dir << ": " << out;
  }
}

TEST(Verify, AnAdagradFindingIsMeasuredWithAdagrad) {
  // OOM305 over Adagrad runs the probe's Adagrad variant: the frozen half's state is kept. The
  // same finding over Adam measures the ~0 bytes its message says.
  std::string out = verifyOnCpu("oomlint_verify_adagrad",
                                "import torch\n\n\n"
                                "def adagrad(model):\n"
                                "    model.backbone.requires_grad_(False)\n"
                                "    return torch.optim.Adagrad(model.parameters(), lr=1e-2)\n\n\n"
                                "def adam(model):\n"
                                "    model.backbone.requires_grad_(False)\n"
                                "    return torch.optim.Adam(model.parameters(), lr=1e-3)\n");
  int seen = 0;
  for (const json& f : json::parse(out)) {
    if (f["code"] != "OOM305") continue;
    ++seen;
    const json& m = f["measured"];
    ASSERT_TRUE(m.is_object()) << out;
    int64_t kept = m["retained_bytes"]["anti"].get<int64_t>() - m["retained_bytes"]["fix"].get<int64_t>();
    if (f["location"]["row"] == 6) EXPECT_GT(kept, 0) << "Adagrad keeps a sum for the frozen parameters: " << m;
    else EXPECT_EQ(0, kept) << m;
  }
  EXPECT_EQ(2, seen) << out;
}

TEST(Verify, ANetworkWithCheckpointsIsNotRebuiltWithoutThem) {
  // The probe runs no checkpoints: a network that checkpoints a layer gets the generic workload,
  // not a rebuild that would keep what the file's checkpoint does not.
  std::string out = verifyOnCpu("oomlint_verify_checkpointed",
                                "import torch\nfrom torch import nn\nfrom torch.utils.checkpoint import checkpoint\n\n"
                                "class Net(nn.Module):\n"
                                "    def __init__(self):\n"
                                "        super().__init__()\n"
                                "        self.fc1 = nn.Linear(64, 256)\n"
                                "        self.block = nn.Sequential(nn.Linear(256, 256), nn.GELU(), nn.Linear(256, 64))\n"
                                "    def forward(self, x):\n"
                                "        return checkpoint(self.block, self.fc1(x), use_reentrant=False)\n\n"
                                "model = Net()\n"
                                "x = torch.randn(128, 64)\n"
                                "outs = []\n"
                                "model.eval()\n"
                                "for i in range(10):\n"
                                "    outs.append(model(x))\n");
  EXPECT_EQ(1, genericallyMeasuredOom102(out, true)) << out;  // the estimate knows the checkpoint
}

TEST(Verify, ABfloat16NetworkIsProbedInBfloat16) {
  // The probe's dtype is the file's: `.bfloat16()` on the module, with a LayerNorm in the chain.
  // On the CPU only the stored outputs are compared with the estimate (OOM102): CPU bf16 kernels
  // allocate workspaces of their own at the forward's peak, which CUDA's do not.
  std::string out = verifyOnCpu("oomlint_verify_bf16",
                                "import torch\nfrom torch import nn\n\n"
                                "model = nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.LayerNorm(256), nn.Linear(256, 64)).bfloat16()\n"
                                "x = torch.randn(128, 64, dtype=torch.bfloat16)\n"
                                "outs = []\n"
                                "model.eval()\n"
                                "for i in range(10):\n"
                                "    outs.append(model(x))\n");
  std::vector<json> found = shapeFaithfulOom102(out);
  ASSERT_EQ(1u, found.size()) << out;
  const json& m = found[0]["measured"];
  EXPECT_NE(std::string::npos, m["workload"].get<std::string>().find(", bfloat16")) << m["workload"];
  double measured = m["growth_bytes_per_step"]["anti"].get<double>() - m["growth_bytes_per_step"]["fix"].get<double>();
  double estimated = found[0]["estimated"]["bytes"].get<double>();
  EXPECT_LE(std::fabs(measured - estimated) / estimated, 0.10) << "measured " << measured << " estimated " << estimated;
}

TEST(Verify, CostsThatAreNotMemoryAreNotShownAsBytes) {
  // OOM303 is a gradient-scale bug and OOM501 costs GPU time: --verify on the CPU says so
  // instead of printing a byte count that would read as "no cost".
  std::string dir = ::testing::TempDir() + "oomlint_verify_kinds";
  ASSERT_EQ(0, std::system(("mkdir -p " + dir).c_str()));
  {
    std::ofstream f(dir + "/train.py");
    f << "import torch\n\n"
         "def train(model, loader, optimizer, criterion, accum_steps):\n"
         "    for i, (x, y) in enumerate(loader):\n"
         "        loss = criterion(model(x), y)\n"
         "        loss.backward()\n"
         "        if (i + 1) % accum_steps == 0:\n"
         "            optimizer.step()\n"
         "            optimizer.zero_grad()\n"
         "        torch.cuda.empty_cache()\n";
  }
  auto check = [&](const std::string& format) {
    std::string cmd = std::string(OOMLINT_BINARY) + " check --isolated --verify --verify-device cpu --probe " + OOMLINT_PROBE_BINARY +
                      " --output-format " + format + " " + dir + "/train.py 2>/dev/null";
    FILE* p = ::popen(cmd.c_str(), "r");
    std::string out;
    std::array<char, 4096> buf{};
    while (size_t n = std::fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
    ::pclose(p);
    return out;
  };
  json j = json::parse(check("json"));
  std::map<std::string, json> byCode;
  for (const json& f : j) byCode[f["code"]] = f["measured"];
  ASSERT_TRUE(byCode.count("OOM303") && byCode.count("OOM501")) << j.dump();
  ASSERT_TRUE(byCode["OOM303"].is_object());
  EXPECT_EQ("correctness", byCode["OOM303"]["cost"]);
  EXPECT_EQ(0u, byCode["OOM303"]["summary"].get<std::string>().find("not a memory cost")) << byCode["OOM303"]["summary"];
  ASSERT_TRUE(byCode["OOM501"].is_object());
  EXPECT_EQ("time", byCode["OOM501"]["cost"]);
  EXPECT_EQ(0u, byCode["OOM501"]["summary"].get<std::string>().find("not measurable on CPU")) << byCode["OOM501"]["summary"];
  std::string text = check("full");
  EXPECT_NE(std::string::npos, text.find("= not a memory cost")) << text;
  EXPECT_NE(std::string::npos, text.find("= not measurable on CPU")) << text;
}
#endif

// ------------------------------------------------------------ SEED-dataloader-pinned-collate

namespace {

json loadJson(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str());
}

const std::set<std::string> kSeedCollates{"tuple", "batch-class", "batch-class-pin_memory"};

/// Every variant (3 collates x persistent workers on/off) is present with its epochs and slopes.
void expectSeedVariants(const json& j, size_t epochs) {
  std::set<std::pair<std::string, bool>> seen;
  for (const json& v : j["variants"]) {
    seen.insert({v["collate"].get<std::string>(), v["persistent_workers"].get<bool>()});
    EXPECT_EQ(v["epochs"].size(), epochs + 1) << "the measured epochs and one warm-up";
    EXPECT_FALSE(v["verdict"].get<std::string>().empty());
    for (const json& r : v["epochs"]) EXPECT_GT(r["main_rss"].get<double>(), 0) << "host RSS is always measured";
    EXPECT_TRUE(v["slope_bytes_per_epoch"].contains("main_rss"));
  }
  for (const std::string& c : kSeedCollates)
    for (bool persistent : {false, true}) EXPECT_TRUE(seen.count({c, persistent})) << c << " persistent=" << persistent;
}

}  // namespace

TEST(SeedDataloader, RunsOnTheCpuAndSaysTheDeviceIsNotMeasured) {
  std::string dir = ::testing::TempDir() + "/seed_dataloader";
  std::string cmd = "mkdir -p " + dir + " && CUDA_VISIBLE_DEVICES= /usr/bin/python3 " + std::string(OOMLINT_SOURCE) +
                    "/runtime_check/seed_dataloader.py --tiny --json " + dir + "/seed.json --txt " + dir +
                    "/seed.txt --svg-dir " + dir + "/svg >/dev/null 2>&1";
  ASSERT_EQ(0, WEXITSTATUS(std::system(cmd.c_str()))) << cmd;
  json j = loadJson(dir + "/seed.json");
  EXPECT_EQ(j["probe"], "SEED-dataloader-pinned-collate");
  EXPECT_EQ(j["device"], "cpu");
  expectSeedVariants(j, 3);
  for (const json& v : j["variants"]) {
    EXPECT_FALSE(v["pin_memory"].get<bool>()) << "pinning needs a GPU";
    for (const json& r : v["epochs"]) EXPECT_TRUE(r["allocated"].is_null() && r["driver_used"].is_null() && r["pinned"].is_null());
    EXPECT_NE(std::string::npos, v["verdict"].get<std::string>().find("device not measured"));
    EXPECT_GT(v["epochs"][1]["workers_rss"].get<double>(), 0) << "the workers' RSS is sampled during the epoch";
  }
  std::ifstream txt(dir + "/seed.txt");
  std::stringstream ss;
  ss << txt.rdbuf();
  EXPECT_NE(std::string::npos, ss.str().find("are not measured: no GPU"));
  std::ifstream chart(dir + "/svg/SEED-dataloader-tuple-persistent-false.svg");
  EXPECT_TRUE(chart.good());
}

TEST(SeedDataloader, CommittedH200ResultsCoverEveryVariant) {
  json j = loadJson(std::string(OOMLINT_SOURCE) + "/runtime_check/results/h200-seed-dataloader.json");
  EXPECT_NE(std::string::npos, j["provenance"]["gpu"].get<std::string>().find("H200"));
  EXPECT_FALSE(j["provenance"]["date"].get<std::string>().empty());
  EXPECT_GE(j["config"]["epochs"].get<int>(), 20);
  EXPECT_EQ(j["config"]["workers"].get<int>(), 4);
  expectSeedVariants(j, j["config"]["epochs"].get<size_t>());
  for (const json& v : j["variants"]) {
    EXPECT_TRUE(v["pin_memory"].get<bool>());
    for (const json& r : v["epochs"]) EXPECT_FALSE(r["allocated"].is_null() || r["reserved"].is_null() || r["driver_used"].is_null());
  }
}

// ------------------------------------------------------------ multi-GPU probes (OOM503, OOM505)

TEST(MultiGpu, RefusesClearlyWithoutTwoGpus) {
  std::string dir = ::testing::TempDir() + "/multi_gpu";
  std::string cmd = "mkdir -p " + dir + " && CUDA_VISIBLE_DEVICES= /usr/bin/python3 " + std::string(OOMLINT_SOURCE) +
                    "/runtime_check/multi_gpu.py --json " + dir + "/m.json > " + dir + "/m.txt 2>&1";
  int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(3, WEXITSTATUS(status)) << "refusing is its own exit status";
  json j = loadJson(dir + "/m.json");
  EXPECT_EQ(j["mode"], "refused");
  ASSERT_EQ(j["probes"].size(), 2u);
  for (const json& p : j["probes"]) {
    EXPECT_FALSE(p["available"].get<bool>());
    EXPECT_NE(std::string::npos, p["reason"].get<std::string>().find("needs 2 GPUs in one host")) << p.dump();
  }
  std::ifstream txt(dir + "/m.txt");
  std::stringstream ss;
  ss << txt.rdbuf();
  EXPECT_NE(std::string::npos, ss.str().find("OOM503: not measured: needs 2 GPUs")) << ss.str();
}

TEST(MultiGpu, CommittedSingleGpuResultsShowWhatLandsOnGpu0) {
  json j = loadJson(std::string(OOMLINT_SOURCE) + "/runtime_check/results/h200-multi-gpu.json");
  EXPECT_EQ(j["mode"], "single-gpu");
  EXPECT_NE(std::string::npos, j["provenance"]["gpu"].get<std::string>().find("H200"));
  std::set<std::string> codes;
  for (const json& p : j["probes"]) {
    codes.insert(p["code"].get<std::string>());
    ASSERT_EQ(p["variants"].size(), 2u);
    EXPECT_GT(p["variants"][0]["driver_per_gpu"]["0"].get<double>(), 256.0 * 1024 * 1024) << "the flagged code: a context on GPU 0";
    EXPECT_EQ(p["variants"][1]["driver_per_gpu"]["0"].get<double>(), 0.0) << "the fix: nothing on GPU 0";
  }
  EXPECT_EQ(codes, (std::set<std::string>{"OOM503", "OOM505"}));
}
