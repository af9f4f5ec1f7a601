// Jupyter notebooks: read as one module across cells, reported per cell, fixed in place (every
// written notebook validated with nbformat), and refused clearly when they cannot be checked.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "notebook/notebook.h"
#include "notebook/scan.h"
#include "util/changed_range.h"
#include "test_util.h"

namespace fs = std::filesystem;
using nlohmann::json;
using testutil::sh;
using testutil::slurp;
using testutil::spit;

namespace {

struct Result {
  int rc = -1;
  std::string out, err;
};

class Notebooks : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("oomlint_nb_" + std::to_string(::getpid()) + "_" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }

  Result run(const std::string& args) {
    std::string out = (dir / ".out").string(), err = (dir / ".err").string();
    Result r;
    r.rc = sh("cd '" + dir.string() + "' && " + std::string(OOMLINT_BINARY) + " " + args + " >'" + out + "' 2>'" + err + "'");
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }
  /// nbformat's own validator (Debian's python3-nbformat) accepts the file.
  bool valid(const fs::path& p) {
    return sh("/usr/bin/python3 -c \"import nbformat, sys; nbformat.validate(nbformat.read(sys.argv[1], as_version=4))\" '" +
              p.string() + "' 2>'" + (dir / ".validate").string() + "'") == 0;
  }
  fs::path copyExample() {
    fs::copy_file(fs::path(OOMLINT_EXAMPLES) / "notebooks" / "train.ipynb", dir / "train.ipynb");
    return dir / "train.ipynb";
  }

  fs::path dir;
};

json codeCell(json source) {
  return {{"cell_type", "code"}, {"execution_count", 3}, {"id", "c" + std::to_string(source.dump().size())},
          {"metadata", {{"tags", {"keep"}}}}, {"outputs", {{{"name", "stdout"}, {"output_type", "stream"}, {"text", {"42\n"}}}}},
          {"source", std::move(source)}};
}

json notebookOf(std::vector<json> cells) {
  return {{"cells", cells},
          {"metadata", {{"kernelspec", {{"display_name", "Python 3"}, {"language", "python"}, {"name", "python3"}}}}},
          {"nbformat", 4},
          {"nbformat_minor", 5}};
}

