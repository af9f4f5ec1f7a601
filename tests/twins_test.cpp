// `check --verify` where no oomlint-probe is installed (the wheel, the tarball, the .deb): the
// probes' PyTorch twins (packaging/python/oomlint/probe*.py, shipped beside the binary) stand in.
// On the CPU they are checked here with Debian's python3-torch against the LibTorch probe; their
// bytes measured on the GPU machine are held to the probe's (runtime_check/results/README.md,
// "The PyTorch twins").
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "test_paths.h"
#include "test_util.h"

namespace fs = std::filesystem;
using testutil::slurp;
using testutil::spit;

namespace {

/// An oomlint installed as the packages install it: the binary and lib/oomlint/python/oomlint/,
/// no oomlint-probe anywhere.
struct Installed {
  fs::path root = fs::temp_directory_path() / ("oomlint_twins_" + std::to_string(::getpid()));
  Installed() {
    fs::remove_all(root);
    fs::create_directories(root / "bin");
    fs::create_directories(root / "lib/oomlint/python");
    fs::copy_file(OOMLINT_BINARY, root / "bin/oomlint");
    fs::permissions(root / "bin/oomlint", fs::perms::owner_all, fs::perm_options::add);
    fs::copy(fs::path(OOMLINT_SOURCE) / "packaging/python/oomlint", root / "lib/oomlint/python/oomlint");
  }
  ~Installed() { fs::remove_all(root); }

