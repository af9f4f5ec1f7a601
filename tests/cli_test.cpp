// Integration tests: the real `oomlint` binary, run as a user would.
#include <gtest/gtest.h>

#include <algorithm>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "config/config.h"
#include "test_util.h"

namespace fs = std::filesystem;
using nlohmann::json;

using testutil::kLeaky;
using testutil::slurp;
using testutil::spit;

namespace {

struct Result {
  int rc = -1;
  std::string out, err;
};

/// Runs a shell command in `cwd`, capturing stdout and stderr through files.
Result run(const std::string& args, const fs::path& cwd, const std::string& stdinText = "", const std::string& env = "") {
  static int counter = 0;
  fs::path base = fs::temp_directory_path() / ("oomlint_cli_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  std::string in = base.string() + ".in", out = base.string() + ".out", err = base.string() + ".err";
  spit(in, stdinText);
  std::string cmd = "cd '" + cwd.string() + "' && " + env + std::string(OOMLINT_BINARY) + " " + args + " <'" + in + "' >'" + out +
                    "' 2>'" + err + "'";
  int status = std::system(cmd.c_str());
  Result r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  fs::remove(in);
  fs::remove(out);
  fs::remove(err);
  return r;
}

const char* kClean =
    "import torch\n"
    "\n"
    "def train(model, loader, optimizer, criterion):\n"
    "    total = 0\n"
    "    for x, y in loader:\n"
    "        optimizer.zero_grad()\n"
    "        loss = criterion(model(x), y)\n"
    "        loss.backward()\n"
    "        optimizer.step()\n"
    "        total += loss.item()\n"
    "    return total\n";

const char* kEval =
    "import torch\n"
    "\n"
    "def evaluate(model, loader):\n"
    "    model.eval()\n"
    "    for x, y in loader:\n"
    "        out = model(x)\n";

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("oomlint_cli_test_" + std::to_string(::getpid()) + "_" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  fs::path dir;
};

}  // namespace

TEST_F(Cli, ExitCodes) {
  spit(dir / "leaky.py", kLeaky);
  spit(dir / "clean.py", kClean);
  EXPECT_EQ(0, run("check clean.py", dir).rc);
  EXPECT_EQ(1, run("check leaky.py", dir).rc);
  EXPECT_EQ(0, run("check --exit-zero leaky.py", dir).rc);
  Result bad = run("check --select NOPE1 leaky.py", dir);
  EXPECT_EQ(2, bad.rc);
  EXPECT_NE(std::string::npos, bad.err.find("NOPE1"));
  EXPECT_EQ(2, run("check --output-format xml leaky.py", dir).rc);
  EXPECT_EQ(2, run("frobnicate", dir).rc);
}

TEST_F(Cli, FullFormatShowsSourceCaretAndFix) {
  spit(dir / "leaky.py", kLeaky);
  Result r = run("check leaky.py", dir);
  EXPECT_NE(std::string::npos, r.out.find("leaky.py:10:9: OOM101 ")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("10 |         total += loss")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("^^^^^^^^^^^^^")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("help: Accumulate `loss.item()`")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("Found 1 finding.")) << r.out;
}

TEST_F(Cli, ConciseAndGithubFormats) {
  spit(dir / "leaky.py", kLeaky);
  Result c = run("check --output-format concise leaky.py", dir);
  EXPECT_EQ(0u, c.out.find("leaky.py:10:9: OOM101 ")) << c.out;
  EXPECT_EQ(1, std::count(c.out.begin(), c.out.end(), '\n'));
  Result g = run("check --output-format github leaky.py", dir);
  EXPECT_EQ(0u, g.out.find("::error title=oomlint (OOM101),file=leaky.py,line=10,col=9,endLine=10,endColumn=22::")) << g.out;
}

TEST_F(Cli, JsonFormatHasRuffShape) {
  spit(dir / "leaky.py", kLeaky);
  Result r = run("check --output-format json leaky.py", dir);
  ASSERT_EQ(1, r.rc);
  json j = json::parse(r.out);
  ASSERT_EQ(1u, j.size());
  const json& f = j[0];
  EXPECT_EQ("OOM101", f["code"]);
  EXPECT_EQ("leaky.py", f["filename"]);
  EXPECT_EQ(10, f["location"]["row"]);
  EXPECT_EQ(9, f["location"]["column"]);
  EXPECT_EQ(10, f["end_location"]["row"]);
  EXPECT_EQ("unsafe", f["fix"]["applicability"]);
  ASSERT_EQ(1u, f["fix"]["edits"].size());
  EXPECT_EQ("loss.item()", f["fix"]["edits"][0]["content"]);
  EXPECT_EQ(18, f["fix"]["edits"][0]["location"]["column"]);
  EXPECT_TRUE(f["url"].is_string());
  EXPECT_TRUE(f["message"].get<std::string>().rfind("`loss`", 0) == 0);
}

TEST_F(Cli, SarifValidatesAgainstTheOfficialSchemaWithTheMultitool) {
  spit(dir / "leaky.py", kLeaky);
  spit(dir / "eval.py", kEval);
  spit(dir / "broken.py", "import torch\ndef f(:\n");
  Result r = run("check --output-format sarif -o out.sarif .", dir);
  ASSERT_EQ(1, r.rc) << r.err;
  json doc = json::parse(slurp(dir / "out.sarif"));
  EXPECT_EQ("2.1.0", doc["version"]);
  const json& run0 = doc["runs"][0];
  EXPECT_EQ("oomlint", run0["tool"]["driver"]["name"]);
  EXPECT_GE(run0["tool"]["driver"]["rules"].size(), 10u);
  bool sawFix = false, sawParse = false;
  for (const json& res : run0["results"]) {
    EXPECT_TRUE(res.contains("partialFingerprints"));
    if (res.contains("fixes")) sawFix = true;
    if (res["ruleId"] == "OOM000") sawParse = true;
  }
  EXPECT_TRUE(sawFix);
  EXPECT_TRUE(sawParse);
  ASSERT_TRUE(fs::exists(OOMLINT_SARIF_MULTITOOL)) << "run scripts/fetch-deps.sh";
  std::string cmd = std::string(OOMLINT_SARIF_MULTITOOL) + " validate --output '" + (dir / "validation.sarif").string() +
                    "' '" + (dir / "out.sarif").string() + "' > '" + (dir / "validate.log").string() + "' 2>&1";
  int status = std::system(cmd.c_str());
  std::string log = slurp(dir / "validate.log");
  ASSERT_TRUE(WIFEXITED(status)) << log;
  EXPECT_EQ(0, WEXITSTATUS(status)) << log;
  json v = json::parse(slurp(dir / "validation.sarif"));
  int errors = 0;
  for (const json& res : v["runs"][0]["results"])
    if (res.value("level", "warning") == "error") ++errors;
  EXPECT_EQ(0, errors) << log;
}

TEST_F(Cli, SarifPathsAreRelativeToTheRepositoryRoot) {
  // A workflow checks out the repository into `src/` and runs oomlint from the workspace: GitHub
  // maps `pkg/a.py` from the repository's root, not `src/pkg/a.py`.
  fs::create_directories(dir / "src" / ".git");
  fs::create_directories(dir / "src" / "pkg");
  spit(dir / "src" / "pkg" / "a.py", kLeaky);
  json doc = json::parse(run("check --output-format sarif src", dir).out);
  const json& run0 = doc["runs"][0];
  const json& loc = run0["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"];
  EXPECT_EQ(loc["uri"], "pkg/a.py");
  EXPECT_EQ(loc["uriBaseId"], "%SRCROOT%");
  std::string base = run0["originalUriBaseIds"]["%SRCROOT%"]["uri"];
  EXPECT_EQ(base, "file://" + fs::canonical(dir / "src").string() + "/");
  // Outside any repository: relative to the working directory, as before.
  fs::create_directories(dir / "loose");
  spit(dir / "loose" / "b.py", kLeaky);
  json loose = json::parse(run("check --output-format sarif b.py", dir / "loose").out);
  EXPECT_EQ(loose["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "b.py");
}

TEST_F(Cli, FingerprintsSurviveUnrelatedEdits) {
  spit(dir / "leaky.py", kLeaky);
  json a = json::parse(run("check --output-format sarif leaky.py", dir).out);
  spit(dir / "leaky.py", std::string("# a new header line\n\n") + kLeaky);
  json b = json::parse(run("check --output-format sarif leaky.py", dir).out);
  auto fp = [](const json& d) { return d["runs"][0]["results"][0]["partialFingerprints"].dump(); };
  EXPECT_EQ(fp(a), fp(b));
  EXPECT_NE(a["runs"][0]["results"][0]["locations"].dump(), b["runs"][0]["results"][0]["locations"].dump());
}

TEST_F(Cli, NoqaSuppresses) {
  std::string src = kLeaky;
  src.replace(src.find("total += loss\n"), 14, "total += loss  # noqa: OOM101\n");
  spit(dir / "a.py", src);
  EXPECT_EQ(0, run("check a.py", dir).rc);
  std::string other = kLeaky;
  other.replace(other.find("total += loss\n"), 14, "total += loss  # noqa: OOM102\n");
  spit(dir / "b.py", other);
  EXPECT_EQ(1, run("check b.py", dir).rc) << "a noqa for another code does not suppress";
  spit(dir / "c.py", std::string("# oomlint: noqa\n") + kLeaky);
  EXPECT_EQ(0, run("check c.py", dir).rc);
}

TEST_F(Cli, ConfigNearestWinsAndCliOverrides) {
  spit(dir / "pyproject.toml", "[tool.oomlint]\nignore = [\"OOM101\"]\n");
  spit(dir / "top.py", kLeaky);
  spit(dir / "sub" / "oomlint.toml", "select = [\"OOM1\"]\n");
  spit(dir / "sub" / "inner.py", kLeaky);
  Result r = run("check --output-format concise .", dir);
  EXPECT_EQ(std::string::npos, r.out.find("top.py")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("sub/inner.py:10:9: OOM101")) << r.out;
  Result o = run("check --output-format concise --select OOM101 top.py", dir);
  EXPECT_NE(std::string::npos, o.out.find("top.py:10:9: OOM101")) << "CLI --select overrides config";
}

TEST_F(Cli, PerFileIgnoresAndExclude) {
  spit(dir / "oomlint.toml", "exclude = [\"legacy\"]\n[per-file-ignores]\n\"scripts/*.py\" = [\"OOM1\"]\n");
  spit(dir / "legacy" / "old.py", kLeaky);
  spit(dir / "scripts" / "run.py", kLeaky);
  spit(dir / "src" / "train.py", kLeaky);
  Result r = run("check --output-format concise .", dir);
  EXPECT_EQ(std::string::npos, r.out.find("legacy")) << r.out;
  EXPECT_EQ(std::string::npos, r.out.find("scripts/run.py")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("src/train.py")) << r.out;
  // Explicit files are checked unless --force-exclude.
  EXPECT_EQ(1, run("check legacy/old.py", dir).rc);
  EXPECT_EQ(0, run("check --force-exclude legacy/old.py", dir).rc);
}

TEST_F(Cli, BadConfigIsAClearErrorWithExitTwo) {
  spit(dir / "oomlint.toml", "select = [\"OOM1\"\n");
  spit(dir / "a.py", kLeaky);
  Result r = run("check a.py", dir);
  EXPECT_EQ(2, r.rc);
  EXPECT_NE(std::string::npos, r.err.find("oomlint.toml")) << r.err;
  spit(dir / "oomlint.toml", "selec = [\"OOM1\"]\n");
  Result u = run("check a.py", dir);
  EXPECT_EQ(2, u.rc);
  EXPECT_NE(std::string::npos, u.err.find("unknown option `selec`")) << u.err;
  spit(dir / "oomlint.toml", "select = [\"OOM9999\"]\n");
  EXPECT_EQ(2, run("check a.py", dir).rc);
}

TEST_F(Cli, ConfigExtendsABaseAndNamesItsMistakes) {
  // `extend`: the base's settings, then this file's: `ignore` replaces, `extend-*` adds.
  spit(dir / "shared" / "base.toml", "ignore = [\"OOM101\"]\n[severity]\nOOM102 = \"info\"\n");
  spit(dir / "proj" / "oomlint.toml", "extend = \"../shared/base.toml\"\nextend-ignore = [\"OOM201\"]\n");
  spit(dir / "proj" / "a.py", kLeaky);
  EXPECT_EQ(0, run("check a.py", dir / "proj").rc) << "OOM101 ignored by the base";
  Result shown = run("check --show-settings a.py", dir / "proj");
  EXPECT_EQ(std::string::npos, shown.out.find("OOM101 ")) << shown.out;
  EXPECT_EQ(std::string::npos, shown.out.find("OOM201 ")) << shown.out;
  EXPECT_NE(std::string::npos, shown.out.find("OOM102 stored-tensor-with-graph (info)")) << shown.out;
  spit(dir / "proj" / "oomlint.toml", "extend = \"../shared/base.toml\"\nignore = []\n");
  EXPECT_EQ(1, run("check a.py", dir / "proj").rc) << "this file's `ignore` replaces the base's";
  // A cycle, a missing base, and a misspelt key are clear errors with the line.
  spit(dir / "shared" / "base.toml", "extend = \"../proj/oomlint.toml\"\n");
  spit(dir / "proj" / "oomlint.toml", "extend = \"../shared/base.toml\"\n");
  Result cycle = run("check a.py", dir / "proj");
  EXPECT_EQ(2, cycle.rc);
  EXPECT_NE(std::string::npos, cycle.err.find("makes a cycle")) << cycle.err;
  spit(dir / "proj" / "oomlint.toml", "extend = \"../nowhere.toml\"\n");
  EXPECT_NE(std::string::npos, run("check a.py", dir / "proj").err.find("nowhere.toml not found"));
  spit(dir / "proj" / "oomlint.toml", "select = [\"OOM1\"]\n\nextend-selct = [\"OOM2\"]\n");
  Result typo = run("check a.py", dir / "proj");
  EXPECT_EQ(2, typo.rc);
  EXPECT_NE(std::string::npos, typo.err.find("oomlint.toml:3: unknown option `extend-selct` (did you mean `extend-select`?)")) << typo.err;
  spit(dir / "proj" / "oomlint.toml", "colour = true\n");
  Result far = run("check a.py", dir / "proj");
  EXPECT_NE(std::string::npos, far.err.find("unknown option `colour`")) << far.err;
  EXPECT_EQ(std::string::npos, far.err.find("did you mean")) << "nothing close: no guess";
}

TEST_F(Cli, ConfigSetsOutputFormatFixAndUnsafeFixesUnlessTheCommandLineDoes) {
  spit(dir / "oomlint.toml", "output-format = \"concise\"\n");
  spit(dir / "a.py", kLeaky);
  Result concise = run("check a.py", dir);
  EXPECT_NE(std::string::npos, concise.out.find("a.py:10:9: OOM101 ")) << concise.out;
  EXPECT_EQ(std::string::npos, concise.out.find(" | ")) << "no source excerpt in the concise format";
  Result json = run("check --output-format json a.py", dir);
  EXPECT_EQ('[', json.out[0]) << json.out;
  spit(dir / "oomlint.toml", "fix = true\nunsafe-fixes = true\n");
  EXPECT_EQ(1, run("check --no-fix a.py", dir).rc);
  EXPECT_EQ(std::string::npos, slurp(dir / "a.py").find("loss.item()")) << "--no-fix wins over the file";
  run("check --no-unsafe-fixes a.py", dir);
  EXPECT_EQ(std::string::npos, slurp(dir / "a.py").find("loss.item()")) << "OOM101's fix is unsafe: not applied";
  run("check a.py", dir);
  EXPECT_NE(std::string::npos, slurp(dir / "a.py").find("total += loss.item()")) << "fix and unsafe-fixes from the file";
  spit(dir / "oomlint.toml", "fix = \"yes\"\n");
  Result bad = run("check a.py", dir);
  EXPECT_EQ(2, bad.rc);
  EXPECT_NE(std::string::npos, bad.err.find("oomlint.toml:1: `fix` must be true or false")) << bad.err;
}

TEST_F(Cli, UserConfigAppliesWhereNoProjectFileDoes) {
  fs::path home = dir / "xdg";
  spit(home / "oomlint" / "oomlint.toml", "ignore = [\"OOM101\"]\n");
  spit(dir / "work" / "a.py", kLeaky);
  std::string env = "XDG_CONFIG_HOME='" + home.string() + "' ";
  EXPECT_EQ(0, run("check a.py", dir / "work", "", env).rc);
  spit(dir / "work" / "oomlint.toml", "select = [\"OOM1\"]\n");
  EXPECT_EQ(1, run("check a.py", dir / "work", "", env).rc) << "a project file wins";
}

namespace {

const char* kAmp =
    "import torch\n"
    "from torch.utils.checkpoint import checkpoint\n"
    "\n"
    "\n"
    "def train(model, block, loader, optimizer):\n"
    "    scaler = torch.cuda.amp.GradScaler()\n"
    "    for x, y in loader:\n"
    "        optimizer.zero_grad(set_to_none=False)\n"
    "        with torch.cuda.amp.autocast():\n"
    "            h = checkpoint(block, x)\n"
    "            loss = model(h, y)\n"
    "        scaler.scale(loss).backward()\n"
    "        scaler.step(optimizer)\n"
    "        scaler.update()\n";

/// "LINE:CODE" of each finding in concise output.
std::multiset<std::string> linesAndCodes(const std::string& out) {
  std::multiset<std::string> found;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    size_t code = line.find(": OOM");
    if (code == std::string::npos) continue;
    size_t first = line.find(':');
    found.insert(line.substr(first + 1, line.find(':', first + 1) - first - 1) + ":" + line.substr(code + 2, 6));
  }
  return found;
}

}  // namespace

TEST(TargetTorch, RequirementsGiveTheirLowerBound) {
  using oomlint::TorchVersion;
  using oomlint::torchFloorOf;
  EXPECT_EQ("2.1", torchFloorOf("torch>=2.1").str());
  EXPECT_EQ("2.1", torchFloorOf("torch >= 2.1.0, <3").str());
  EXPECT_EQ("2.2", torchFloorOf("torch==2.2.*").str());
  EXPECT_EQ("2.0", torchFloorOf("Torch[opt-einsum]~=2.0.1 ; python_version >= '3.8'").str());
  EXPECT_EQ("1.13", torchFloorOf("torch>1.12,>=1.13").str()) << "the higher of two lower bounds";
  EXPECT_FALSE(torchFloorOf("torch<2.0").known()) << "no lower bound";
  EXPECT_FALSE(torchFloorOf("torchvision>=0.16").known()) << "another package";
  EXPECT_FALSE(torchFloorOf("torch").known());
  EXPECT_FALSE(TorchVersion::parse("latest").has_value());
  EXPECT_EQ("2.4", TorchVersion::parse("2.4.1+cu121")->str());
}

TEST_F(Cli, TargetTorchKeepsFixesAndAdviceToTheOldestSupportedPyTorch) {
  spit(dir / "amp.py", kAmp);
  using S = std::multiset<std::string>;
  const S all = {"6:OOM701", "8:OOM301", "9:OOM701", "10:OOM403"};
  EXPECT_EQ(all, linesAndCodes(run("check --no-cache --output-format concise amp.py", dir).out)) << "no target: every API";
  // torch.amp.GradScaler needs 2.3; torch.autocast 1.10; use_reentrant= 1.11.
  EXPECT_EQ(S({"8:OOM301", "9:OOM701", "10:OOM403"}), linesAndCodes(run("check --no-cache --output-format concise --target-torch 2.1 amp.py", dir).out));
  EXPECT_EQ(S({"8:OOM301"}), linesAndCodes(run("check --no-cache --output-format concise --target-torch 1.9 amp.py", dir).out));
  // Before 2.0 `set_to_none` defaulted to False: the fix says True instead of dropping it.
  Result old = run("check --no-cache --diff --unsafe-fixes --target-torch 1.13 amp.py", dir);
  EXPECT_NE(std::string::npos, old.out.find("+        optimizer.zero_grad(set_to_none=True)")) << old.out;
  Result current = run("check --no-cache --diff --unsafe-fixes amp.py", dir);
  EXPECT_NE(std::string::npos, current.out.find("+        optimizer.zero_grad()")) << current.out;
  // From the configuration, then from the project's declared requirement.
  spit(dir / "oomlint.toml", "target-torch = \"2.1\"\n");
  EXPECT_EQ(S({"8:OOM301", "9:OOM701", "10:OOM403"}), linesAndCodes(run("check --no-cache --output-format concise amp.py", dir).out));
  EXPECT_EQ(all, linesAndCodes(run("check --no-cache --output-format concise --target-torch 2.5 amp.py", dir).out)) << "the flag wins";
  fs::remove(dir / "oomlint.toml");
  spit(dir / "pyproject.toml", "[project]\nname = \"x\"\ndependencies = [\"numpy\", \"torch>=1.10,<2\"]\n");
  EXPECT_EQ(S({"8:OOM301", "9:OOM701"}), linesAndCodes(run("check --no-cache --output-format concise amp.py", dir).out));
  EXPECT_NE(std::string::npos, run("check --show-settings amp.py", dir).out.find("Target PyTorch: 1.10"));
  fs::remove(dir / "pyproject.toml");
  spit(dir / "requirements.txt", "numpy>=1.24  # arrays\ntorch==2.2.1\n");
  EXPECT_EQ(S({"8:OOM301", "9:OOM701", "10:OOM403"}), linesAndCodes(run("check --no-cache --output-format concise amp.py", dir).out));
  // The results cache tells targets apart.
  fs::remove(dir / "requirements.txt");
  EXPECT_EQ(all, linesAndCodes(run("check --output-format concise amp.py", dir).out));
  EXPECT_EQ(S({"8:OOM301"}), linesAndCodes(run("check --output-format concise --target-torch 1.9 amp.py", dir).out));
  Result bad = run("check --target-torch newest amp.py", dir);
  EXPECT_EQ(2, bad.rc);
  EXPECT_NE(std::string::npos, bad.err.find("--target-torch")) << bad.err;
  spit(dir / "oomlint.toml", "target-torch = \"two\"\n");
  EXPECT_EQ(2, run("check amp.py", dir).rc);
}

/// Runs `cmd` through the shell in `cwd` and returns its standard output.
std::string shellOutput(const std::string& cmd, const fs::path& cwd) {
  fs::path out = fs::temp_directory_path() / ("oomlint_cli_sh_" + std::to_string(::getpid()));
  int rc = std::system(("cd '" + cwd.string() + "' && " + cmd + " >'" + out.string() + "'").c_str());
  EXPECT_EQ(0, rc) << cmd;
  std::string text = slurp(out);
  fs::remove(out);
  return text;
}

/// The lines of `text`, sorted, each with `prefix` taken off its front.
std::vector<std::string> sortedLines(const std::string& text, const std::string& prefix = "") {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!prefix.empty() && line.rfind(prefix, 0) == 0) line.erase(0, prefix.size());
    if (!line.empty()) lines.push_back(line);
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

TEST_F(Cli, InARepositoryTheWalkSkipsWhatGitIgnores) {
  // .git/info/exclude and core.excludesFile count, ranked below every .gitignore as git ranks
  // them; outside a repository only the .gitignore files apply.
  ASSERT_EQ(0, std::system(("git init -q '" + dir.string() + "'").c_str()));
  spit(dir / ".git" / "info" / "exclude", "# comment\nlocal_only.py\n");
  spit(dir / "global_ignore", "scratch/\nkeep_me.py\n");
  ASSERT_EQ(0, std::system(("git -C '" + dir.string() + "' config core.excludesFile '" + (dir / "global_ignore").string() + "'").c_str()));
  // A .gitignore outranks both: `!keep_me.py` brings back what the global file ignores (libgit2
  // 1.5 gets this one wrong, which is why the walk does not ask it).
  spit(dir / ".gitignore", "gen/*\n!gen/keep.py\nlogs/\n!keep_me.py\n");
  for (const char* f : {"local_only.py", "scratch/try.py", "gen/made.py", "gen/keep.py", "logs/run.py", "logs/sub/deep.py", "src/real.py",
                        "keep_me.py"})
    spit(dir / f, kLeaky);
  Result r = run("check --no-cache --output-format concise .", dir);
  EXPECT_NE(std::string::npos, r.out.find("src/real.py")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("gen/keep.py")) << "re-included by `!gen/keep.py`: " << r.out;
  EXPECT_NE(std::string::npos, r.out.find("keep_me.py")) << ".gitignore outranks core.excludesFile: " << r.out;
  for (const char* skipped : {"local_only.py", "scratch/try.py", "gen/made.py", "logs/run.py", "deep.py"})
    EXPECT_EQ(std::string::npos, r.out.find(skipped)) << skipped << "\n" << r.out;
  // From a subfolder the work tree's rules still hold.
  spit(dir / "src" / "local_only.py", kLeaky);
  EXPECT_EQ(std::string::npos, run("check --no-cache --output-format concise .", dir / "src").out.find("local_only.py"));
  fs::remove(dir / "src" / "local_only.py");
  // A file or folder named on the command line is checked even when git ignores it.
  EXPECT_NE(std::string::npos, run("check --no-cache --output-format concise local_only.py", dir).out.find("local_only.py:10"));
  EXPECT_NE(std::string::npos, run("check --no-cache --output-format concise scratch", dir).out.find("scratch/try.py:10"));
  EXPECT_NE(std::string::npos, run("check --no-cache --output-format concise .", dir / "scratch").out.find("try.py:10"));
  spit(dir / "oomlint.toml", "respect-gitignore = false\n");
  EXPECT_NE(std::string::npos, run("check --no-cache --output-format concise .", dir).out.find("local_only.py")) << "respect-gitignore = false";
  fs::remove(dir / "oomlint.toml");
  // The results cache sits at the project root, wherever oomlint runs in it.
  fs::remove_all(dir / ".oomlint_cache");
  run("check ../src/real.py", dir / "gen");
  EXPECT_TRUE(fs::exists(dir / ".oomlint_cache"));
  EXPECT_FALSE(fs::exists(dir / "gen" / ".oomlint_cache"));
  EXPECT_NE(std::string::npos, run("clean", dir / "src").out.find("Removed " + (dir / ".oomlint_cache").string()));
}

TEST_F(Cli, TheWalkAgreesWithGitOnEveryIgnoreRule) {
  // Held to git itself: the files the walk reads are exactly the untracked, not-ignored .py files
  // `git ls-files --others --exclude-standard` lists, over negations, anchors, `**`, folder-only
  // patterns, classes, escapes, nested .gitignore files, info/exclude and the global file.
  fs::path home = dir / "home";
  ASSERT_EQ(0, std::system(("git init -q '" + (dir / "w").string() + "'").c_str()));
  fs::path w = dir / "w";
  spit(home / ".gitconfig", "[core]\n\texcludesFile = ~/global.ignore\n");
  spit(home / "global.ignore", "*.global.py\ng.py\n");
  spit(w / ".git" / "info" / "exclude", "excluded_local.py\n!anchored.py\nlocal/\n");
  spit(w / ".gitignore",
       "*.gen.py\n!keep.gen.py\n/anchored.py\ndocs/**/draft_*.py\ndata/\ntmp*/\n!tmpkeep/\na/**/z.py\n**/cache_dir\nsub/*\n!sub/inner/\n"
       "[ab]_class.py\n?_one.py\n\\#hash.py\n\\!bang.py\n!g.py\nspace.py   \n");
  spit(w / "a" / ".gitignore", "!z.py\n*.tmp.py\n");
  spit(w / "pkg" / ".gitignore", "/only_here.py\n");
  spit(dir / ".gitignore", "plain.py\n");  // above the work tree: git never reads it
  for (const char* f :
       {"x.gen.py", "keep.gen.py", "deep/y.gen.py", "anchored.py", "deep/anchored.py", "docs/draft_a.py", "docs/x/y/draft_b.py",
        "docs/notdraft.py", "data/d.py", "deep/data/d.py", "tmp1/t.py", "tmpkeep/t.py", "a/z.py", "a/b/c/z.py", "a/b/q.tmp.py",
        "a/b/fine.py", "cache_dir/c.py", "x/cache_dir/c.py", "sub/x.py", "sub/inner/f.py", "sub/other/f.py", "a_class.py",
        "c_class.py", "q_one.py", "qq_one.py", "#hash.py", "!bang.py", "g.py", "deep/g.py", "m.global.py", "excluded_local.py",
        "local/l.py", "pkg/only_here.py", "pkg/deeper/only_here.py", "space.py", "plain.py"})
    spit(w / f, "x = 1\n");
  std::string env = "HOME='" + home.string() + "' XDG_CONFIG_HOME='" + (home / "xdg").string() + "' GIT_CONFIG_NOSYSTEM=1 ";
  std::vector<std::string> git = sortedLines(shellOutput(env + "git ls-files --others --exclude-standard -- '*.py'", w));
  ASSERT_GT(git.size(), 10u);
  Result walked = run("check --show-files .", w, "", env);
  ASSERT_EQ(0, walked.rc) << walked.err;
  EXPECT_EQ(git, sortedLines(walked.out, fs::canonical(w).string() + "/"));  // --show-files prints absolute paths
  // The same from a subfolder: what git lists there.
  std::vector<std::string> gitSub = sortedLines(shellOutput(env + "git ls-files --others --exclude-standard -- '*.py'", w / "a"));
  EXPECT_EQ(gitSub, sortedLines(run("check --show-files .", w / "a", "", env).out, fs::canonical(w / "a").string() + "/"));
}

TEST_F(Cli, TheGlobalIgnoreFileComesFromGitsConfiguration) {
  // core.excludesFile in the user's ~/.gitconfig (quoted, `~/` expanded), else git's default
  // $XDG_CONFIG_HOME/git/ignore.
  fs::path home = dir / "home", repo = dir / "repo";
  ASSERT_EQ(0, std::system(("git init -q '" + repo.string() + "'").c_str()));
  const char* config = "[user]\n\tname = x\n[core]\n\texcludesFile = \"~/my ignores\"  ; the user's\n";
  spit(home / ".gitconfig", config);
  spit(home / "my ignores", "*_scratch.py\n");
  spit(home / "xdg" / "git" / "ignore", "*_draft.py\n");
  for (const char* f : {"a_scratch.py", "b_draft.py", "real.py"}) spit(repo / f, kLeaky);
  std::string env = "HOME='" + home.string() + "' XDG_CONFIG_HOME='" + (home / "xdg").string() + "' GIT_CONFIG_NOSYSTEM=1 ";
  Result r = run("check --no-cache --output-format concise .", repo, "", env);
  EXPECT_NE(std::string::npos, r.out.find("real.py")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("b_draft.py")) << "core.excludesFile replaces the default file: " << r.out;
  EXPECT_EQ(std::string::npos, r.out.find("a_scratch.py")) << r.out;
  fs::remove(home / ".gitconfig");
  r = run("check --no-cache --output-format concise .", repo, "", env);
  EXPECT_NE(std::string::npos, r.out.find("a_scratch.py")) << r.out;
  EXPECT_EQ(std::string::npos, r.out.find("b_draft.py")) << "the default global file: " << r.out;
}

TEST_F(Cli, WalkSkipsHiddenVenvBuildAndGitignored) {
  spit(dir / ".gitignore", "generated/\n*_tmp.py\n");
  spit(dir / "generated" / "g.py", kLeaky);
  spit(dir / "x_tmp.py", kLeaky);
  spit(dir / ".hidden" / "h.py", kLeaky);
  spit(dir / "build" / "b.py", kLeaky);
  spit(dir / "myenv" / "pyvenv.cfg", "home = /usr\n");
  spit(dir / "myenv" / "lib" / "v.py", kLeaky);
  spit(dir / "pkg" / "real.py", kLeaky);
  spit(dir / "pkg" / "notes.txt", kLeaky);
  Result r = run("check --output-format concise .", dir);
  EXPECT_NE(std::string::npos, r.out.find("pkg/real.py")) << r.out;
  for (const char* skipped : {"g.py", "x_tmp.py", "h.py", "b.py", "v.py", "notes.txt"})
    EXPECT_EQ(std::string::npos, r.out.find(skipped)) << skipped << "\n" << r.out;
  // A virtualenv named on the command line is walked, as asked.
  r = run("check --no-cache --output-format concise myenv", dir);
  EXPECT_NE(std::string::npos, r.out.find("v.py")) << r.out;
}

TEST_F(Cli, ParseErrorsAreReportedAndOtherFilesStillChecked) {
  spit(dir / "a_broken.py", std::string(kLeaky) + "\ndef oops(:\n    pass\n");
  spit(dir / "b_fine.py", kLeaky);
  Result r = run("check --output-format concise .", dir);
  EXPECT_EQ(1, r.rc);
  EXPECT_NE(std::string::npos, r.out.find("a_broken.py:13:")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("OOM000")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("a_broken.py:10:9: OOM101")) << "the recovered part is analysed\n" << r.out;
  EXPECT_NE(std::string::npos, r.out.find("b_fine.py:10:9: OOM101")) << r.out;
}

TEST_F(Cli, BadInputNeverCrashes) {
  spit(dir / "empty.py", "");
  spit(dir / "binary.py", std::string("\x7f" "ELF\0\0\1\2\3", 9));
  spit(dir / "latin1.py", "import torch\n# caf\xe9\nx = 1\n");
  spit(dir / "bom.py", "\xEF\xBB\xBFimport torch\nx = 1\n");
  spit(dir / "crlf.py", "import torch\r\ndef evaluate(model, loader):\r\n    model.eval()\r\n    for x in loader:\r\n        model(x)\r\n");
  std::string deep = "x = " + std::string(10000, '[') + std::string(10000, ']') + "\n";
  spit(dir / "deep.py", deep);
  std::string ifs;
  for (int i = 0; i < 10000; ++i) ifs += std::string(static_cast<size_t>(i % 50), ' ') + "if x:\n";
  spit(dir / "ifs.py", ifs);
  Result r = run("check --output-format concise .", dir);
  EXPECT_TRUE(r.rc == 0 || r.rc == 1) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("binary.py:1:1: OOM000 file contains NUL bytes")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("latin1.py:2:6: OOM000 invalid UTF-8")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("crlf.py:5:9: OOM201")) << r.out;
  EXPECT_EQ(std::string::npos, r.out.find("empty.py")) << r.out;
  EXPECT_EQ(std::string::npos, r.out.find("bom.py")) << r.out;
  Result missing = run("check does_not_exist.py", dir);
  EXPECT_EQ(1, missing.rc);
  EXPECT_NE(std::string::npos, missing.out.find("OOM001")) << missing.out;
}

TEST_F(Cli, InvalidUtf8QuotedInAFindingStillWritesEveryJsonFormat) {
  // The estimate's basis quotes the layer's source text, invalid bytes and all (found by
  // fuzz/python_rules): the JSON writers replace them instead of failing the run.
  spit(dir / "model.py",
       "import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
       "        super().__init__()\n        self.body = nn.\xff\xffSequential(nn.Linear(1024, 4096), nn.Linear(4096, 1024))\n"
       "        self.head = nn.Linear(1024, 10)\n\n\ndef tune():\n    model = Net().cuda()\n"
       "    for p in model.body.parameters():\n        p.requires_grad = False\n"
       "    return torch.optim.Adagrad(model.parameters())\n");
  for (const char* format : {"json", "json-lines", "sarif", "gitlab"}) {
    Result r = run(std::string("check --no-cache --exit-zero --output-format ") + format + " model.py", dir);
    EXPECT_EQ(0, r.rc) << format << ": " << r.err;
    EXPECT_EQ(std::string::npos, r.err.find("internal error")) << format << ": " << r.err;
    EXPECT_NE(std::string::npos, r.out.find("OOM305")) << format << ": " << r.out;
  }
}

TEST_F(Cli, HugeFileIsChecked) {
  // 16 MB of source: its syntax tree takes ~800 MB of the parser arena, through every block size
  // and past the largest block (64 MB) a dozen times; parse_arena_test covers the arena's limits.
  // Larger files only take longer (50 MB took 37 s here and 218 s under the sanitizers).
  const size_t size = 16u << 20;
  std::string chunk = kLeaky;
  std::string big;
  big.reserve(size);
  while (big.size() < size) big += chunk;
  spit(dir / "huge.py", big);
  Result r = run("check --statistics huge.py", dir);
  EXPECT_EQ(1, r.rc) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("OOM101")) << r.out;
}