std::vector<std::string> linesOf(const std::string& s) {
  std::vector<std::string> out;
  size_t b = 0;
  while (b <= s.size()) {
    size_t e = s.find('\n', b);
    if (e == std::string::npos) e = s.size();
    out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

}  // namespace

TEST(NotebookReading, CellsJoinInOrderAndIPythonSyntaxIsBlanked) {
  json nb = notebookOf({codeCell({"!pip install torch\n", "%matplotlib inline\n", "import torch\n"}),
                        {{"cell_type", "markdown"}, {"metadata", json::object()}, {"source", "# heading"}},
                        codeCell({"%%time\n", "x = 1\n"}),
                        codeCell({"model?\n", "files = !ls\n", "y = 2  # is it?\n", "z = 3"}),
                        codeCell({"!pip install -q \\\n", "    transformers \\\n", "    peft\n", "w = 4\n"})});
  oomlint::Notebook n = oomlint::readNotebook(nb.dump(1));
  ASSERT_TRUE(n.error.empty()) << n.error;
  ASSERT_EQ(n.cells.size(), 4u);
  EXPECT_EQ(n.module, "\n\nimport torch\n\n\n\n\ny = 2  # is it?\nz = 3\n\n\n\nw = 4\n")
      << "a shell escape's continuation lines are the shell's too";
  EXPECT_EQ(n.cells[0].number, 1u);
  EXPECT_EQ(n.cells[1].number, 3u) << "cells count markdown too, as Jupyter shows them";
  EXPECT_EQ(n.cells[2].firstLine, 6u);
  oomlint::CellPosition p = oomlint::cellPosition(n, 9);
  EXPECT_EQ(p.cell, 4u);
  EXPECT_EQ(p.line, 4u);
  EXPECT_GT(p.jsonLine, 0u);
  EXPECT_NE(std::string::npos, linesOf(nb.dump(1))[p.jsonLine - 1].find("z = 3"));
}

TEST(NotebookReading, ClearErrorsAndOtherKernelsSkipped) {
  EXPECT_NE(std::string::npos, oomlint::readNotebook("{\"cells\": [").error.find("malformed JSON"));
  EXPECT_NE(std::string::npos, oomlint::readNotebook(R"({"cells": [], "metadata": {}, "nbformat": 3})").error.find("nbformat 4"));
  json md = notebookOf({{{"cell_type", "markdown"}, {"metadata", json::object()}, {"source", "text"}}});
  EXPECT_EQ(oomlint::readNotebook(md.dump(1)).error, "the notebook has no code cells");
  json r = notebookOf({codeCell({"x <- 1"})});
  r["metadata"]["kernelspec"]["language"] = "R";
  oomlint::Notebook n = oomlint::readNotebook(r.dump(1));
  EXPECT_TRUE(n.error.empty());
  EXPECT_NE(std::string::npos, n.skipped.find("kernel language is R"));
}

TEST_F(Notebooks, ExampleNotebookIsCheckedAcrossCellsAndReportedPerCell) {
  copyExample();
  Result r = run("check --isolated --no-cache --output-format concise train.ipynb");
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("train.ipynb:cell 8:11:9: OOM101 ")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("train.ipynb:cell 10:4:14: OOM201 ")) << r.out;
  Result full = run("check --isolated --no-cache train.ipynb");
  EXPECT_NE(std::string::npos, full.out.find("--> train.ipynb:cell 10:1:1")) << full.out;  // the eval() note
  // From the results cache: the same findings in the same cells.
  Result first = run("check --isolated --output-format concise train.ipynb");
  Result cached = run("check --isolated --output-format concise train.ipynb");
  EXPECT_TRUE(fs::exists(dir / ".oomlint_cache"));
  EXPECT_EQ(cached.out, r.out);
  EXPECT_EQ(first.out, r.out);
  json j = json::parse(run("check --isolated --no-cache --output-format json train.ipynb").out);
  ASSERT_FALSE(j.empty());
  EXPECT_EQ(j[0]["cell"], 8);
  EXPECT_EQ(j[0]["location"]["row"], 11);
  EXPECT_EQ(j[0]["location"]["column"], 9);
  EXPECT_EQ(j[0]["fix"]["edits"][0]["location"]["row"], 11) << "edits are positioned in the cell too";
  EXPECT_EQ(j[0]["related"][0]["cell"], 8);
}

TEST_F(Notebooks, FileFormatsPointAtTheNotebooksOwnLines) {
  fs::path nb = copyExample();
  std::vector<std::string> jsonLines = linesOf(slurp(nb));
  Result gh = run("check --isolated --no-cache --output-format github train.ipynb");
  size_t at = gh.out.find("OOM101");
  ASSERT_NE(at, std::string::npos) << gh.out;
  size_t lineAt = gh.out.find(",line=", at) + 6;
  int line = std::stoi(gh.out.substr(lineAt));
  EXPECT_NE(std::string::npos, jsonLines[static_cast<size_t>(line - 1)].find("running_loss += loss")) << line;
  Result sarif = run("check --isolated --no-cache --output-format sarif -o out.sarif train.ipynb");
  json doc = json::parse(slurp(dir / "out.sarif"));
  const json& res = doc["runs"][0]["results"][0];
  EXPECT_EQ(res["locations"][0]["physicalLocation"]["region"]["startLine"], line);
  EXPECT_EQ(res["properties"]["notebookCell"]["cell"], 8);
  ASSERT_TRUE(fs::exists(OOMLINT_SARIF_MULTITOOL)) << "run scripts/fetch-deps.sh";
  EXPECT_EQ(0, sh(std::string(OOMLINT_SARIF_MULTITOOL) + " validate --output '" + (dir / "v.sarif").string() + "' '" +
                  (dir / "out.sarif").string() + "' > '" + (dir / "v.log").string() + "' 2>&1"))
      << slurp(dir / "v.log");
  json v = json::parse(slurp(dir / "v.sarif"));
  for (const json& x : v["runs"][0]["results"]) EXPECT_NE(x.value("level", "warning"), "error") << x.dump();
  Result gl = run("check --isolated --no-cache --output-format gitlab train.ipynb");
  EXPECT_EQ(json::parse(gl.out)[0]["location"]["lines"]["begin"], line);
}

