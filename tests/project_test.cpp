// Whole-project fixtures: every folder of fixtures/projects is one project. Each of its Python
// files carries inline expectations as the single-file fixtures do: a line ending in
// `# expect: OOM101` must produce exactly those findings when the project is checked, and every
// other line none. A file with `# alone: CODES` markers is also checked by itself (as before the
// project analysis): then exactly the `# alone:` lines have findings, which shows what the rest of
// the project changed. C++ files (sources and headers) say the same with `// expect:` and
// `// alone:`: each is checked as its own translation unit, with the project's headers (what it
// calls from them is analysed with it) and, for `// alone:`, without them (`--no-project`).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "cache/cache.h"
#include "cpp/loader.h"
#include "engine/engine.h"
#include "project/analyze.h"
#include "project/order.h"
#include "project/scan.h"
#include "project/serialize.h"
#include "test_util.h"

namespace fs = std::filesystem;
using namespace oomlint;

namespace {

using Expected = std::map<uint32_t, std::multiset<std::string>>;

Expected markers(const std::string& source, const std::string& marker, bool& any) {
  Expected out;
  std::istringstream in(source);
  std::string line;
  uint32_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    size_t pos = line.find(marker);
    if (pos == std::string::npos) continue;
    any = true;
    std::stringstream ss(line.substr(pos + marker.size()));
    std::string code;
    while (std::getline(ss, code, ',')) {
      code.erase(0, code.find_first_not_of(" \t"));
      code.erase(code.find_last_not_of(" \t\r") + 1);
      // `# expect: OOM101  # alone: ...`: a code ends at the next marker.
      if (size_t hash = code.find(" #"); hash != std::string::npos) code.erase(hash);
      if (size_t slashes = code.find(" //"); slashes != std::string::npos) code.erase(slashes);
      code.erase(code.find_last_not_of(" \t\r") + 1);
      if (!code.empty() && code != "none") out[n].insert(code);
    }
  }
  return out;
}

std::vector<fs::path> projectFiles(const fs::path& root) {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file() && e.path().extension() == ".py") out.push_back(fs::absolute(e.path()).lexically_normal());
  std::sort(out.begin(), out.end());
  return out;
}

bool isCppFile(const fs::path& p) {
  static const std::set<std::string> kExt = {".cpp", ".cc", ".cxx", ".cu", ".h", ".hpp", ".cuh"};
  return kExt.count(p.extension().string()) > 0;
}

std::vector<fs::path> cppFiles(const fs::path& root) {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file() && isCppFile(e.path())) out.push_back(fs::absolute(e.path()).lexically_normal());
  std::sort(out.begin(), out.end());
  return out;
}

/// A C++ file's findings, with the project's headers below `root` or (alone) without them.
std::vector<Finding> checkCpp(const fs::path& file, const fs::path& root, bool alone) {
  cpp::configure(cpp::Settings{"", fs::absolute(root).lexically_normal().string(), alone});
  std::vector<Finding> out = checkSource(file.string(), testutil::slurp(file), testutil::everyRule()).findings;
  cpp::configure(cpp::Settings{});
  return out;
}

/// Findings per file of the project, checked as one project.
std::map<std::string, std::vector<Finding>> checkAsProject(const fs::path& root, int* rounds = nullptr) {
  std::vector<fs::path> files = projectFiles(root);
  std::vector<std::string> abs;
  for (const fs::path& f : files) abs.push_back(f.string());
  project::Project p(fs::absolute(root).lexically_normal().string(), abs);
  project::ProjectCheck check;
  CheckOptions opts = testutil::everyRule();
  check.report.assign(abs.size(), true);
  check.displayPath = abs;
  check.options = [&](size_t) -> const CheckOptions& { return opts; };
  static const std::string key;
  check.selectionKey = [&](size_t) -> const std::string& { return key; };
  std::map<std::string, std::vector<Finding>> out;
  check.onResult = [&](size_t i, FileResult&& r) { out[abs[i]] = std::move(r.findings); };
  int n = project::checkProject(p, check);
  if (rounds) *rounds = n;
  return out;
}