TEST_F(Cli, StdinWithFilename) {
  Result r = run("check --output-format concise --stdin-filename pkg/train.py -", dir, kLeaky);
  EXPECT_EQ(1, r.rc);
  EXPECT_EQ(0u, r.out.find("pkg/train.py:10:9: OOM101")) << r.out;
}

TEST_F(Cli, StdinFilenameAloneReadsStandardInput) {
  // ruff reads standard input for `--stdin-filename F` without `-`; editor plugins rely on it. The
  // folder holds another leaky file: checking the folder instead would report it too.
  spit(dir / "other.py", kLeaky);
  Result r = run("check --output-format concise --stdin-filename pkg/train.py", dir, kLeaky);
  EXPECT_EQ(1, r.rc) << r.err;
  EXPECT_EQ(0u, r.out.find("pkg/train.py:10:9: OOM101")) << r.out;
  EXPECT_EQ(std::string::npos, r.out.find("other.py")) << r.out;
}

TEST_F(Cli, ColorFollowsTheFlagThenTheEnvironmentThenTheTerminal) {
  spit(dir / "a.py", kLeaky);
  const std::string esc = "\x1b[";
  auto colored = [&](const std::string& args) { return run("check " + args + " a.py", dir).out.find(esc) != std::string::npos; };
  EXPECT_FALSE(colored(""));  // not a terminal
  EXPECT_TRUE(colored("--color always"));
  ::setenv("FORCE_COLOR", "1", 1);
  EXPECT_TRUE(colored(""));
  EXPECT_FALSE(colored("--color never"));
  ::setenv("NO_COLOR", "1", 1);
  EXPECT_TRUE(colored(""));  // forcing beats NO_COLOR, as in ruff
  ::unsetenv("FORCE_COLOR");
  ::setenv("CLICOLOR_FORCE", "0", 1);  // "0" does not force
  EXPECT_TRUE(colored("--color always"));
  ::unsetenv("CLICOLOR_FORCE");
  // On a terminal (a pseudo-terminal from util-linux's `script`): coloured unless NO_COLOR.
  auto onTerminal = [&](const std::string& env) {
    fs::path out = dir / "tty.out";
    std::string cmd = "cd '" + dir.string() + "' && " + env + " script -qec '" + std::string(OOMLINT_BINARY) + " check a.py' /dev/null > '" +
                      out.string() + "' 2>&1";
    EXPECT_NE(-1, std::system(cmd.c_str()));
    return slurp(out).find(esc) != std::string::npos;
  };
  EXPECT_TRUE(onTerminal("env -u NO_COLOR"));
  EXPECT_FALSE(onTerminal("env NO_COLOR=1"));
  ::unsetenv("NO_COLOR");
  Result bad = run("check --color sometimes a.py", dir);
  EXPECT_EQ(bad.rc, 2) << bad.err;
}