TEST_F(Notebooks, FixWritesOnlyTheChangedLinesAndStaysValid) {
  fs::path nb = copyExample();
  std::string before = slurp(nb);
  Result diff = run("check --isolated --no-cache --diff --unsafe-fixes train.ipynb");
  EXPECT_NE(std::string::npos, diff.out.find("--- train.ipynb:cell 10\n+++ train.ipynb:cell 10\n")) << diff.out;
  EXPECT_NE(std::string::npos, diff.out.find("+        running_loss += loss.item()")) << diff.out;
  EXPECT_EQ(slurp(nb), before) << "--diff writes nothing";
  Result fix = run("check --isolated --no-cache --fix --unsafe-fixes train.ipynb");
  EXPECT_EQ(fix.rc, 0) << fix.out << fix.err;
  std::string after = slurp(nb);
  ASSERT_TRUE(valid(nb)) << slurp(dir / ".validate");
  EXPECT_EQ(after.back(), '\n');
  std::vector<std::string> a = linesOf(before), b = linesOf(after);
  // Everything but the fixed lines is byte for byte the same: the OOM101 line, and the wrapped
  // loop (3 lines re-indented under one new `with` line, OOM103's host copy on the last).
  std::multiset<std::string> removed(a.begin(), a.end()), added(b.begin(), b.end());
  for (const std::string& l : b)
    if (auto it = removed.find(l); it != removed.end()) removed.erase(it);
  for (const std::string& l : a)
    if (auto it = added.find(l); it != added.end()) added.erase(it);
  EXPECT_EQ(removed.size(), 4u);
  EXPECT_EQ(added.size(), 5u);
  // And in the same places: the common prefix ends at the first fixed line.
  size_t same = 0;
  while (a[same] == b[same]) ++same;
  EXPECT_NE(std::string::npos, a[same].find("running_loss += loss\\n")) << a[same];
  EXPECT_NE(std::string::npos, after.find("\"        running_loss += loss.item()\\n\",\n"));
  EXPECT_NE(std::string::npos, after.find("\"with torch.no_grad():\\n\",\n    \"    for x, y in val_loader:\\n\","));
  EXPECT_EQ(run("check --isolated --no-cache train.ipynb").out, "All checks passed!\n");
}

TEST_F(Notebooks, FixKeepsTheFilesOwnIndentationStringSourcesAndMissingFinalNewline) {
  // Two-space indentation, a source written as one string, a cell whose last line has no line
  // break, outputs and metadata that must not move.
  json nb = notebookOf({codeCell("import torch\nimport torch.nn as nn\nmodel = nn.Linear(4, 2)\n"),
                        codeCell({"model.eval()\n", "outs = []\n", "for x in [torch.randn(1, 4)]:\n", "    outs.append(model(x))"})});
  std::string text = nb.dump(2) + "\n";
  spit(dir / "n.ipynb", text);
  Result fix = run("check --isolated --no-cache --fix n.ipynb");
  std::string after = slurp(dir / "n.ipynb");
  ASSERT_NE(after, text) << fix.out << fix.err;
  ASSERT_TRUE(valid(dir / "n.ipynb")) << slurp(dir / ".validate");
  json got = json::parse(after);
  EXPECT_EQ(got["cells"][0], nb["cells"][0]);
  EXPECT_EQ(got["cells"][1]["outputs"], nb["cells"][1]["outputs"]);
  EXPECT_EQ(got["cells"][1]["metadata"], nb["cells"][1]["metadata"]);
  EXPECT_EQ(got["cells"][1]["source"],
            json({"model.eval()\n", "outs = []\n", "with torch.no_grad():\n", "    for x in [torch.randn(1, 4)]:\n",
                  "        outs.append(model(x))"}));
  // The text outside the changed cell's source is byte for byte the original.
  size_t p = text.find("\"model.eval()"), q = after.find("\"model.eval()");
  EXPECT_EQ(after.substr(0, q), text.substr(0, p));
  EXPECT_EQ(after.substr(after.rfind("model(x))\"") + 11), text.substr(text.rfind("model(x))\"") + 11))
      << "what follows the last changed line (indentation of ']', the rest of the file) is unchanged";
}

