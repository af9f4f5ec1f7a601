// The fixture runner: every file in fixtures/python and fixtures/cpp carries its expectations
// inline. A line ending in `# expect: OOM101` (C++ `// expect: OOM101`; several codes
// comma-separated) must produce exactly those
// findings; every other line must produce none. With all rules selected, including off-by-default
// ones, so a rule cannot hide behind its default.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "engine/engine.h"
#include "fix/fix.h"
#include "report/report.h"
#include "test_util.h"

namespace fs = std::filesystem;
using namespace oomlint;

namespace {

std::string readFile(const fs::path& p) { return testutil::slurp(p); }

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

/// Fixtures of one language: "python" (*.py) or "cpp" (*.cpp).
std::vector<fs::path> fixtureFiles(const std::string& lang) {
  std::vector<fs::path> files;
  std::string ext = lang == "python" ? ".py" : ".cpp";
  for (const auto& e : fs::directory_iterator(fs::path(OOMLINT_FIXTURES) / lang)) {
    std::string name = e.path().filename().string();
    if (e.path().extension() == ext && name.find(".fixed.") == std::string::npos) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool isCppFixture(const fs::path& p) { return p.extension() == ".cpp"; }
std::string markerFor(const fs::path& p) { return isCppFixture(p) ? "// expect:" : "# expect:"; }
fs::path fixedPathFor(const fs::path& p) {
  fs::path fixed = p;
  fixed.replace_extension(isCppFixture(p) ? ".fixed.cpp" : ".fixed.py");
  return fixed;
}

CheckOptions allRulesOptions() { return testutil::everyRule(); }

}  // namespace

class FixtureTest : public ::testing::TestWithParam<fs::path> {};

TEST_P(FixtureTest, FindingsMatchInlineExpectations) {
  const fs::path& path = GetParam();
  std::string source = readFile(path);
  auto expected = expectations(source, markerFor(path));
  FileResult r = checkSource(path.string(), source, allRulesOptions());
  std::map<uint32_t, std::multiset<std::string>> actual;
  for (const Finding& f : r.findings) actual[f.span.line].insert(std::string(f.code));
  if (isCppFixture(path)) EXPECT_TRUE(r.skippedReason.empty()) << r.skippedReason;
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
std::vector<fs::path> fixableFixtures(const std::string& lang) {
  std::vector<fs::path> out;
  for (const fs::path& p : fixtureFiles(lang))
    if (fs::exists(fixedPathFor(p))) out.push_back(p);
  return out;
}

TEST_P(FixedFixtureTest, FixedOutputMatchesExpectedFile) {
  const fs::path& path = GetParam();
  fs::path fixed = fixedPathFor(path);
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

/// The snapshot of a positive fixture: each finding's position, code and message, its fix (title
/// and applicability) and its evidence notes, one line each. Pinned in `<fixture>.expected`
/// beside it; `OOMLINT_UPDATE_SNAPSHOTS=1` rewrites the files (review the diff before committing).
std::string snapshotOf(const FileResult& r) {
  std::ostringstream out;
  for (const Finding& f : r.findings) {
    out << f.span.line << ":" << f.span.col + 1 << " " << f.code << " " << f.message << "\n";
    if (f.hasFix) out << "    fix (" << applicabilityName(f.fix.applicability) << "): " << f.fix.message << "\n";
    for (const Related& rel : f.related) out << "    note " << rel.span.line << ":" << rel.span.col + 1 << ": " << rel.message << "\n";
  }
  return out.str();
}

class SnapshotTest : public ::testing::TestWithParam<fs::path> {};

TEST_P(SnapshotTest, FindingsMatchTheirSnapshot) {
  const fs::path& path = GetParam();
  fs::path snapshot = path;
  snapshot.replace_extension(".expected");
  FileResult r = checkSource(path.string(), readFile(path), allRulesOptions());
  std::string actual = snapshotOf(r);
  const char* update = std::getenv("OOMLINT_UPDATE_SNAPSHOTS");
  if (update && std::string(update) == "1") {
    std::ofstream(snapshot, std::ios::binary) << actual;
    return;
  }
  ASSERT_TRUE(fs::exists(snapshot)) << snapshot << " is missing: run with OOMLINT_UPDATE_SNAPSHOTS=1 and review it";
  EXPECT_EQ(readFile(snapshot), actual) << path.filename().string();
}

std::vector<fs::path> positiveFixtures(const std::string& lang) {
  std::vector<fs::path> out;
  for (const fs::path& p : fixtureFiles(lang))
    if (p.stem().string().find("_positive") != std::string::npos) out.push_back(p);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Python, FixtureTest, ::testing::ValuesIn(fixtureFiles("python")), fixtureName);
INSTANTIATE_TEST_SUITE_P(Python, SnapshotTest, ::testing::ValuesIn(positiveFixtures("python")), fixtureName);
INSTANTIATE_TEST_SUITE_P(Cpp, SnapshotTest, ::testing::ValuesIn(positiveFixtures("cpp")), fixtureName);
INSTANTIATE_TEST_SUITE_P(Python, FixedFixtureTest, ::testing::ValuesIn(fixableFixtures("python")), fixtureName);
INSTANTIATE_TEST_SUITE_P(Cpp, FixtureTest, ::testing::ValuesIn(fixtureFiles("cpp")), fixtureName);
INSTANTIATE_TEST_SUITE_P(Cpp, FixedFixtureTest, ::testing::ValuesIn(fixableFixtures("cpp")), fixtureName);

class FixtureSet : public ::testing::TestWithParam<std::string> {};

TEST_P(FixtureSet, EveryRuleHasPositiveAndNegativeFixtures) {
  const std::string lang = GetParam();
  std::set<std::string> positive, negative;
  for (const fs::path& p : fixtureFiles(lang)) {
    std::string src = readFile(p);
    for (const auto& [line, codes] : expectations(src, markerFor(p))) positive.insert(codes.begin(), codes.end());
    std::string stem = p.stem().string();
    if (stem.find("_negative") != std::string::npos) negative.insert(stem.substr(0, stem.find('_')));
  }
  for (const Rule* r : allRules()) {
    if (lang == "python" ? !r->info().python : !r->info().cpp) continue;
    std::string code(r->info().code);
    std::string lower = code;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_TRUE(positive.count(code)) << code << " has no positive fixture";
    EXPECT_TRUE(negative.count(lower)) << code << " has no negative fixture file";
  }
}

INSTANTIATE_TEST_SUITE_P(Languages, FixtureSet, ::testing::Values("python", "cpp"));

// A run over many files keeps only its findings' lines (keepOnlyReportedLines): every output
// format must read exactly as it did from the whole file.
TEST(ReportedLines, EveryFormatReadsTheSameFromTheKeptLines) {
  const std::string filler = "# filler line with non-ASCII text: é → 中文\nvalue = 1  # tab\there\n";
  std::string pad;
  for (int i = 0; i < 120; ++i) pad += filler;
  size_t files = 0;
  for (const fs::path& p : fixtureFiles("python")) {
    if (p.stem().string().find("_positive") == std::string::npos) continue;
    FileResult whole = checkSource(p.string(), pad + readFile(p) + "\n" + pad, allRulesOptions());
    if (whole.findings.empty()) continue;
    ++files;
    FileResult kept = whole;
    keepOnlyReportedLines(kept);
    EXPECT_LT(kept.source.size(), whole.source.size() / 4) << p;
    EXPECT_EQ(std::count(kept.source.begin(), kept.source.end(), '\n'), std::count(whole.source.begin(), whole.source.end(), '\n')) << p;
    for (auto format : {report::Format::Full, report::Format::Concise, report::Format::Json, report::Format::Sarif,
                        report::Format::Github, report::Format::Gitlab, report::Format::Junit}) {
      report::Options opts;
      opts.version = "test";
      std::ostringstream a, b;
      report::write(a, format, {whole}, opts);
      report::write(b, format, {kept}, opts);
      EXPECT_EQ(a.str(), b.str()) << p << " format " << static_cast<int>(format);
      EXPECT_FALSE(a.str().empty());
    }
  }
  EXPECT_GT(files, 20u);
}
