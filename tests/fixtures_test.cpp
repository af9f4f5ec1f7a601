// The fixture runner: every file in fixtures/python carries its expectations inline.
// A line ending in `# expect: OOM101` (several codes comma-separated) must produce exactly those
// findings; every other line must produce none. With all rules selected, including off-by-default
// ones, so a rule cannot hide behind its default.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "engine/engine.h"
#include "fix/fix.h"

namespace fs = std::filesystem;
using namespace oomlint;

namespace {

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::map<uint32_t, std::multiset<std::string>> expectations(const std::string& source, const std::string& marker) {
  std::map<uint32_t, std::multiset<std::string>> out;
  std::istringstream in(source);
  std::string line;
  uint32_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    size_t pos = line.find(marker);
    if (pos == std::string::npos) continue;
    std::string rest = line.substr(pos + marker.size());
    std::stringstream ss(rest);
    std::string code;
    while (std::getline(ss, code, ',')) {
      code.erase(0, code.find_first_not_of(" \t"));
      code.erase(code.find_last_not_of(" \t\r") + 1);
      if (!code.empty()) out[n].insert(code);
    }
  }
  return out;
}

std::vector<fs::path> fixtureFiles() {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(OOMLINT_FIXTURES) / "python")) {
    std::string name = e.path().filename().string();
    if (e.path().extension() == ".py" && name.find(".fixed.") == std::string::npos) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

CheckOptions allRulesOptions() {
  SelectorSet s;
  s.select = {"ALL"};
  s.selectGiven = true;
  CheckOptions o;
  o.selection = RuleSelection(s);
  return o;
}

}  // namespace

class FixtureTest : public ::testing::TestWithParam<fs::path> {};

TEST_P(FixtureTest, FindingsMatchInlineExpectations) {
  const fs::path& path = GetParam();
  std::string source = readFile(path);
  auto expected = expectations(source, "# expect:");
  FileResult r = checkSource(path.string(), source, allRulesOptions());
  std::map<uint32_t, std::multiset<std::string>> actual;
  for (const Finding& f : r.findings) actual[f.span.line].insert(std::string(f.code));
  for (const auto& [line, codes] : expected) {
    auto it = actual.find(line);
    std::multiset<std::string> got = it == actual.end() ? std::multiset<std::string>{} : it->second;
    EXPECT_EQ(codes, got) << path.filename().string() << ":" << line << " expected findings missing or different";
  }
  for (const Finding& f : r.findings) {
    if (expected.count(f.span.line)) continue;
    ADD_FAILURE() << path.filename().string() << ":" << f.span.line << ":" << f.span.col + 1
                  << ": unexpected " << f.code << " " << f.message;
  }
}

class FixedFixtureTest : public ::testing::TestWithParam<fs::path> {};

/// Fixtures that have an expected fixed file next to them (`name.fixed.py`).
std::vector<fs::path> fixableFixtures() {
  std::vector<fs::path> out;
  for (const fs::path& p : fixtureFiles()) {
    fs::path fixed = p;
    fixed.replace_extension(".fixed.py");
    if (fs::exists(fixed)) out.push_back(p);
  }
  return out;
}

TEST_P(FixedFixtureTest, FixedOutputMatchesExpectedFile) {
  const fs::path& path = GetParam();
  fs::path fixed = path;
  fixed.replace_extension(".fixed.py");
  FixOptions fo;
  fo.unsafe = true;
  FixOutcome out = applyFixes(path.string(), readFile(path), allRulesOptions(), fo);
  EXPECT_EQ(readFile(fixed), out.source) << "fixing " << path.filename().string();
  // Idempotent: fixing the fixed output changes nothing.
  FixOutcome again = applyFixes(path.string(), out.source, allRulesOptions(), fo);
  EXPECT_EQ(out.source, again.source);
  EXPECT_EQ(0u, again.applied);
}

std::string fixtureName(const ::testing::TestParamInfo<fs::path>& info) {
  std::string n = info.param.stem().string();
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Python, FixtureTest, ::testing::ValuesIn(fixtureFiles()), fixtureName);
INSTANTIATE_TEST_SUITE_P(Python, FixedFixtureTest, ::testing::ValuesIn(fixableFixtures()), fixtureName);

TEST(FixtureSet, EveryRuleHasPositiveAndNegativeFixtures) {
  std::set<std::string> positive, negative;
  for (const fs::path& p : fixtureFiles()) {
    std::string src = readFile(p);
    for (const auto& [line, codes] : expectations(src, "# expect:")) positive.insert(codes.begin(), codes.end());
    std::string stem = p.stem().string();
    if (stem.find("_negative") != std::string::npos) negative.insert(stem.substr(0, stem.find('_')));
  }
  for (const Rule* r : allRules()) {
    if (!r->info().python) continue;
    std::string code(r->info().code);
    std::string lower = code;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_TRUE(positive.count(code)) << code << " has no positive fixture";
    EXPECT_TRUE(negative.count(lower)) << code << " has no negative fixture file";
  }
}