TEST_F(Cli, FixDiffAndIdempotence) {
  spit(dir / "eval.py", kEval);
  spit(dir / "leaky.py", kLeaky);
  ::chmod((dir / "eval.py").c_str(), 0640);
  Result d = run("check --diff eval.py", dir);
  EXPECT_EQ(1, d.rc);
  EXPECT_NE(std::string::npos, d.out.find("+    with torch.no_grad():")) << d.out;
  EXPECT_EQ(kEval, slurp(dir / "eval.py")) << "--diff changes nothing";
  Result f = run("check --fix eval.py leaky.py", dir);
  EXPECT_EQ(1, f.rc) << "the unsafe OOM101 fix is not applied without --unsafe-fixes";
  std::string fixed = slurp(dir / "eval.py");
  EXPECT_NE(std::string::npos, fixed.find("    with torch.no_grad():\n        for x, y in loader:\n            out = model(x)\n")) << fixed;
  struct stat st {};
  ::stat((dir / "eval.py").c_str(), &st);
  EXPECT_EQ(0640u, st.st_mode & 0777) << "file mode kept";
  EXPECT_EQ(kLeaky, slurp(dir / "leaky.py"));
  Result u = run("check --fix --unsafe-fixes leaky.py", dir);
  EXPECT_EQ(0, u.rc) << u.out;
  EXPECT_NE(std::string::npos, slurp(dir / "leaky.py").find("total += loss.item()"));
  std::string once = slurp(dir / "leaky.py") + slurp(dir / "eval.py");
  run("check --fix --unsafe-fixes .", dir);
  EXPECT_EQ(once, slurp(dir / "leaky.py") + slurp(dir / "eval.py")) << "a second --fix changes nothing";
  // Fixed files still compile.
  std::string py = "python3 -m py_compile '" + (dir / "eval.py").string() + "' '" + (dir / "leaky.py").string() + "'";
  EXPECT_EQ(0, std::system(py.c_str()));
}