  /// `check --verify FILE` with `python` as OOMLINT_PYTHON, no GPU visible and no probe on PATH.
  int verify(const std::string& python, const std::string& file, std::string& out, std::string& err) const {
    std::string cmd = "cd '" + root.string() + "' && env -u OOMLINT_PROBE PATH=/usr/bin:/bin CUDA_VISIBLE_DEVICES= OOMLINT_PYTHON='" +
                      python + "' bin/oomlint check --isolated --no-cache --verify '" + file + "' >out 2>err";
    int status = std::system(cmd.c_str());
    out = slurp(root / "out");
    err = slurp(root / "err");
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
};

}  // namespace

TEST(ProbeTwins, EveryStatedLayerKindBuildsAndRunsAndTheCommandLineRefusesWhatItCannotDo) {
  std::string log = (fs::temp_directory_path() / ("oomlint_twins_check_" + std::to_string(::getpid()))).string();
  std::string cmd = "CUDA_VISIBLE_DEVICES= /usr/bin/python3 '" + std::string(OOMLINT_SOURCE) + "/tests/probe_twins_check.py' >'" +
                    log + "' 2>&1";
  int status = std::system(cmd.c_str());
  EXPECT_EQ(0, WIFEXITED(status) ? WEXITSTATUS(status) : -1) << slurp(log);
  EXPECT_NE(std::string::npos, slurp(log).find("all passed")) << slurp(log);
  fs::remove(log);
}

TEST(ProbeTwins, WithoutAProbeVerifyMeasuresWithTheTwinsAsTheProbeDoes) {
  ASSERT_EQ(std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1"), 0)
      << "/usr/bin/python3 cannot import torch: scripts/setup.sh installs python3-torch";
  Installed inst;
  // A small stated network, so that the CPU measures it at its own batch.
  fs::path file = inst.root / "small_net.py";
  spit(file,
       "import torch\nfrom torch import nn\n\nmodel = nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.Linear(128, 64))\n"
       "x = torch.randn(32, 64)\nouts = []\nmodel.eval()\nfor i in range(10):\n    outs.append(model(x))\n");
  std::string out, err;
  int rc = inst.verify("/usr/bin/python3", file.string(), out, err);
  EXPECT_EQ(1, rc) << err;
  EXPECT_NE(std::string::npos, err.find("no oomlint-probe; measuring with its PyTorch twins (/usr/bin/python3 ")) << err;
  EXPECT_NE(std::string::npos, err.find("OOM102 for " + file.string() + " on the CPU ... done")) << err;
  const std::string twins = "measured on cpu (PyTorch ";
  size_t at = out.find(twins);
  ASSERT_NE(std::string::npos, at) << out;
  // What the twins measured: the peak's difference and the growth, up to the workload's bracket.
  std::string measured = out.substr(out.find(": ", at) + 2);
  measured = measured.substr(0, measured.find(" ["));
  EXPECT_NE(std::string::npos, measured.find("growth 32.0 KiB/step")) << out;
  std::string cmd;
#ifdef OOMLINT_HAVE_PROBE
  // oomlint-probe's counting allocator measures the same bytes.
  cmd = "cd '" + inst.root.string() + "' && '" + OOMLINT_BINARY + "' check --isolated --no-cache --verify --probe '" +
        OOMLINT_PROBE_BINARY + "' small_net.py >probe_out 2>/dev/null";
  EXPECT_NE(-1, std::system(cmd.c_str()));
  std::string probeOut = slurp(inst.root / "probe_out");
  EXPECT_NE(std::string::npos, probeOut.find("measured on cpu (counting allocator): " + measured)) << probeOut << "\n" << measured;
#endif

  // `oomlint version` says what --verify would use.
  cmd = "env -u OOMLINT_PROBE PATH=/usr/bin:/bin '" + (inst.root / "bin/oomlint").string() + "' version >'" +
        (inst.root / "version").string() + "'";
  ASSERT_EQ(0, std::system(cmd.c_str()));
  EXPECT_NE(std::string::npos, slurp(inst.root / "version").find("Runtime check (--verify): no oomlint-probe found; its PyTorch twins"))
      << slurp(inst.root / "version");
}

TEST(ProbeTwins, APythonThatCannotImportTorchIsNamed) {
  Installed inst;
  // Debian's python3 without its site packages: a real interpreter that has no torch.
  fs::path python = inst.root / "python-without-torch";
  spit(python, "#!/bin/sh\nexec /usr/bin/python3 -S \"$@\"\n");
  fs::permissions(python, fs::perms::owner_all);
  std::string out, err;
  int rc = inst.verify(python.string(), std::string(OOMLINT_EXAMPLES) + "/sized_mlp.py", out, err);
  EXPECT_EQ(1, rc) << err;
  EXPECT_NE(std::string::npos, err.find("its PyTorch twins cannot run: `" + python.string())) << err;
  EXPECT_NE(std::string::npos, err.find("cannot import torch (No module named 'torch')")) << err;
  EXPECT_NE(std::string::npos, err.find("(OOMLINT_PYTHON names the Python to run them)")) << err;
  EXPECT_NE(std::string::npos, out.find("OOM102")) << out;
}

TEST(ProbeTwins, OnTheGpuTheyMeasureWhatTheProbeMeasuredForEachFinding) {
  // runtime_check/results/h100-twins-verify.json: `check --verify` with the twins on an H100, the
  // same files as the committed oomlint-probe runs (README.md there, "The PyTorch twins").
  auto load = [](const std::string& name) {
    return nlohmann::json::parse(slurp(fs::path(OOMLINT_SOURCE) / "runtime_check/results" / name));
  };
  nlohmann::json twins = load("h100-twins-verify.json");
  std::map<std::string, nlohmann::json> probe;
  for (const char* name : {"h200-verify-per-finding.json", "h200-layers-verify.json", "h200-oom302-verify.json"}) {
    nlohmann::json run = load(name);
    for (auto& [file, findings] : run["files"].items()) probe[file] = findings;
  }
  probe["bench/estimates/embedding_lm.py"] = load("h200-embedding-verify.json");
  auto bytes = [](const nlohmann::json& f, const char* metric, const char* variant) {
    return f["measured"][metric][variant].get<double>();
  };
  size_t compared = 0;
  for (auto& [file, findings] : twins["files"].items()) {
    ASSERT_TRUE(probe.count(file)) << file;
    ASSERT_EQ(findings.size(), probe[file].size()) << file;
    for (size_t i = 0; i < findings.size(); ++i) {
      const nlohmann::json &t = findings[i], &p = probe[file][i];
      ASSERT_EQ(t["code"], p["code"]) << file;
      EXPECT_NE(std::string::npos, t["measured"]["device"].get<std::string>().find("PyTorch 2.11.0+cu130 twins")) << file;
      double tGrowth = bytes(t, "growth_bytes_per_step", "anti"), pGrowth = bytes(p, "growth_bytes_per_step", "anti");
      double tPeak = bytes(t, "peak_bytes", "delta"), pPeak = bytes(p, "peak_bytes", "delta");
      if (file == "bench/estimates/encoder_block.py") {
        // PyTorch's nn.TransformerEncoderLayer attends with need_weights=False (fused attention);
        // LibTorch's keeps the attention weights. The twins measure what the Python program runs.
        EXPECT_LT(tPeak, pPeak) << file << " " << t["code"];
        continue;
      }
      // Within 5%, or 1 MiB: PyTorch allocates 1 MiB more than LibTorch once in an evaluation
      // forward with autograd on (OOM201's anti variant).
      auto close = [](double a, double b) { return std::abs(a - b) <= std::max(0.05 * std::max(a, b), 1048576.0); };
      EXPECT_TRUE(close(tGrowth, pGrowth)) << file << " " << t["code"] << " growth " << tGrowth << " vs " << pGrowth;
      EXPECT_TRUE(close(tPeak, pPeak)) << file << " " << t["code"] << " peak delta " << tPeak << " vs " << pPeak;
      ++compared;
    }
  }
  EXPECT_EQ(14u, compared);
}