TEST_F(Notebooks, AFixThatWouldTouchAMagicLineIsNotWritten) {
  json nb = notebookOf({codeCell({"import torch\n", "model = torch.nn.Linear(4, 2)\n"}),
                        codeCell({"model.eval()\n", "outs = []\n", "for x in [torch.randn(1, 4)]:\n", "    %time y = model(x)\n",
                                  "    outs.append(model(x))\n"})});
  std::string text = nb.dump(1) + "\n";
  spit(dir / "m.ipynb", text);
  Result check = run("check --isolated --no-cache --output-format concise m.ipynb");
  EXPECT_NE(std::string::npos, check.out.find("m.ipynb:cell 2:5:")) << check.out;
  run("check --isolated --no-cache --fix m.ipynb");
  EXPECT_EQ(slurp(dir / "m.ipynb"), text) << "the wrap would re-indent the %time line: the cell is left alone";
}

TEST_F(Notebooks, NoqaInCellsFileLevelInAnyCellAndAddNoqa) {
  fs::path nb = copyExample();
  ASSERT_EQ(run("check --isolated --no-cache --add-noqa train.ipynb").rc, 0);
  ASSERT_TRUE(valid(nb)) << slurp(dir / ".validate");
  EXPECT_NE(std::string::npos, slurp(nb).find("running_loss += loss  # noqa: OOM101\\n"));
  EXPECT_EQ(run("check --isolated --no-cache train.ipynb").out, "All checks passed!\n");
  json doc = notebookOf({codeCell({"import torch\n", "model = torch.nn.Linear(4, 2)\n"}),
                         codeCell({"# oomlint: noqa\n", "model.eval()\n", "outs = [model(torch.randn(1, 4))]\n"})});
  spit(dir / "fl.ipynb", doc.dump(1));
  EXPECT_EQ(run("check --isolated --no-cache fl.ipynb").out, "All checks passed!\n");
}

TEST_F(Notebooks, FilesThatCannotBeCheckedAreErrorsAndTheRestIsStillChecked) {
  spit(dir / "bad.ipynb", "{\"cells\": [");
  spit(dir / "md.ipynb", notebookOf({{{"cell_type", "markdown"}, {"metadata", json::object()}, {"source", "hi"}}}).dump(1));
  spit(dir / "notes.txt", "x = 1\n");
  spit(dir / "leaky.py", testutil::kLeaky);
  Result r = run("check --isolated --no-cache --output-format concise bad.ipynb md.ipynb notes.txt leaky.py");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(std::string::npos, r.out.find("bad.ipynb:1:1: OOM001 not a valid notebook: malformed JSON")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("md.ipynb:1:1: OOM001 the notebook has no code cells")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("notes.txt:1:1: OOM001 not a file oomlint can check")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("leaky.py:10:9: OOM101")) << r.out;
  Result alone = run("check --isolated --no-cache notes.txt");
  EXPECT_EQ(alone.rc, 1);
  EXPECT_EQ(std::string::npos, alone.out.find("All checks passed!")) << alone.out;
  json other = notebookOf({codeCell({"x <- 1"})});
  other["metadata"]["kernelspec"]["language"] = "R";
  spit(dir / "r.ipynb", other.dump(1));
  Result skipped = run("check --isolated --no-cache r.ipynb");
  EXPECT_NE(std::string::npos, skipped.err.find("kernel language is R, not Python")) << skipped.err;
}