void expectMatches(const std::string& label, const Expected& expected, const std::vector<Finding>& findings) {
  Expected actual;
  for (const Finding& f : findings) actual[f.span.line].insert(std::string(f.code));
  for (const auto& [line, codes] : expected) {
    auto it = actual.find(line);
    EXPECT_EQ(codes, it == actual.end() ? std::multiset<std::string>{} : it->second) << label << ":" << line;
  }
  for (const Finding& f : findings)
    if (!expected.count(f.span.line)) ADD_FAILURE() << label << ":" << f.span.line << ": unexpected " << f.code << " " << f.message;
}

std::vector<fs::path> projects() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(OOMLINT_FIXTURES) / "projects"))
    if (e.is_directory()) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

/// What one check of a project through the results cache did: modules analysed per round, and
/// how many came from the cache.
struct CachedRun {
  std::vector<size_t> perRound;
  size_t fromCache = 0;
};

/// Checks the modules `abs` of the project at `root` with every rule, through the results cache
/// in `cacheDir`, and saves the cache; `onResult` gets each file's result.
CachedRun checkThroughCache(const fs::path& root, const std::vector<std::string>& abs, const std::string& cacheDir,
                            const std::function<void(size_t, FileResult&&)>& onResult) {
  static const CheckOptions opts = testutil::everyRule();
  static const std::string key = "k";
  std::string warning;
  ResultCache cache(cacheDir, warning);
  project::Project p(root.string(), abs);
  project::ProjectCheck check;
  check.report.assign(abs.size(), true);
  check.displayPath = abs;
  check.options = [](size_t) -> const CheckOptions& { return opts; };
  check.selectionKey = [](size_t) -> const std::string& { return key; };
  check.cache = &cache;
  check.onResult = onResult;
  project::checkProject(p, check);
  EXPECT_EQ(cache.save(), "");
  return {check.analysedPerRound, check.fromCache};
}

/// A folder of files for one test, removed when the test ends.
struct TempTree {
  fs::path root;
  explicit TempTree(const std::string& name) : root(fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()))) {
    fs::remove_all(root);
  }
  ~TempTree() { fs::remove_all(root); }
  void write(const std::string& rel, const std::string& text) const {
    fs::create_directories((root / rel).parent_path());
    std::ofstream(root / rel) << text;
  }
};

}  // namespace

class ProjectFixture : public ::testing::TestWithParam<fs::path> {};

TEST_P(ProjectFixture, FindingsMatchInlineExpectations) {
  const fs::path& root = GetParam();
  auto found = checkAsProject(root);
  size_t expectedFindings = 0;
  for (const fs::path& f : projectFiles(root)) {
    std::string source = testutil::slurp(f);
    bool anyExpect = false, anyAlone = false;
    Expected inProject = markers(source, "# expect:", anyExpect);
    Expected alone = markers(source, "# alone:", anyAlone);
    for (const auto& [line, codes] : inProject) expectedFindings += codes.size();
    std::string label = fs::relative(f, root).string();
    expectMatches(label, inProject, found[f.string()]);
    if (anyAlone) expectMatches(label + " (alone)", alone, checkSource(f.string(), source, testutil::everyRule()).findings);
  }
  bool anyCppAlone = false;
  for (const fs::path& f : cppFiles(root)) {
    std::string source = testutil::slurp(f);
    bool anyExpect = false, anyAlone = false;
    Expected inProject = markers(source, "// expect:", anyExpect);
    Expected alone = markers(source, "// alone:", anyAlone);
    for (const auto& [line, codes] : inProject) expectedFindings += codes.size();
    std::string label = fs::relative(f, root).string();
    expectMatches(label, inProject, checkCpp(f, root, false));
    if (anyAlone) expectMatches(label + " (alone)", alone, checkCpp(f, root, true));
    anyCppAlone |= anyAlone;
  }
  // A project without a single expected finding is a negative fixture: it must still say so by
  // holding at least one `# alone:` line, so nothing here passes by checking nothing.
  if (expectedFindings == 0) {
    bool anyAlone = anyCppAlone;
    for (const fs::path& f : projectFiles(root)) markers(testutil::slurp(f), "# alone:", anyAlone);
    EXPECT_TRUE(anyAlone) << root.filename() << " expects no finding in the project and none alone: it tests nothing";
  }
}