TEST_F(Cli, FixKeepsTabsAndCrlf) {
  std::string tabs = "import torch\n\ndef evaluate(model, loader):\n\tmodel.eval()\n\tfor x in loader:\n\t\tout = model(x)  # keep me\r\n";
  spit(dir / "tabs.py", tabs);
  run("check --fix tabs.py", dir);
  EXPECT_EQ("import torch\n\ndef evaluate(model, loader):\n\tmodel.eval()\n\twith torch.no_grad():\n\t\tfor x in loader:\n\t\t\tout = model(x)  # keep me\r\n",
            slurp(dir / "tabs.py"));
  std::string crlf = "import torch\r\n\r\ndef evaluate(model, loader):\r\n    model.eval()\r\n    for x in loader:\r\n        out = model(x)\r\n";
  spit(dir / "crlf.py", crlf);
  run("check --fix crlf.py", dir);
  EXPECT_EQ("import torch\r\n\r\ndef evaluate(model, loader):\r\n    model.eval()\r\n    with torch.no_grad():\r\n        for x in loader:\r\n            out = model(x)\r\n",
            slurp(dir / "crlf.py"));
}

TEST_F(Cli, ReadOnlyFileIsReportedNotTouched) {
  spit(dir / "eval.py", kEval);
  ::chmod((dir / "eval.py").c_str(), 0444);
  Result r = run("check --fix eval.py", dir);
  EXPECT_NE(std::string::npos, r.out.find("read-only")) << r.out;
  EXPECT_EQ(kEval, slurp(dir / "eval.py"));
}