TEST_F(Notebooks, FixingEveryNotebookFixtureChangesOnlyTheFixedLines) {
  size_t fixtures = 0;
  for (const auto& e : fs::directory_iterator(fs::path(OOMLINT_FIXTURES) / "notebooks")) {
    if (e.path().extension() != ".ipynb") continue;
    ++fixtures;
    SCOPED_TRACE(e.path().filename().string());
    fs::path nb = dir / e.path().filename();
    fs::copy_file(e.path(), nb, fs::copy_options::overwrite_existing);
    std::string before = slurp(nb);
    Result fix = run("check --isolated --no-cache --fix --unsafe-fixes '" + nb.filename().string() + "'");
    std::string after = slurp(nb);
    ASSERT_NE(after, before) << "every notebook fixture has something to fix: " << fix.out << fix.err;
    ASSERT_TRUE(valid(nb)) << slurp(dir / ".validate");
    Result left = run("check --isolated --no-cache --output-format json --unsafe-fixes '" + nb.filename().string() + "'");
    for (const json& f : json::parse(left.out))
      EXPECT_TRUE(f["fix"].is_null() || f["fix"]["applicability"] == "display-only") << "left fixable: " << f.dump();
    // Outside the cells' sources nothing moved: with every code cell's source cut out, the texts agree.
    oomlint::Notebook a = oomlint::readNotebook(before), b = oomlint::readNotebook(after);
    ASSERT_EQ(a.cells.size(), b.cells.size());
    auto skeleton = [](const std::string& text, const oomlint::Notebook& n) {
      std::string out;
      size_t at = 0;
      for (const oomlint::NotebookCell& c : n.cells) {
        out += text.substr(at, c.sourceBegin - at) + "<source>";
        at = c.sourceEnd;
      }
      return out + text.substr(at);
    };
    EXPECT_EQ(skeleton(after, b), skeleton(before, a));
    // Inside a source: the lines before the first and after the last changed line keep their
    // exact JSON text (escapes, quoting); only the changed run is new.
    for (size_t i = 0; i < a.cells.size(); ++i) {
      const oomlint::NotebookCell &x = a.cells[i], &y = b.cells[i];
      if (x.lines == y.lines) {
        EXPECT_EQ(after.substr(y.sourceBegin, y.sourceEnd - y.sourceBegin), before.substr(x.sourceBegin, x.sourceEnd - x.sourceBegin));
        continue;
      }
      size_t p = 0, s = 0;
      while (p < x.lines.size() && p < y.lines.size() && x.lines[p] == y.lines[p]) ++p;
      while (s < x.lines.size() - p && s < y.lines.size() - p && x.lines[x.lines.size() - 1 - s] == y.lines[y.lines.size() - 1 - s]) ++s;
      EXPECT_GT(y.lines.size() - p - s, 0u);
      if (!x.sourceIsArray || x.items.size() != x.lines.size()) continue;  // one string: rewritten whole
      for (size_t k = 0; k < p; ++k)
        EXPECT_EQ(after.substr(y.items[k].first, y.items[k].second - y.items[k].first),
                  before.substr(x.items[k].first, x.items[k].second - x.items[k].first));
      for (size_t k = 0; k < s; ++k) {
        const auto &xi = x.items[x.items.size() - 1 - k], &yi = y.items[y.items.size() - 1 - k];
        EXPECT_EQ(after.substr(yi.first, yi.second - yi.first), before.substr(xi.first, xi.second - xi.first));
      }
    }
    EXPECT_EQ(after.back() == '\n', before.back() == '\n') << "the file's final newline (or its absence) is kept";
  }
  EXPECT_GE(fixtures, 3u);
}

TEST(NotebookReading, EmptyCellsHoldNoLine) {
  oomlint::Notebook n = oomlint::notebookFromCells({"a = 1\n", "", "b = 2\nc = 3"});
  ASSERT_EQ(n.module, "a = 1\nb = 2\nc = 3\n");
  EXPECT_EQ(oomlint::cellPosition(n, 1).cell, 1u);
  EXPECT_EQ(oomlint::cellPosition(n, 2).cell, 3u) << "the empty second cell holds no line";
  EXPECT_EQ(oomlint::cellPosition(n, 3).line, 2u);
  EXPECT_EQ(oomlint::cellPosition(n, 4).cell, 0u) << "past the last line: no cell";
  EXPECT_EQ(oomlint::cellAt(n, 0), 0);
  EXPECT_EQ(oomlint::cellAt(n, 6), 2);
  EXPECT_EQ(oomlint::cellAt(n, 15), 2);
}

