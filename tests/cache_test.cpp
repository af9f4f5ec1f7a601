// The results cache's own file (cache/index_format.h): what a check stores comes back the same
// from a new process's read, whatever bytes a path holds, and a damaged index is discarded.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cache/cache.h"
#include "test_util.h"

using namespace oomlint;
namespace fs = std::filesystem;

namespace {

struct CacheDir : ::testing::Test {
  fs::path dir = fs::temp_directory_path() / ("oomlint_cache_test_" + std::to_string(::getpid()));
  void SetUp() override {
    fs::remove_all(dir);
    fs::create_directories(dir / "src");
  }
  void TearDown() override { fs::remove_all(dir); }

  fs::path indexFile() const {
    for (const auto& e : fs::directory_iterator(dir / "cache"))
      if (e.path().extension() == ".index") return e.path();
    return {};
  }
};

std::string describe(const std::vector<Finding>& fs) {
  std::string out;
  for (const Finding& f : fs) {
    out += std::string(f.code) + " " + f.message + " @" + std::to_string(f.span.begin) + "-" + std::to_string(f.span.end) + ":" +
           std::to_string(f.span.line) + ":" + std::to_string(f.span.col);
    for (const Edit& e : f.fix.edits) out += " edit[" + std::to_string(e.begin) + "," + std::to_string(e.end) + ")=" + e.content;
    for (const Related& r : f.related) out += " related " + std::to_string(r.span.line) + " " + r.message;
    if (f.estimated.present) out += " estimated " + std::to_string(f.estimated.bytes);
    out += "\n";
  }
  return out;
}

}  // namespace

TEST_F(CacheDir, EntriesComeBackFromTheIndexWhateverThePathHolds) {
  // A name with a space, a colon, digits after it and a line break: the index is not split on any of them.
  fs::path odd = dir / "src" / "a b:12 \nc.py";
  fs::path helper = dir / "src" / "helper.py";
  std::ofstream(odd) << testutil::kLeaky;
  std::ofstream(helper) << "def f():\n    return 1\n";
  FileResult checked = checkSource(odd.string(), testutil::kLeaky, testutil::everyRule());
  ASSERT_FALSE(checked.findings.empty());
  bool anyFix = false, anyNote = false;
  for (const Finding& f : checked.findings) {
    anyFix |= f.hasFix;
    anyNote |= !f.related.empty();
  }
  EXPECT_TRUE(anyFix && anyNote) << describe(checked.findings);  // both kinds of detail cross the file
  // Written long enough ago that the metadata alone decides (not within the second of caching).
  auto past = fs::file_time_type::clock::now() - std::chrono::hours(1);
  fs::last_write_time(odd, past);
  fs::last_write_time(helper, past);
  {
    std::string warning;
    ResultCache cache((dir / "cache").string(), warning);
    EXPECT_EQ(warning, "");
    cache.store(odd.string(), "sel one", testutil::kLeaky, checked.findings, {helper.string()});
    cache.store(helper.string(), "sel\ntwo", "def f():\n    return 1\n", {});
    cache.setProjectState("root with spaces\n1 2", "settled 3:x");
    ASSERT_EQ(cache.save(), "");
  }
  std::string warning;
  ResultCache again((dir / "cache").string(), warning);
  EXPECT_EQ(warning, "");
  std::vector<Finding> back;
  ASSERT_TRUE(again.lookup(odd.string(), "sel one", back));
  EXPECT_EQ(describe(back), describe(checked.findings));
  EXPECT_FALSE(again.lookup(odd.string(), "another selection", back));
  ASSERT_TRUE(again.lookup(helper.string(), "sel\ntwo", back));
  EXPECT_TRUE(back.empty());
  EXPECT_EQ(again.projectState("root with spaces\n1 2"), "settled 3:x");
  EXPECT_EQ(again.projectState("root with spaces"), "");
  // A dependency that changes makes the entry stale.
  std::ofstream(helper, std::ios::app) << "# changed\n";
  EXPECT_FALSE(again.lookup(odd.string(), "sel one", back));
}

TEST_F(CacheDir, ADamagedIndexIsDiscardedWithAWarning) {
  fs::path file = dir / "src" / "m.py";
  std::ofstream(file) << testutil::kLeaky;
  fs::last_write_time(file, fs::file_time_type::clock::now() - std::chrono::hours(1));
  FileResult checked = checkSource(file.string(), testutil::kLeaky, testutil::everyRule());
  {
    std::string warning;
    ResultCache cache((dir / "cache").string(), warning);
    cache.store(file.string(), "sel", testutil::kLeaky, checked.findings);
    cache.setProjectState("root", "settled");
    ASSERT_EQ(cache.save(), "");
  }
  fs::path index = indexFile();
  ASSERT_FALSE(index.empty());
  std::string whole = testutil::slurp(index);
  // Cut anywhere, a byte changed in a number, or something added at the end: never read as an index.
  std::vector<std::string> damaged;
  for (size_t cut : {size_t{0}, size_t{5}, whole.size() / 3, whole.size() / 2, whole.size() - 2, whole.size() - 1})
    damaged.push_back(whole.substr(0, cut));
  std::string badNumber = whole;
  badNumber[badNumber.find("files ") + 6] = 'x';
  damaged.push_back(badNumber);
  damaged.push_back(whole + "extra");
  for (const std::string& text : damaged) {
    std::ofstream(index, std::ios::binary | std::ios::trunc) << text;
    std::string warning;
    ResultCache cache((dir / "cache").string(), warning);
    std::vector<Finding> back;
    EXPECT_NE(warning.find("corrupt"), std::string::npos) << "index of " << text.size() << " bytes";
    EXPECT_FALSE(cache.lookup(file.string(), "sel", back));
    EXPECT_EQ(cache.projectState("root"), "");
  }
  // The damaged index is replaced by the next save, and read again after it.
  std::string warning;
  {
    ResultCache cache((dir / "cache").string(), warning);
    cache.store(file.string(), "sel", testutil::kLeaky, checked.findings);
    ASSERT_EQ(cache.save(), "");
  }
  ResultCache fresh((dir / "cache").string(), warning = "");
  std::vector<Finding> back;
  EXPECT_EQ(warning, "");
  EXPECT_TRUE(fresh.lookup(file.string(), "sel", back));
  EXPECT_EQ(describe(back), describe(checked.findings));
}