TEST_F(Cli, RuleDocsAndVersion) {
  Result r = run("rule OOM101", dir);
  EXPECT_EQ(0, r.rc);
  EXPECT_NE(std::string::npos, r.out.find("# accumulated-tensor-with-graph (OOM101)"));
  EXPECT_NE(std::string::npos, r.out.find("## Why is this bad?"));
  Result lower = run("rule oom201", dir);
  EXPECT_EQ(0, lower.rc);
  Result all = run("rule --all", dir);
  for (const char* code : {"OOM101", "OOM102", "OOM103", "OOM104", "OOM105", "OOM201", "OOM301", "OOM302", "OOM401", "OOM501"})
    EXPECT_NE(std::string::npos, all.out.find(std::string("(") + code + ")")) << code;
  EXPECT_EQ(2, run("rule OOM999", dir).rc);
  // By name as well as by code.
  Result named = run("rule accumulated-tensor-with-graph", dir);
  EXPECT_EQ(0, named.rc) << named.err;
  EXPECT_EQ(named.out, r.out);
  EXPECT_EQ(2, run("rule no-such-rule", dir).rc);
  Result v = run("--version", dir);
  EXPECT_EQ(0, v.rc);
  EXPECT_EQ(0u, v.out.find("oomlint 0."));
  Result js = run("rule --all --output-format json", dir);
  json j = json::parse(js.out);
  EXPECT_GE(j.size(), 10u);
}

TEST_F(Cli, DiffOfFixesFarApartIsTwoSmallHunks) {
  // Two one-line fixes 20,000 lines apart: two hunks of a few lines, each `-` before `+` (as
  // diff(1) and git print a change), never one hunk spanning the file.
  std::string src = "import torch\n\n\ndef f(model, x):\n    with torch.cuda.amp.autocast():\n        y = model(x)\n";
  for (int i = 0; i < 20000; ++i) src += "    z" + std::to_string(i) + " = " + std::to_string(i) + "\n";
  src += "    with torch.cuda.amp.autocast():\n        y = model(y)\n    return y\n";
  spit(dir / "far.py", src);
  Result d = run("check --diff --select OOM701 far.py", dir);
  EXPECT_EQ(1, d.rc) << d.err;
  size_t hunks = 0, pos = 0;
  while ((pos = d.out.find("\n@@ ", pos)) != std::string::npos) ++hunks, ++pos;
  EXPECT_EQ(hunks, 2u) << d.out.substr(0, 2000);
  EXPECT_LT(std::count(d.out.begin(), d.out.end(), '\n'), 40) << d.out.substr(0, 2000);
  size_t minus = d.out.find("\n-    with torch.cuda.amp.autocast"), plus = d.out.find("\n+    with torch.autocast");
  ASSERT_NE(minus, std::string::npos) << d.out;
  ASSERT_NE(plus, std::string::npos) << d.out;
  EXPECT_LT(minus, plus);
  EXPECT_NE(std::string::npos, d.out.find("@@ -2,7 +2,7 @@")) << d.out;
  EXPECT_NE(std::string::npos, d.out.find("@@ -20004,6 +20004,6 @@")) << d.out;
  EXPECT_EQ(slurp(dir / "far.py"), src);  // --diff changes nothing
}

TEST_F(Cli, SyntaxErrorsTheParserGetsWrongNeverBlockACommit) {
  // Valid Python that tree-sitter-python rejects (found in torch and litgpt) is repaired.
  spit(dir / "valid.py",
       "import torch\n\n\ndef split(endpoint, s):\n    host, *rest = endpoint, *[]\n    y = 1, *[]\n"
       "    z = 2, *{3}\n    return host, *(int(x) for x in s)\n");
  Result valid = run("check --output-format concise valid.py", dir);
  EXPECT_EQ(0, valid.rc) << valid.out;
  // A real syntax error is reported ...
  std::string broken = "import torch\n\ndef f(:\n    pass\n";
  spit(dir / "broken.py", broken);
  Result r = run("check --output-format concise broken.py", dir);
  EXPECT_EQ(1, r.rc);
  EXPECT_NE(std::string::npos, r.out.find("OOM000")) << r.out;
  // ... and silenced by `# noqa: OOM000` on its line ...
  spit(dir / "broken.py", "import torch\n\ndef f(:  # noqa: OOM000\n    pass\n");
  Result line = run("check --output-format concise broken.py", dir);
  EXPECT_EQ(0, line.rc) << line.out;
  // ... or by per-file-ignores; no other rule is silenced with it.
  spit(dir / "broken.py", broken);
  spit(dir / "leaky.py", kLeaky);
  spit(dir / "pyproject.toml", "[tool.oomlint]\nper-file-ignores = {\"broken.py\" = [\"OOM000\"], \"leaky.py\" = [\"OOM000\"]}\n");
  Result file = run("check --output-format concise broken.py leaky.py", dir);
  EXPECT_EQ(1, file.rc) << file.err;
  EXPECT_EQ(std::string::npos, file.out.find("OOM000")) << file.out;
  EXPECT_NE(std::string::npos, file.out.find("leaky.py:10:9: OOM101")) << file.out;
  // A `# noqa: OOM000` where nothing fails to parse suppresses nothing: OOM900 says so.
  spit(dir / "clean.py", std::string(kLeaky) + "x = 1  # noqa: OOM000\n");
  Result unused = run("check --isolated --output-format concise --extend-select OOM900 clean.py", dir);
  EXPECT_NE(std::string::npos, unused.out.find("OOM900")) << unused.out;
}

TEST_F(Cli, ReviewAndCiFormats) {
  spit(dir / "a.py", kLeaky);
  json all = json::parse(run("check --output-format json a.py", dir).out);
  ASSERT_EQ(all.size(), 1u);
  // json-lines: the json format's objects, one per line.
  Result jl = run("check --output-format json-lines a.py", dir);
  EXPECT_EQ(1, jl.rc);
  EXPECT_EQ(json::parse(jl.out), all[0]);
  EXPECT_EQ(std::count(jl.out.begin(), jl.out.end(), '\n'), 1);
  // pylint: `path:line: [CODE] message`.
  Result pl = run("check --output-format pylint a.py", dir);
  EXPECT_EQ(0u, pl.out.find("a.py:10: [OOM101] ")) << pl.out;
  // Azure Pipelines logging commands.
  Result az = run("check --output-format azure a.py", dir);
  EXPECT_EQ(0u, az.out.find("##vso[task.logissue type=error;sourcepath=a.py;linenumber=10;columnnumber=9;code=OOM101;]")) << az.out;
  // reviewdog's rdjson.
  json rd = json::parse(run("check --output-format rdjson a.py", dir).out);
  EXPECT_EQ(rd["source"]["name"], "oomlint");
  ASSERT_EQ(rd["diagnostics"].size(), 1u);
  const json& d = rd["diagnostics"][0];
  EXPECT_EQ(d["code"]["value"], "OOM101");
  EXPECT_EQ(d["location"]["path"], "a.py");
  EXPECT_EQ(d["location"]["range"]["start"]["line"], 10);
  EXPECT_EQ(d["location"]["range"]["start"]["column"], 9);
  EXPECT_EQ(d["severity"], "ERROR");
  // GitLab fingerprints come from a fixed hash: pinned, so a build with another standard library
  // (or a checkout elsewhere) gives the same value and GitLab keeps matching the issue.
  json gl = json::parse(run("check --output-format gitlab a.py", dir).out);
  ASSERT_EQ(gl.size(), 1u);
  std::string fp = gl[0]["fingerprint"];
  fs::path elsewhere = dir / "copy";
  fs::create_directories(elsewhere);
  spit(elsewhere / "a.py", kLeaky);
  EXPECT_EQ(json::parse(run("check --output-format gitlab a.py", elsewhere).out)[0]["fingerprint"], fp);
  EXPECT_EQ(fp.substr(fp.size() - 4), "17d3") << fp;
  Result bad = run("check --output-format yaml a.py", dir);
  EXPECT_EQ(2, bad.rc);
  EXPECT_NE(std::string::npos, bad.err.find("json-lines")) << bad.err;
}

TEST_F(Cli, ShowFilesShowSettingsAndClean) {
  spit(dir / "a.py", kLeaky);
  fs::create_directories(dir / "legacy");
  spit(dir / "legacy" / "old.py", kLeaky);
  spit(dir / "pyproject.toml", "[tool.oomlint]\nextend-exclude = [\"legacy\"]\nignore = [\"OOM102\"]\n");
  Result files = run("check --show-files .", dir);
  EXPECT_EQ(0, files.rc) << files.err;
  EXPECT_NE(std::string::npos, files.out.find("/a.py\n")) << files.out;
  EXPECT_EQ(std::string::npos, files.out.find("old.py")) << files.out;
  Result settings = run("check --show-settings legacy/old.py", dir);
  EXPECT_EQ(0, settings.rc) << settings.err;
  EXPECT_NE(std::string::npos, settings.out.find("pyproject.toml")) << settings.out;
  EXPECT_NE(std::string::npos, settings.out.find("Excluded: yes")) << settings.out;
  EXPECT_NE(std::string::npos, settings.out.find("OOM101 accumulated-tensor-with-graph")) << settings.out;
  EXPECT_EQ(std::string::npos, settings.out.find("OOM102 ")) << settings.out;
  EXPECT_NE(std::string::npos, run("check --show-settings a.py", dir).out.find("Excluded: no"));
  // clean: the cache a check wrote goes.
  run("check a.py", dir);
  ASSERT_TRUE(fs::exists(dir / ".oomlint_cache"));
  Result clean = run("clean", dir);
  EXPECT_EQ(0, clean.rc) << clean.err;
  EXPECT_FALSE(fs::exists(dir / ".oomlint_cache"));
  EXPECT_NE(std::string::npos, run("clean", dir).out.find("No cache"));
}

TEST_F(Cli, StatisticsCountsPerCode) {
  spit(dir / "a.py", kLeaky);
  spit(dir / "b.py", kLeaky);
  Result r = run("check --statistics .", dir);
  EXPECT_EQ(1, r.rc);
  EXPECT_NE(std::string::npos, r.out.find("    2\tOOM101\t[ ] accumulated-tensor-with-graph")) << r.out;
  // With --output-format json, the same counts as JSON (ruff's fields).
  Result js = run("check --statistics --output-format json .", dir);
  EXPECT_EQ(1, js.rc);
  json j = json::parse(js.out);
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 1u) << js.out;
  EXPECT_EQ(j[0]["code"], "OOM101");
  EXPECT_EQ(j[0]["name"], "accumulated-tensor-with-graph");
  EXPECT_EQ(j[0]["count"], 2);
  EXPECT_EQ(j[0]["fixable"], false);
}