/// The server's join after an edit, which takes the unchanged cells from the previous one, must
/// give what a join from scratch gives: module text, cell offsets, lines, blanking.
TEST(NotebookReading, AJoinAfterAnEditEqualsAFreshOne) {
  auto expectSame = [](const oomlint::Notebook& got, const oomlint::Notebook& want, const std::string& what) {
    ASSERT_EQ(got.module, want.module) << what;
    ASSERT_EQ(got.cells.size(), want.cells.size()) << what;
    for (size_t i = 0; i < want.cells.size(); ++i) {
      const oomlint::NotebookCell &g = got.cells[i], &w = want.cells[i];
      EXPECT_EQ(g.number, w.number) << what << ", cell " << i;
      EXPECT_EQ(g.begin, w.begin) << what << ", cell " << i;
      EXPECT_EQ(g.firstLine, w.firstLine) << what << ", cell " << i;
      EXPECT_EQ(g.lines, w.lines) << what << ", cell " << i;
      EXPECT_EQ(g.blanked, w.blanked) << what << ", cell " << i;
      EXPECT_EQ(g.endsWithNewline, w.endsWithNewline) << what << ", cell " << i;
      EXPECT_EQ(g.jsonLines, w.jsonLines) << what << ", cell " << i;
    }
  };
  const std::vector<std::string> before = {"import torch\n", "%%time\nx = 1\n", "", "!pip install a \\\n  b\ny = 2",
                                           "losses = []\nlosses.append(loss)\n"};
  const std::vector<std::vector<std::string>> edits = {
      {"import torch\n", "%%time\nx = 1\n", "", "!pip install a \\\n  b\ny = 2", "losses = []\nlosses.append(loss.item())\n"},
      {"import torch\n", "x = 1\n", "", "!pip install a \\\n  b\ny = 2", "losses = []\nlosses.append(loss)\n"},  // magic gone
      {"import torch\n", "%%time\nx = 1\n", "z = 3\n", "!pip install a \\\n  b\ny = 2", "losses = []\nlosses.append(loss)\n"},
      {"import torch\n", "%%time\nx = 1\n", "", "!pip install a \\\n  b\ny = 2\n", "losses = []\nlosses.append(loss)\n"},
      {"new = 0\n", "import torch\n", "%%time\nx = 1\n", "", "!pip install a \\\n  b\ny = 2", "losses = []\n"},  // inserted
      {"import torch\n", "%%time\nx = 1\n"},  // removed
      {"import torch", "%%time\nx = 1\n", "", "!pip install a \\\n  b\ny = 2", "losses = []\nlosses.append(loss)\n"}};
  for (size_t k = 0; k < edits.size(); ++k) {
    oomlint::Notebook previous = oomlint::notebookFromCells(before);
    const std::string previousModule = previous.module;
    oomlint::Notebook next = oomlint::notebookFromCells(edits[k], &previous);
    expectSame(next, oomlint::notebookFromCells(edits[k]), "edit " + std::to_string(k));
    EXPECT_EQ(previous.module, previousModule) << "the previous module text is kept for the server's diff";
    expectSame(oomlint::notebookFromCells(before, &next), oomlint::notebookFromCells(before), "edit " + std::to_string(k) + " undone");
  }
}