INSTANTIATE_TEST_SUITE_P(Projects, ProjectFixture, ::testing::ValuesIn(projects()),
                         [](const ::testing::TestParamInfo<fs::path>& info) {
                           std::string n = info.param.filename().string();
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

TEST(ProjectModel, ModuleNamesRelativeImportsAndReExports) {
  fs::path root = fs::path(OOMLINT_FIXTURES) / "projects" / "src_layout_reexport";
  std::vector<std::string> abs;
  for (const fs::path& f : projectFiles(root)) abs.push_back(f.string());
  project::Project p(fs::absolute(root).lexically_normal().string(), abs);
  auto index = [&](const std::string& rel) { return p.indexOf((fs::absolute(root) / rel).lexically_normal().string()); };
  size_t train = index("train.py"), helpers = index("src/trainkit/helpers.py"), init = index("src/trainkit/__init__.py");
  ASSERT_NE(train, SIZE_MAX);
  // src layout: `trainkit` is the package under src/.
  EXPECT_EQ(p.resolveModule(train, "trainkit"), init);
  EXPECT_EQ(p.resolveModule(train, "trainkit.helpers"), helpers);
  // Relative imports resolve against the importing module's package.
  EXPECT_EQ(p.resolveModule(init, ".helpers"), helpers);
  EXPECT_EQ(p.resolveModule(helpers, "."), init);
  EXPECT_EQ(p.resolveModule(train, "numpy"), SIZE_MAX);
  EXPECT_TRUE(p.mayBeProject(train, "trainkit.record"));
  EXPECT_FALSE(p.mayBeProject(train, "torch.nn.functional"));
}

TEST(ProjectCheck, DependencyTextChangesKeepTheImportersCachedFindings) {
  // Analysed in rounds until no answer changes; a second, cached run reads nothing again.
  fs::path tmp = fs::temp_directory_path() / ("oomlint_project_cache_" + std::to_string(::getpid()));
  fs::remove_all(tmp);
  fs::copy(fs::path(OOMLINT_FIXTURES) / "projects" / "eval_helpers_across_modules", tmp, fs::copy_options::recursive);
  std::vector<std::string> abs;
  for (const fs::path& f : projectFiles(tmp)) abs.push_back(f.string());
  std::string dir = (tmp / ".cache").string();
  auto run = [&](std::vector<size_t>& perRound, size_t& fromCache, std::map<std::string, size_t>& counts) {
    CachedRun r = checkThroughCache(tmp, abs, dir, [&](size_t i, FileResult&& res) {
      counts[fs::path(abs[i]).filename().string()] = res.findings.size();
    });
    perRound = r.perRound;
    fromCache = r.fromCache;
  };
  std::vector<size_t> rounds;
  size_t cached = 0;
  std::map<std::string, size_t> first, second, third;
  run(rounds, cached, first);
  EXPECT_EQ(cached, 0u);
  EXPECT_EQ(rounds.front(), abs.size());
  run(rounds, cached, second);
  EXPECT_EQ(cached, abs.size());
  EXPECT_EQ(rounds, std::vector<size_t>{0});  // nothing parsed
  EXPECT_EQ(first, second);
  // A change to the helpers' text that leaves their summaries alone: only that file is read.
  std::ofstream(tmp / "utils.py", std::ios::app) << "\n\ndef unrelated():\n    return 1\n";
  run(rounds, cached, third);
  EXPECT_EQ(rounds, std::vector<size_t>{1});
  EXPECT_EQ(first, third);
  // The summaries live in one file beside the findings, replaced by each save.
  std::vector<fs::path> summaries;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".summaries") summaries.push_back(e.path());
  ASSERT_EQ(summaries.size(), 1u);
  // Without it (deleted, or from a concurrent run) nothing is lost: modules are analysed again.
  fs::remove(summaries.front());
  std::ofstream(tmp / "utils.py", std::ios::app) << "\n\ndef another():\n    return 2\n";
  std::map<std::string, size_t> fourth;
  run(rounds, cached, fourth);
  EXPECT_EQ(cached, 0u);
  EXPECT_EQ(rounds.front(), abs.size());
  EXPECT_EQ(first, fourth);
  fs::remove_all(tmp);
}

TEST(ProjectCheck, ASummaryThatCallersEmptyStillSettles) {
  // `scaled` returns what it computes from its parameters: a summary, while its callers are
  // unknown. Its one caller runs it under no_grad, which clears those bits and empties the
  // summary. The callers' word must stay with it then; dropped, the summary came back, and every
  // round (and every warm run, as the project never settled) analysed both files again.
  TempTree t("oomlint_project_settle");
  const fs::path& tmp = t.root;
  t.write("pyproject.toml", "");
  t.write("pkg/ops.py", "import torch\n\n\ndef scaled(x, k):\n    return x * k\n");
  t.write("pkg/use.py", "import torch\nimport pkg.ops\n\n\ndef copy(x):\n    with torch.no_grad():\n        y = pkg.ops.scaled(x, 2)\n    return y\n");
  std::vector<std::string> abs = {(tmp / "pkg" / "ops.py").string(), (tmp / "pkg" / "use.py").string()};
  std::string dir = (tmp / ".cache").string();
  auto run = [&]() { return checkThroughCache(tmp, abs, dir, [](size_t, FileResult&&) {}).perRound; };
  std::vector<size_t> first = run();
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(first.front(), 2u);
  EXPECT_LT(first.size(), 4u) << "the rounds ran to their cap: the answers kept changing";
  EXPECT_EQ(run(), std::vector<size_t>{0}) << "a warm run of an unchanged project analyses nothing";
}

TEST(ProjectCheck, AProgramFactTheFileNeverReadDoesNotAnalyseItAgain) {
  // helpers.py has no torch import of its own: it reads whether its program uses torch, and
  // nothing else of the program's facts. train.py names CUDA only in a comment, which the quick
  // look before the first round takes for a GPU program and the analysis does not. That guess
  // changing is no reason to analyse helpers.py again; before, any program fact changing was.
  TempTree t("oomlint_project_program_bits");
  const fs::path& tmp = t.root;
  t.write("pyproject.toml", "");
  t.write("helpers.py", "def mean(xs):\n    return sum(xs) / len(xs)\n");
  t.write("train.py", "# runs on cuda when there is one\nimport torch\nimport helpers\n\n\ndef step(x):\n    return helpers.mean([x])\n");
  std::vector<std::string> abs = {(tmp / "helpers.py").string(), (tmp / "train.py").string()};
  std::string dir = (tmp / ".cache").string();
  std::vector<size_t> rounds = checkThroughCache(tmp, abs, dir, [](size_t, FileResult&&) {}).perRound;
  EXPECT_EQ(rounds, std::vector<size_t>{2});
}

TEST(ProjectScan, ImportsWithParenthesesContinuationsSubmodulesAndNesting) {
  auto scanned = project::scanImports(
      "import os, torch.nn as nn\n"
      "from .models import (\n    Net,  # the model\n    Head,\n)\n"
      "from . import utils\n"
      "from pkg.sub import \\\n    thing\n"
      "def f():\n    import late  # runs when called: not ordered on\n"
      "x = '''\nfrom docs import nothing\n'''\n");
  std::vector<std::pair<std::string, std::string>> got;
  std::vector<std::string> nested;
  for (const auto& s : scanned) {
    got.emplace_back(s.name, s.fallback);
    if (s.nested) nested.push_back(s.name);
  }
  std::vector<std::pair<std::string, std::string>> want = {
      {"os", ""}, {"torch.nn", ""}, {".models.Net", ".models"}, {".models.Head", ".models"}, {".utils", "."},
      {"pkg.sub.thing", "pkg.sub"}, {"late", ""}, {"docs.nothing", "docs"}};
  // A string's text can look like an import: it only orders work and joins parts (a name it
  // invents costs nothing).
  EXPECT_EQ(got, want);
  // The import inside the function is not ordered on, but it still ties the two modules together.
  EXPECT_EQ(nested, std::vector<std::string>{"late"});
  EXPECT_TRUE(scanned[0].plain);
  EXPECT_FALSE(scanned[2].plain);
}

TEST(ProjectScan, DefinitionsAreTheTopLevelDefsAndClasses) {
  auto defs = project::scanDefinitions(
      "import torch\nfrom .util import helper\n"
      "def train(model):\n    def inner():\n        pass\n"
      "async def fetch():\n    pass\n"
      "class Meter(object):\n    def add(self, x):\n        pass\n"
      "class Net(torch.nn.Module): pass\n");
  EXPECT_EQ(defs, (std::vector<std::string>{"Meter", "Net", "fetch", "train"}));
}

TEST(ProjectCache, ExportsAndQuestionsSurviveTheCacheText) {
  fs::path root = fs::path(OOMLINT_FIXTURES) / "projects" / "meter_class_other_module";
  std::string source = testutil::slurp(root / "stats.py");
  CheckOptions opts = testutil::everyRule();
  project::FileExports exports;
  opts.onFacts = [&](const Module& m, const Facts* facts) {
    exports = project::exportsOf(m, facts, [](std::string_view) { return true; });
  };
  checkSource((root / "stats.py").string(), source, opts);
  ASSERT_FALSE(exports.functions.empty());  // RunningStats.add sums its argument
  project::CachedModule c{exports, {{"stats.RunningStats.add"}, {"stats.RunningStats"}, {"train"}, 4 | 8}, 42};
  project::CachedModule back;
  ASSERT_TRUE(project::decode(project::encode(c), back));
  EXPECT_EQ(back.exports.hash(), exports.hash());
  EXPECT_EQ(back.questions.functions, c.questions.functions);
  EXPECT_EQ(back.questions.callers, c.questions.callers);
  EXPECT_EQ(back.questions.program, 4 | 8);  // which program facts were read
  EXPECT_EQ(back.answered, 42u);
  EXPECT_FALSE(project::decode("F\tbroken\n", back));  // not what encode writes: analysed again
  EXPECT_FALSE(project::decode(project::encode(c).substr(0, 20), back));
}

TEST(ProjectParts, ProgramsHoldingANamedModuleAreItsImportersAndWhatTheyImport) {
  // Importers of pkg/core.py, directly or not: the package's __init__, a module importing the
  // package relatively (which spells no module name), what imports the package, what imports
  // that, and a dotted import. Then everything they import. A file that only mentions the name,
  // and one that imports something else, hold no program of it.
  TempTree t("oomlint_project_programs");
  const fs::path& tmp = t.root;
  auto write = [&](const std::string& rel, const std::string& text) { t.write(rel, text); };
  write("pkg/__init__.py", "from .core import run\n");
  write("pkg/cli.py", "from . import run\n");  // the package, by no name it spells
  write("pkg/core.py", "from . import helpers\n\ndef run():\n    pass\n");
  write("pkg/helpers.py", "x = 1\n");
  write("app.py", "import pkg\n");
  write("main.py", "import app\nimport vendored\n");
  write("vendored.py", "y = 2\n");
  write("tool.py", "from pkg.core import run\n");
  write("notes.py", "# the core of it: corevalues, score\nimport json\n");
  write("unrelated.py", "import os\n");
  std::vector<std::string> candidates;
  for (const fs::path& f : projectFiles(tmp)) candidates.push_back(f.string());
  auto holding = [&](ResultCache* cache) {
    std::set<std::string> got;
    for (const std::string& f : project::programsHolding(tmp.string(), {(tmp / "pkg" / "core.py").string()}, candidates, 2, cache))
      got.insert(fs::relative(f, tmp).string());
    return got;
  };
  std::set<std::string> want = {"pkg/core.py", "pkg/__init__.py", "pkg/cli.py", "pkg/helpers.py", "app.py", "main.py", "vendored.py", "tool.py"};
  EXPECT_EQ(holding(nullptr), want);

  // The same with a cache: while it fills, and from what it kept (another process's run).
  std::string warning, cacheDir = (t.root / ".cache").string();
  {
    ResultCache filling(cacheDir, warning);
    EXPECT_EQ(holding(&filling), want);
    EXPECT_EQ("", filling.save());
  }
  ResultCache kept(cacheDir, warning);
  EXPECT_EQ("", warning);
  EXPECT_EQ(holding(&kept), want);
  // An edited module is read again: it imports the package now.
  write("unrelated.py", "import os\nfrom pkg import core\n");
  want.insert("unrelated.py");
  EXPECT_EQ(holding(&kept), want);
}

TEST(ProjectParts, AnUnchangedModulesImportsComeFromTheCacheUnread) {
  // The cache keys a module's imports by its size, modification time and inode, as ruff's and
  // git's do: a file rewritten with the same size and its old modification time is not read
  // again. That is how this test sees the cache answer in place of the file.
  TempTree t("oomlint_project_scan_cache");
  t.write("core.py", "x = 1\n");
  t.write("notes.py", "# nothing to see here\n");
  std::vector<std::string> candidates = {(t.root / "core.py").string(), (t.root / "notes.py").string()};
  auto holding = [&](ResultCache* cache) {
    return project::programsHolding(t.root.string(), {candidates[0]}, candidates, 1, cache).size();
  };
  fs::file_time_type old = fs::last_write_time(t.root / "notes.py") - std::chrono::hours(1);
  fs::last_write_time(t.root / "notes.py", old);
  std::string warning;
  ResultCache cache((t.root / ".cache").string(), warning);
  EXPECT_EQ(1u, holding(&cache));
  t.write("notes.py", "import core  # see it\n");  // the same 22 bytes
  fs::last_write_time(t.root / "notes.py", old);
  EXPECT_EQ(2u, holding(nullptr));  // read: notes.py imports core
  EXPECT_EQ(1u, holding(&cache));   // not read: its entry stands
}

TEST(ProjectParts, ModulesNoImportJoinsAreAnalysedApart) {
  // Two example folders that share nothing, one script importing a helper only inside a function,
  // and a folder tied to another by a dotted import: three parts. A root that is a package is one.
  TempTree t("oomlint_project_parts");
  const fs::path& tmp = t.root;
  auto write = [&](const std::string& rel, const std::string& text) { t.write(rel, text); };
  write("mnist/main.py", "from model import Net\n");
  write("mnist/model.py", "import torch\n");
  write("vae/main.py", "import torch\n");
  write("run.py", "def go():\n    from shared import tools\n");
  write("shared/tools.py", "x = 1\n");
  write("gan/train.py", "import common.blocks.conv\n");
  write("common/blocks/conv.py", "import torch\n");
  std::vector<std::string> abs;
  for (const fs::path& f : projectFiles(tmp)) abs.push_back(f.string());
  project::Project p(tmp.string(), abs);
  std::set<std::set<std::string>> got;
  for (const auto& part : project::independentParts(p, 2)) {
    std::set<std::string> names;
    for (size_t i : part) names.insert(fs::relative(p.file(i), tmp).string());
    got.insert(names);
  }
  std::set<std::set<std::string>> want = {{"mnist/main.py", "mnist/model.py"},
                                          {"vae/main.py"},
                                          {"run.py", "shared/tools.py"},
                                          {"gan/train.py", "common/blocks/conv.py"}};
  EXPECT_EQ(got, want);
  write("__init__.py", "");
  abs.push_back((tmp / "__init__.py").string());
  project::Project package(tmp.string(), abs);
  EXPECT_EQ(project::independentParts(package, 2).size(), 1u);
}