namespace {

std::multiset<std::string> exampleCodes(const std::string& file) {
  std::string cmd = std::string(OOMLINT_BINARY) + " check --isolated --output-format json " + OOMLINT_EXAMPLES + "/" + file;
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf{};
  while (size_t n = std::fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  ::pclose(p);
  std::multiset<std::string> codes;
  for (const json& f : json::parse(out)) codes.insert(f["code"].get<std::string>());
  return codes;
}

}  // namespace

TEST(Examples, BundledScriptsHaveExactlyTheDocumentedFindings) {
  EXPECT_EQ((std::multiset<std::string>{"OOM101", "OOM102", "OOM201", "OOM301", "OOM302", "OOM401", "OOM501"}),
            exampleCodes("train.py"));
  EXPECT_EQ((std::multiset<std::string>{"OOM103", "OOM104", "OOM105"}), exampleCodes("grad_accum.py"));
  EXPECT_TRUE(exampleCodes("clean_train.py").empty()) << "the memory-safe script must stay clean";
}

TEST(Examples, LibTorchProgramsHaveExactlyTheDocumentedFindings) {
  // Each C++ example leaves its mistakes in on purpose and says so in a comment on the line.
  EXPECT_EQ((std::multiset<std::string>{"OOM101", "OOM201"}), exampleCodes("cpp/mnist_classifier.cpp"));
  EXPECT_EQ((std::multiset<std::string>{"OOM107"}), exampleCodes("cpp/rnn_language_model.cpp"));
  EXPECT_EQ((std::multiset<std::string>{"OOM401"}), exampleCodes("cpp/transformer_block.cpp"));
  EXPECT_EQ((std::multiset<std::string>{"OOM503", "OOM504"}), exampleCodes("cpp/data_pipeline.cpp"));
}

TEST_F(Cli, AddNoqaSuppressesEveryFindingAndIsIdempotent) {
  std::string src = kLeaky;
  src.replace(src.find("    return total\n"), 17, "    losses = []\n    return total  # noqa: E501\n");
  src += "\n\ndef evaluate(model, loader):\n    model.eval()\n    for x in loader:\n        out = model(x), len(\"\"\"a\n        b\"\"\")\n";
  spit(dir / "a.py", src);
  Result before = run("check --output-format concise a.py", dir);
  EXPECT_EQ(1, before.rc);
  Result add = run("check --add-noqa a.py", dir);
  EXPECT_EQ(0, add.rc) << add.err;
  EXPECT_NE(std::string::npos, add.err.find("Added 1 noqa directive")) << add.err;
  std::string after = slurp(dir / "a.py");
  EXPECT_NE(std::string::npos, after.find("        total += loss  # noqa: OOM101\n")) << after;
  // The finding inside a multi-line string's line cannot take a comment: still reported.
  Result again = run("check --output-format concise a.py", dir);
  EXPECT_EQ(std::string::npos, again.out.find("OOM101")) << again.out;
  EXPECT_NE(std::string::npos, again.out.find("OOM201")) << again.out;
  run("check --add-noqa a.py", dir);
  EXPECT_EQ(after, slurp(dir / "a.py")) << "a second --add-noqa changes nothing";
  EXPECT_EQ(0, std::system(("python3 -m py_compile '" + (dir / "a.py").string() + "'").c_str()));
}

TEST_F(Cli, UnusedNoqaIsOffByDefaultAndFixable) {
  std::string src = kClean;
  src.replace(src.find("total += loss.item()\n"), 21, "total += loss.item()  # noqa: OOM101\n");
  spit(dir / "a.py", src);
  EXPECT_EQ(0, run("check a.py", dir).rc);
  Result on = run("check --output-format concise --extend-select OOM900 a.py", dir);
  EXPECT_EQ(1, on.rc);
  EXPECT_NE(std::string::npos, on.out.find("a.py:10:31: OOM900")) << on.out;
  run("check --extend-select OOM900 --fix a.py", dir);
  EXPECT_EQ(kClean, slurp(dir / "a.py"));
}

TEST_F(Cli, ResultsCacheIsReusedAndNeverStale) {
  spit(dir / "a.py", kLeaky);
  spit(dir / "b.py", kClean);
  Result first = run("check --output-format concise .", dir);
  ASSERT_EQ(1, first.rc);
  ASSERT_TRUE(fs::exists(dir / ".oomlint_cache"));
  EXPECT_EQ("*\n", slurp(dir / ".oomlint_cache" / ".gitignore"));
  Result warm = run("check --output-format concise .", dir);
  EXPECT_EQ(first.out, warm.out);
  EXPECT_EQ(first.rc, warm.rc);
  // Same size, same second: only the content hash can tell; the cache must not answer.
  std::string fixedSameSize = kLeaky;
  fixedSameSize.replace(fixedSameSize.find("total += loss\n"), 14, "total += 1.0 \n");
  spit(dir / "a.py", fixedSameSize);
  Result after = run("check --output-format concise .", dir);
  EXPECT_EQ(0, after.rc) << after.out;
  // A corrupt cache is discarded with a warning and the results stay right.
  for (const auto& e : fs::directory_iterator(dir / ".oomlint_cache"))
    if (e.path().extension() == ".index") spit(e.path(), "{ not an index");
  spit(dir / "a.py", kLeaky);
  Result corrupt = run("check --output-format concise .", dir);
  EXPECT_EQ(first.out, corrupt.out);
  EXPECT_NE(std::string::npos, corrupt.err.find("corrupt")) << corrupt.err;
  // --no-cache neither reads nor writes it.
  fs::remove_all(dir / ".oomlint_cache");
  EXPECT_EQ(1, run("check --no-cache .", dir).rc);
  EXPECT_FALSE(fs::exists(dir / ".oomlint_cache"));
}

TEST(Docs, RulesPageIsInSyncWithTheRuleDocumentation) {
  // docs/rules.md is where every report's rule URL points; it must say what `oomlint rule` says.
  // Named by the process: another build's suite may run this test at the same time.
  std::string tmp = ::testing::TempDir() + "oomlint_docs_check_" + std::to_string(::getpid());
  std::string cmd = "rm -rf '" + tmp + "' && mkdir -p '" + tmp + "' && cp -r '" + OOMLINT_SOURCE + "/scripts' '" + tmp +
                    "/' && mkdir -p '" + tmp + "/docs' && bash '" + tmp + "/scripts/gen-rule-docs.sh' '" + OOMLINT_BINARY + "'";
  ASSERT_EQ(0, std::system(cmd.c_str()));
  EXPECT_EQ(testutil::slurp(std::string(OOMLINT_SOURCE) + "/docs/rules.md"), testutil::slurp(tmp + "/docs/rules.md"))
      << "run scripts/gen-rule-docs.sh";
  std::filesystem::remove_all(tmp);
}

TEST_F(Cli, BadInputCatalogTreesNamesAndOldSyntax) {
  // A symlink loop, links to each other, a dangling link, spaces and non-ASCII in names, Python 2
  // syntax, mixed tabs and spaces, a 100k-line function: each gets a clear message or is
  // analysed, and the run goes on to the other files.
  fs::create_directories(dir / "sub");
  fs::create_symlink("..", dir / "sub" / "loop");
  fs::create_symlink("b_link", dir / "a_link");
  fs::create_symlink("a_link", dir / "b_link");
  fs::create_symlink("nowhere.py", dir / "dangling.py");
  spit(dir / "dir with space" / "\xc3\xbcn\xc3\xaf" "c\xc3\xb6" "d\xc3\xa9" / "tr\xc3\xa4in.py", kLeaky);
  // Python 2 statements (`print x`, `exec "..."`) are read by the grammar; the loop is still analysed.
  spit(dir / "py2.py", "import torch\ndef train(model, loader, optimizer, criterion):\n    total = 0\n    for x, y in loader:\n"
                       "        loss = criterion(model(x), y)\n        loss.backward()\n        optimizer.step()\n"
                       "        total += loss\n        print \"loss\", loss.item()\n    exec \"pass\"\n");
  spit(dir / "mixed.py", "import torch\ndef evaluate(model, loader):\n\tmodel.eval()\n\tfor x in loader:\n\t        model(x)\n");
  std::string longFn = "import torch\ndef f(model, loader, optimizer, criterion):\n    total = 0\n    for x, y in loader:\n";
  for (int i = 0; i < 100000; ++i) longFn += "        v" + std::to_string(i) + " = x + " + std::to_string(i) + "\n";
  longFn += "        loss = criterion(model(x), y)\n        loss.backward()\n        optimizer.step()\n        total += loss\n";
  spit(dir / "long_function.py", longFn);
  Result r = run("check --no-cache --output-format concise .", dir);
  EXPECT_EQ(1, r.rc) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("dir with space/\xc3\xbcn\xc3\xaf" "c\xc3\xb6" "d\xc3\xa9/tr\xc3\xa4in.py:10:9: OOM101")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("py2.py:8:9: OOM101")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("long_function.py:100008:9: OOM101")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("mixed.py:5:")) << r.out;
  EXPECT_EQ(std::string::npos, r.err.find("rror:")) << r.err;
  // Named explicitly, the dangling link is a clear I/O finding; the loop is never followed.
  Result named = run("check --no-cache --output-format concise dangling.py sub/loop/py2.py", dir);
  EXPECT_NE(std::string::npos, named.out.find("dangling.py:1:1: OOM001")) << named.out;
  EXPECT_NE(std::string::npos, named.out.find("py2.py:8:9: OOM101")) << named.out;
}

TEST_F(Cli, FilesDeletedDuringTheRunAreReportedNotFatal) {
  // Files vanish while oomlint walks and reads them (a checkout switching branches): each one is
  // either analysed or reported as unreadable, the others are checked, nothing crashes.
  for (int i = 0; i < 3000; ++i) spit(dir / "pkg" / ("m" + std::to_string(i) + ".py"), kLeaky);
  std::string out = (dir / "out.txt").string(), err = (dir / "err.txt").string();
  spit(dir / "race.sh", "cd '" + dir.string() + "'\n(" + OOMLINT_BINARY + " check --no-cache --threads 2 --output-format concise pkg >'" +
                           out + "' 2>'" + err + "'; echo $? > rc.txt) &\nsleep 0.05\nrm -f pkg/m1*.py\nwait\n");
  ASSERT_EQ(0, std::system(("bash '" + (dir / "race.sh").string() + "'").c_str()));
  int rc = std::stoi(slurp(dir / "rc.txt"));
  EXPECT_EQ(1, rc) << slurp(err);
  std::string report = slurp(out);
  EXPECT_NE(std::string::npos, report.find("m0.py:10:9: OOM101"));  // never deleted
  std::istringstream lines(report);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.find("OOM001") == std::string::npos) continue;
    EXPECT_NE(std::string::npos, line.find("cannot")) << line;  // "cannot read file: No such file ..."
  }
  EXPECT_EQ(std::string::npos, slurp(err).find("terminate")) << slurp(err);
}