/// The block-wise prefix/suffix the server diffs a re-joined module with equals the byte-wise one,
/// at block boundaries, for growing, shrinking and identical texts, and never overlaps.
TEST(NotebookReading, TheChangedRangeIsTheBytewiseOne) {
  auto bytewise = [](std::string_view a, std::string_view b) {
    size_t p = 0, s = 0;
    while (p < a.size() && p < b.size() && a[p] == b[p]) ++p;
    while (s < a.size() - p && s < b.size() - p && a[a.size() - 1 - s] == b[b.size() - 1 - s]) ++s;
    return std::pair{p, s};
  };
  std::string base;
  for (int i = 0; i < 3000; ++i) base += static_cast<char>('a' + (i * 7) % 23);
  std::vector<std::pair<std::string, std::string>> cases = {{"", ""}, {"", "x"}, {"abc", "abc"}, {"aaaa", "aa"}, {base, base}};
  for (size_t at : {0ul, 1ul, 255ul, 256ul, 257ul, 511ul, 512ul, 1500ul, 2743ul, 2744ul, 2999ul}) {
    std::string edited = base;
    edited[at] = '#';
    cases.push_back({base, edited});
    cases.push_back({base, base.substr(0, at) + "inserted" + base.substr(at)});
    cases.push_back({base, base.substr(0, at) + base.substr(std::min(base.size(), at + 300))});
    cases.push_back({base.substr(0, at), base});
  }
  for (const auto& [a, b] : cases) {
    oomlint::ChangedRange r = oomlint::changedRange(a, b);
    auto [p, s] = bytewise(a, b);
    EXPECT_EQ(r.prefix, p) << a.size() << " -> " << b.size();
    EXPECT_EQ(r.suffix, s) << a.size() << " -> " << b.size();
  }
}

namespace {

/// Everything readNotebook gives, as text, so two readings can be compared whole.
std::string describe(const oomlint::Notebook& nb) {
  std::string out = "error=" + nb.error + "\nskipped=" + nb.skipped + "\nmodule=" + nb.module + "\n";
  for (const oomlint::NotebookCell& c : nb.cells) {
    out += "cell " + std::to_string(c.number) + " line " + std::to_string(c.firstLine) + " at " + std::to_string(c.begin) + " source " +
           std::to_string(c.sourceBegin) + "-" + std::to_string(c.sourceEnd) + (c.sourceIsArray ? " array" : " string") +
           (c.endsWithNewline ? " nl" : "") + "\n";
    for (size_t k = 0; k < c.lines.size(); ++k)
      out += "  " + std::to_string(c.jsonLines[k]) + (c.blanked[k] ? " blank " : " ") + c.lines[k] + "|\n";
    for (const auto& [b, e] : c.items) out += "  item " + std::to_string(b) + "-" + std::to_string(e) + "\n";
  }
  return out;
}

}  // namespace