TEST_F(Cli, FixKilledAtAnyMomentLeavesEveryFileOldOrNew) {
  // --fix writes each file through a temporary and a rename: a SIGKILL at any point leaves every
  // file exactly as it was or exactly as fixed, never truncated or half-written.
  const int kFiles = 200;
  for (int i = 0; i < kFiles; ++i) spit(dir / "proj" / ("e" + std::to_string(i) + ".py"), kEval);
  spit(dir / "reference" / "e.py", kEval);
  ASSERT_EQ(0, run("check --no-cache --fix reference/e.py", dir).rc);
  const std::string fixed = slurp(dir / "reference" / "e.py");
  ASSERT_NE(fixed, std::string(kEval));
  // Kill at spread fractions of a whole run's duration, so the kills land mid-run on fast and
  // slow (sanitized) builds alike.
  auto started = std::chrono::steady_clock::now();
  ASSERT_EQ(0, run("check --no-cache --threads 2 --fix proj", dir).rc);
  double whole = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  int killedMidway = 0;
  for (int attempt = 0; attempt < 12; ++attempt) {
    for (int i = 0; i < kFiles; ++i) spit(dir / "proj" / ("e" + std::to_string(i) + ".py"), kEval);
    std::string delay = std::to_string(whole * (0.05 + 0.08 * attempt));
    spit(dir / "kill.sh", "cd '" + dir.string() + "'\n" + OOMLINT_BINARY + " check --no-cache --threads 2 --fix proj >/dev/null 2>&1 &\npid=$!\nsleep " +
                              delay + "\nkill -9 $pid 2>/dev/null\nwait $pid 2>/dev/null\ntrue\n");
    ASSERT_EQ(0, std::system(("bash '" + (dir / "kill.sh").string() + "'").c_str()));
    int done = 0;
    for (int i = 0; i < kFiles; ++i) {
      std::string now = slurp(dir / "proj" / ("e" + std::to_string(i) + ".py"));
      EXPECT_TRUE(now == kEval || now == fixed) << "e" << i << ".py after a kill at " << delay << " s:\n" << now;
      done += now == fixed;
    }
    if (done > 0 && done < kFiles) ++killedMidway;
  }
  // The kills must have landed mid-run at least once, or the test proved nothing.
  EXPECT_GT(killedMidway, 0);
}

TEST_F(Cli, SelectorsTakeCommaListsAsRuffDoes) {
  spit(dir / "leaky.py", kLeaky);
  spit(dir / "skip_me.py", kLeaky);
  // `--select A,B` and repeated flags both work, and the value list never swallows the paths.
  Result r = run("check --no-cache --output-format concise --select OOM102,OOM101 --extend-exclude skip_me.py,other.py leaky.py skip_me.py --force-exclude", dir);
  EXPECT_EQ(1, r.rc) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("leaky.py:10:9: OOM101")) << r.out;
  EXPECT_EQ(std::string::npos, r.out.find("skip_me.py")) << r.out;
  Result ignored = run("check --no-cache --output-format concise --ignore OOM102,OOM101 leaky.py", dir);
  EXPECT_EQ(0, ignored.rc) << ignored.out << ignored.err;
}

TEST_F(Cli, NamedFilesOfAProjectAreCheckedWithTheRestOfIt) {
  // Pre-commit passes only the changed files: utils.py alone is reported, with what train.py (read,
  // not reported) says of its callers.
  fs::copy(fs::path(OOMLINT_FIXTURES) / "projects" / "eval_helpers_across_modules", dir, fs::copy_options::recursive);
  Result named = run("check --no-cache --output-format concise utils.py", dir);
  EXPECT_EQ(1, named.rc);
  EXPECT_NE(std::string::npos, named.out.find("utils.py:19:")) << named.out;  // run_batches, after model.eval()
  EXPECT_EQ(std::string::npos, named.out.find("utils.py:10:")) << named.out;  // evaluate runs under no_grad
  EXPECT_EQ(std::string::npos, named.out.find("train.py")) << named.out;
  // The callers' eval mode reaches run_batches: its forward is on an evaluation path.
  EXPECT_NE(std::string::npos, named.out.find("utils.py:19:23: OOM201 `model(...)` runs on an evaluation path")) << named.out;
  Result alone = run("check --no-cache --no-project --output-format concise utils.py", dir);
  EXPECT_NE(std::string::npos, alone.out.find("utils.py:10:")) << alone.out;
  // Alone, nothing says the model is in eval mode: only the data flow (its output is used
  // through `.item()` alone) reports that forward.
  EXPECT_EQ(std::string::npos, alone.out.find("utils.py:19:23: OOM201 `model(...)` runs on an evaluation path")) << alone.out;
  EXPECT_NE(std::string::npos, alone.out.find("utils.py:19:23: OOM201 `model(...)` runs with autograd enabled, but its output")) << alone.out;
  // From a subfolder, the root is still the folder holding pyproject.toml.
  fs::create_directories(dir / "sub");
  Result verbose = run("check --no-cache -v ../utils.py", dir / "sub");
  EXPECT_NE(std::string::npos, verbose.err.find("oomlint: project " + fs::canonical(dir).string() + ": 2 modules")) << verbose.err;
  // Cached: the second run parses nothing and says the same.
  Result first = run("check --output-format concise utils.py", dir);
  Result second = run("check -v --output-format concise utils.py", dir);
  EXPECT_EQ(first.out, named.out);
  EXPECT_EQ(second.out, named.out);
  EXPECT_NE(std::string::npos, second.err.find("(2 from the cache)")) << second.err;
  // Fixes are made with the same facts: evaluate() gets no no_grad wrap its callers already give.
  Result diff = run("check --no-cache --diff utils.py", dir);
  EXPECT_EQ(std::string::npos, diff.out.find("torch.no_grad")) << diff.out;
  Result diffAlone = run("check --no-cache --no-project --diff utils.py", dir);
  EXPECT_NE(std::string::npos, diffAlone.out.find("with torch.no_grad():")) << diffAlone.out;
}

TEST_F(Cli, ARebuiltBinaryOfTheSameReleaseDoesNotReadTheOldCache) {
  // A development build keeps its version across rebuilds whose analysis differs: the cache is
  // keyed by the binary itself too, so a stale result is never read back.
  fs::copy(fs::path(OOMLINT_FIXTURES) / "projects" / "eval_helpers_across_modules", dir, fs::copy_options::recursive);
  fs::path binary = dir / "bin" / "oomlint";
  fs::create_directories(binary.parent_path());
  fs::copy_file(OOMLINT_BINARY, binary);
  auto verbose = [&]() {
    std::string cmd = "cd '" + dir.string() + "' && '" + binary.string() + "' check -v -q --exit-zero utils.py 2>&1";
    std::string out;
    FILE* p = ::popen(cmd.c_str(), "r");
    char buf[4096];
    while (p && std::fgets(buf, sizeof buf, p)) out += buf;
    if (p) ::pclose(p);
    return out;
  };
  verbose();
  EXPECT_NE(std::string::npos, verbose().find("(2 from the cache)"));
  fs::last_write_time(binary, fs::last_write_time(binary) + std::chrono::hours(1));  // rebuilt
  std::string rebuilt = verbose();
  EXPECT_NE(std::string::npos, rebuilt.find("(0 from the cache)")) << rebuilt;
  EXPECT_NE(std::string::npos, verbose().find("(2 from the cache)"));
}

namespace {

/// A LibTorch loop whose leak exists only when LEAK is defined: finding it proves a flag reached Clang.
const char* kLeakUnderMacro =
    "#include <torch/torch.h>\n"
    "#include <vector>\n"
    "double fit(torch::nn::Linear& model, torch::optim::SGD& opt, std::vector<torch::Tensor>& xs) {\n"
    "  torch::Tensor total = torch::zeros({1});\n"
    "  for (auto& x : xs) {\n"
    "    opt.zero_grad();\n"
    "    auto loss = model(x).sum();\n"
    "    loss.backward();\n"
    "    opt.step();\n"
    "#ifdef LEAK\n"
    "    total += loss;\n"
    "#endif\n"
    "  }\n"
    "  return total.item<double>();\n"
    "}\n";

constexpr const char* kTorchInclude = "/usr/include/torch/csrc/api/include";

}  // namespace

TEST_F(Cli, CppFlagsAsClangTidyTakesThem) {
  spit(dir / "train.cpp", kLeakUnderMacro);
  EXPECT_EQ(0, run("check --no-cache train.cpp", dir).rc) << "bundled mode, LEAK undefined";
  Result extra = run("check --no-cache --output-format concise --extra-arg=-DLEAK train.cpp", dir);
  EXPECT_NE(std::string::npos, extra.out.find("train.cpp:11:5: OOM101")) << extra.out << extra.err;
  Result before = run("check --no-cache --output-format concise --extra-arg-before -DLEAK train.cpp", dir);
  EXPECT_NE(std::string::npos, before.out.find("train.cpp:11:5: OOM101")) << before.out << before.err;
  // `-- FLAGS`: the compile command itself (real LibTorch headers here), no database read.
  Result fixed = run(std::string("check --no-cache -v --output-format concise train.cpp -- -std=c++17 -DLEAK -I") + kTorchInclude, dir);
  EXPECT_NE(std::string::npos, fixed.out.find("train.cpp:11:5: OOM101")) << fixed.out << fixed.err;
  EXPECT_NE(std::string::npos, fixed.err.find("(fixed flags, in .): clang -std=c++17 -DLEAK -I" + std::string(kTorchInclude))) << fixed.err;
  // The cache keeps results per set of flags.
  for (auto [args, rc] : {std::pair{"check train.cpp", 0}, {"check --extra-arg=-DLEAK train.cpp", 1}, {"check train.cpp", 0}}) {
    Result r = run(args, dir);
    EXPECT_EQ(rc, r.rc) << args << "\n" << r.out << r.err;
  }
}

TEST_F(Cli, CompileDatabasesAsCMakeBearAndMakeWriteThem) {
  // Relative sources, `arguments` arrays, `-o`, dependency-file flags and a `command` string are
  // read as clangd reads them: the flags reach Clang (LEAK is defined only there).
  spit(dir / "src" / "train.cpp", kLeakUnderMacro);
  std::string torch = std::string("\"-I") + kTorchInclude + "\"";
  const std::string shapes[] = {
      // CMake: absolute paths, dependency files, an object file.
      "[{\"directory\": \"" + (dir / "build").string() + "\", \"file\": \"" + (dir / "src" / "train.cpp").string() +
          "\", \"arguments\": [\"/usr/bin/c++\", \"-DLEAK\", \"-std=c++17\", " + torch +
          ", \"-MD\", \"-MT\", \"train.o\", \"-MF\", \"train.o.d\", \"-o\", \"CMakeFiles/t.dir/train.cpp.o\", \"-c\", \"" +
          (dir / "src" / "train.cpp").string() + "\"]}]",
      // Bear over make: the source relative to the directory.
      "[{\"directory\": \"" + (dir / "build").string() + "\", \"file\": \"../src/train.cpp\", \"arguments\": [\"c++\", \"-c\", "
          "\"-DLEAK\", \"-std=c++17\", " + torch + ", \"-o\", \"train.o\", \"../src/train.cpp\"], \"output\": \"train.o\"}]",
      // A `command` string.
      "[{\"directory\": \"" + (dir / "build").string() + "\", \"file\": \"../src/train.cpp\", \"command\": \"c++ -DLEAK -std=c++17 -I" +
          kTorchInclude + " -o train.o -c ../src/train.cpp\"}]",
  };
  fs::create_directories(dir / "build");
  for (const std::string& db : shapes) {
    spit(dir / "build" / "compile_commands.json", db + "\n");
    Result r = run("check --no-cache --output-format concise -p build src/train.cpp", dir);
    EXPECT_NE(std::string::npos, r.out.find("src/train.cpp:11:5: OOM101")) << db << "\n" << r.out << r.err;
    EXPECT_EQ(std::string::npos, r.out.find("OOM000")) << db << "\n" << r.out;
  }
}

TEST_F(Cli, CppWithRealFlagsFailsClosed) {
  // With the file's real flags, anything that keeps Clang from reading all of it is reported
  // with Clang's first error and a non-zero exit, as clang-tidy does. The first two checks read
  // LibTorch's real headers; the missing and broken headers and the rejected flag have nothing to
  // do with LibTorch, and are checked with the bundled declarations standing in for it (a database
  // without LibTorch's include path), which keeps each Clang run to a fraction of a second.
  auto database = [&](const std::string& extra, bool realTorch = true) {
    std::string include = realTorch ? ", \"-I" + std::string(kTorchInclude) + "\"" : std::string();
    spit(dir / "compile_commands.json", "[{\"directory\": \"" + dir.string() + "\", \"file\": \"train.cpp\", \"arguments\": "
                                         "[\"c++\", \"-std=c++17\"" + include + extra + ", \"-c\", \"train.cpp\"]}]\n");
  };
  database("");
  std::string body = "double f(torch::Tensor x) { return x.sum().item<double>(); }\n";
  spit(dir / "train.cpp", "#include <torch/torch.h>\n" + body);
  EXPECT_EQ(0, run("check --no-cache train.cpp", dir).rc);
  spit(dir / "train.cpp", "#include <torch/torch.h>\ndouble f(torch::Tensor x) { return x.sum().item<double>() + not_declared; }\n");
  Result semantic = run("check --no-cache --output-format concise train.cpp", dir);
  EXPECT_EQ(1, semantic.rc);
  EXPECT_NE(std::string::npos, semantic.out.find("train.cpp:2:61: OOM000 C++ error: use of undeclared identifier 'not_declared' (with the flags of compile_commands.json"))
      << semantic.out;
  database("", false);
  spit(dir / "train.cpp", "#include <torch/torch.h>\n#include \"generated/config.h\"\n" + body);
  Result missing = run("check --no-cache --output-format concise train.cpp", dir);
  EXPECT_NE(std::string::npos, missing.out.find("train.cpp:2:1: OOM000 C++ error: 'generated/config.h' file not found")) << missing.out;
  spit(dir / "broken.h", "struct Config { int size = not_declared_either; };\n");
  spit(dir / "train.cpp", "#include <torch/torch.h>\n#include \"broken.h\"\n" + body);
  Result header = run("check --no-cache --output-format concise train.cpp", dir);
  EXPECT_NE(std::string::npos, header.out.find("train.cpp:2:10: OOM000 C++ error in " + (dir / "broken.h").string() + ":1: use of undeclared")) << header.out;
  database(", \"--no-such-option\"", false);
  spit(dir / "train.cpp", "#include <torch/torch.h>\n" + body);
  Result flags = run("check --no-cache --output-format concise train.cpp", dir);
  EXPECT_EQ(1, flags.rc);
  EXPECT_NE(std::string::npos, flags.out.find("train.cpp:1:1: OOM000 C++ flags rejected by Clang: unsupported option '--no-such-option'")) << flags.out;
  // A compile command Clang cannot run at all (its folder is gone): an error, not a crash or a skip.
  spit(dir / "compile_commands.json", "[{\"directory\": \"/nonexistent/build\", \"file\": \"" + (dir / "train.cpp").string() +
                                       "\", \"arguments\": [\"c++\", \"-c\", \"train.cpp\"]}]\n");
  Result gone = run("check --no-cache --output-format concise train.cpp", dir);
  EXPECT_EQ(1, gone.rc);
  EXPECT_NE(std::string::npos, gone.out.find("train.cpp:1:1: OOM000 the compile command of train.cpp runs in /nonexistent/build")) << gone.out;
  // Without a database (the bundled declarations stand in for LibTorch) names it lacks are not errors.
  fs::remove(dir / "compile_commands.json");
  spit(dir / "train.cpp", "#include <torch/torch.h>\ndouble f(torch::Tensor x) { return x.sum().item<double>() + not_declared; }\n");
  EXPECT_EQ(0, run("check --no-cache train.cpp", dir).rc);
}

TEST_F(Cli, ExportedFixesApplyWithClangApplyReplacements) {
  fs::copy(fs::path(OOMLINT_FIXTURES) / "cpp" / "oom201_positive.cpp", dir / "eval.cpp");
  fs::copy(fs::path(OOMLINT_FIXTURES) / "python" / "oom201_positive.py", dir / "eval.py");
  fs::copy(dir / "eval.cpp", dir / "fixed.cpp");
  fs::copy(dir / "eval.py", dir / "fixed.py");
  fs::create_directories(dir / "fixes");
  Result exported = run("check --no-cache --isolated --export-fixes fixes/oomlint.yaml eval.cpp eval.py", dir);
  EXPECT_EQ(1, exported.rc) << exported.err;
  std::string yaml = slurp(dir / "fixes" / "oomlint.yaml");
  EXPECT_NE(std::string::npos, yaml.find("DiagnosticName:  \"oomlint-OOM201\"")) << yaml;
  run("check --no-cache --isolated --fix fixed.cpp fixed.py", dir);
  // clang-apply-replacements (Debian clang-tools-14) makes the same files as --fix.
  std::string apply = "clang-apply-replacements-14 '" + (dir / "fixes").string() + "'";
  ASSERT_EQ(0, std::system(apply.c_str()));
  EXPECT_EQ(slurp(dir / "fixed.cpp"), slurp(dir / "eval.cpp"));
  EXPECT_EQ(slurp(dir / "fixed.py"), slurp(dir / "eval.py"));
  EXPECT_NE(slurp(fs::path(OOMLINT_FIXTURES) / "cpp" / "oom201_positive.cpp"), slurp(dir / "eval.cpp")) << "something was fixed";
  // Unsafe fixes only with --unsafe-fixes.
  Result safeOnly = run("check --no-cache --isolated --export-fixes safe.yaml " + (fs::path(OOMLINT_FIXTURES) / "python" / "oom101_positive.py").string(), dir);
  EXPECT_EQ(std::string::npos, slurp(dir / "safe.yaml").find("oomlint-OOM101"));
  run("check --no-cache --isolated --unsafe-fixes --export-fixes unsafe.yaml " + (fs::path(OOMLINT_FIXTURES) / "python" / "oom101_positive.py").string(), dir);
  EXPECT_NE(std::string::npos, slurp(dir / "unsafe.yaml").find("oomlint-OOM101"));
}

TEST_F(Cli, CppFindingsFollowTheProjectsHeadersAndTheirChanges) {
  // train.cpp feeds a meter whose header keeps each step's graph: found with the project's
  // headers (the root is the folder with the top CMakeLists.txt), not without them, and no longer
  // once the header is mended, though train.cpp itself did not change and its result was cached.
  fs::copy(fs::path(OOMLINT_FIXTURES) / "projects" / "cpp_meter_header", dir, fs::copy_options::recursive);
  Result first = run("check --output-format concise src/train.cpp", dir);
  EXPECT_EQ(1, first.rc) << first.err;
  EXPECT_NE(std::string::npos, first.out.find("src/train.cpp:17:5: OOM101")) << first.out;
  Result cached = run("check --output-format concise src/train.cpp", dir);
  EXPECT_EQ(first.out, cached.out);
  Result alone = run("check --no-cache --no-project --output-format concise src/train.cpp", dir);
  EXPECT_EQ(0, alone.rc) << alone.out;
  Result narrow = run("check --no-cache --project-root src --output-format concise src/train.cpp", dir);
  EXPECT_EQ(0, narrow.rc) << "include/ lies outside the root: " << narrow.out;
  std::string header = slurp(dir / "include" / "meters.h");
  header.replace(header.find("total_ += value * n;"), 20, "total_ += value.item<double>() * static_cast<double>(n);");
  spit(dir / "include" / "meters.h", header);
  Result mended = run("check --output-format concise src/train.cpp", dir);
  EXPECT_EQ(0, mended.rc) << mended.out;
}

TEST_F(Cli, AFileOutsideAnyProjectReadsOnlyWhatItImports) {
  spit(dir / "helpers.py", "import torch\n\ndef loss_of(model, x):\n    return model(x).sum()\n");
  spit(dir / "train.py",
       "import torch\nfrom helpers import loss_of\n\ndef train(model, loader, opt):\n    total = 0\n    for x in loader:\n"
       "        opt.zero_grad()\n        loss = loss_of(model, x)\n        loss.backward()\n        opt.step()\n"
       "        total += loss_of(model, x)\n    return total\n");
  spit(dir / "unrelated.py", "import torch\n");
  Result r = run("check --no-cache -v --output-format concise train.py", dir);
  EXPECT_NE(std::string::npos, r.out.find("train.py:11:9: OOM101")) << r.out << r.err;
  EXPECT_NE(std::string::npos, r.err.find(": 2 modules")) << r.err;  // train.py and helpers.py, not unrelated.py
}