TEST(NotebookReading, TheOnePassAgreesWithTheJsonDocument) {
  // Notebooks as tools write them, and odd but valid ones: escapes of every kind, raw UTF-8, a
  // surrogate pair, a string source, markdown cells, numbers and literals in outputs, language
  // from language_info only, another kernel, keys given twice (the document's reading decides).
  std::vector<std::string> texts;
  for (const char* f : {"fixtures/notebooks/two_space_strings.ipynb", "fixtures/notebooks/no_final_newline.ipynb",
                        "fixtures/notebooks/jupyter_layout.ipynb", "examples/notebooks/train.ipynb"})
    texts.push_back(slurp(fs::path(OOMLINT_SOURCE_DIR) / f));
  const std::string cells =
      R"("cells": [{"cell_type": "markdown", "source": ["# title \u00e9\n"]},)"
      R"( {"cell_type": "code", "execution_count": 3, "metadata": {"a": [true, false, null, -1.5e3, 0, 12345678901234567890123]},)"
      R"( "outputs": [{"data": {"text/plain": ["1\t2"]}}], "source": ["import torch\n", "s = \"\\\"q\\\" \/ \u00e9 \ud83d\ude00 é 😀\"\r\n",)"
      R"( "%time x = 1\n", "total = 0\n", "for b in loader:\n", "    loss = model(b)\n", "    total += loss"]},)"
      R"( {"cell_type": "code", "source": "y = 2\n"}, {"cell_type": "raw", "source": []}, {"source": ["z = 1"]}])";
  texts.push_back("{" + cells + R"(, "metadata": {"kernelspec": {"name": "python3", "language": "python"}}, "nbformat": 4, "nbformat_minor": 5})");
  texts.push_back("{\n " + cells + ",\n \"metadata\": {\"language_info\": {\"name\": \"Python\"}},\n \"nbformat\": 4\n}\n");
  texts.push_back("{" + cells + R"(, "metadata": {"kernelspec": {"language": "R"}}, "nbformat": 4})");
  texts.push_back("{" + cells + R"(, "metadata": {"kernelspec": {"language": 3}, "language_info": {"name": "julia"}}, "nbformat": 4})");
  texts.push_back("{" + cells + R"(, "nbformat": 4, "metadata": {}, "metadata": {"kernelspec": {"language": "R"}}})");
  texts.push_back("{" + cells + R"(, "nbformat": 4, "nbformat": 3})");
  texts.push_back(R"({"nbformat": 4, "cells": [{"cell_type": "code", "source": ["a = 1\n"], "cell_type": "markdown"}]})");
  texts.push_back(R"({"nbformat": 4, "cells": [{"cell_type": "code"}]})");
  texts.push_back(R"({"nbformat": 4, "cells": [{"cell_type": "code", "source": [1]}]})");
  texts.push_back(R"({"nbformat": 4, "cells": [{"cell_type": "markdown", "source": "x"}]})");
  texts.push_back(R"({"nbformat": 4.0, "cells": []})");
  texts.push_back(R"({"nbformat": "4", "cells": []})");
  texts.push_back(R"({"nbformat": 4, "cells": {}})");
  texts.push_back(R"([{"nbformat": 4}])");
  // JSON nlohmann rejects: the one pass must not read any of it.
  const std::string good = R"({"nbformat": 4, "cells": [{"cell_type": "code", "source": ["X"]}]})";
  for (const char* bad : {"\"a\x01\"", "\"\\ud800\"", "\"\\udc00x\"", "\"\\x\"", "\"\xc3\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"",
                          "\"\xf4\x90\x80\x80\"", "\"ok\"] , 01, [\"", "\"ok\"], 1e999, [\"", "\"ok\"], tru, [\""}) {
    std::string text = good;
    text.replace(text.find("\"X\""), 3, bad);
    texts.push_back(text);
  }
  texts.push_back(good + " x");
  texts.push_back("\xef\xbb\xbf" + good);  // a byte-order mark: nlohmann skips it, the one pass does not read it
  texts.push_back(std::string(600, '[') + std::string(600, ']'));
  for (const std::string& text : texts) {
    oomlint::Notebook fast = oomlint::readNotebook(text), slow = oomlint::readThroughDocument(text);
    EXPECT_EQ(describe(fast), describe(slow)) << text.substr(0, 300);
  }
  // The plainly written ones are read by the one pass itself (the first eight texts); the JSON
  // nlohmann rejects never is.
  for (size_t i = 0; i < texts.size(); ++i) {
    oomlint::notebook_scan::Scanned scanned;
    bool plainlyRead = oomlint::notebook_scan::scan(texts[i], scanned, true) && scanned.nbformat == "4";
    bool rejected = !oomlint::readThroughDocument(texts[i]).error.empty() &&
                    oomlint::readThroughDocument(texts[i]).error.find("malformed JSON") != std::string::npos;
    if (i < 8) EXPECT_TRUE(plainlyRead) << i << ": " << texts[i].substr(0, 200);
    if (rejected) EXPECT_FALSE(oomlint::notebook_scan::scan(texts[i], scanned, true)) << i << ": " << texts[i].substr(0, 200);
  }
  oomlint::Notebook plain = oomlint::readNotebook(texts[4]);
  ASSERT_EQ(plain.error, "");
  ASSERT_EQ(plain.cells.size(), 2u);  // the markdown, raw and untyped cells hold no code
  EXPECT_NE(plain.module.find("s = \"\\\"q\\\" / \u00e9 \U0001F600 é 😀\"\r\n"), std::string::npos) << plain.module;
}
