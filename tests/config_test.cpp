// ConfigResolver's answers per file, asked for many files of one run (each folder on the way up is
// read once): the same as asking each file's folder alone.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "config/config.h"

using namespace oomlint;
namespace fs = std::filesystem;

TEST(ConfigResolver, DeclaredTorchFloorsAreTheFoldersOwnWhateverWasAskedBefore) {
  fs::path root = fs::temp_directory_path() / ("oomlint_config_test_" + std::to_string(::getpid()));
  fs::remove_all(root);
  auto write = [&](const std::string& rel, const std::string& text) {
    fs::create_directories((root / rel).parent_path());
    std::ofstream(root / rel) << text;
  };
  fs::create_directories(root / ".git");  // the search stops at the repository's top
  write("requirements.txt", "torch>=2.1\n");
  write("a/b/c/deep.py", "");
  write("a/shallow.py", "");
  write("lib/pyproject.toml", "[project]\nname = \"lib\"\ndependencies = [\"numpy\"]\n");  // says what it needs: no torch
  write("lib/sub/x.py", "");
  write("tools/pyproject.toml", "[tool.other]\nkey = 1\n");  // no [project] table: the search goes on
  write("tools/requirements.txt", "torch==1.13.1\n");
  write("tools/sub/y.py", "");
  write("plain/z.py", "");
  // Asked deepest first, then the folders above, then siblings: each must match a fresh lookup.
  const std::vector<std::string> files = {"a/b/c/deep.py", "a/shallow.py", "lib/sub/x.py", "tools/sub/y.py", "plain/z.py"};
  CliOverrides isolated;
  isolated.isolated = true;
  ConfigResolver resolver(isolated);
  auto same = [](TorchVersion a, TorchVersion b) { return a.major == b.major && a.minor == b.minor; };
  for (const std::string& rel : files) {
    std::string abs = (root / rel).string();
    RuleSelection sel = resolver.selectionFor(*resolver.forDirectory((root / rel).parent_path().string()), abs);
    EXPECT_TRUE(same(sel.targetTorch(), declaredTorchFloor((root / rel).parent_path().string()))) << rel;
  }
  auto floorOf = [&](const std::string& rel) {
    return resolver.selectionFor(*resolver.forDirectory((root / rel).parent_path().string()), (root / rel).string()).targetTorch();
  };
  EXPECT_TRUE(same(floorOf("a/b/c/deep.py"), TorchVersion{2, 1}));
  EXPECT_TRUE(same(floorOf("plain/z.py"), TorchVersion{2, 1}));
  EXPECT_FALSE(floorOf("lib/sub/x.py").known());
  EXPECT_TRUE(same(floorOf("tools/sub/y.py"), TorchVersion{1, 13}));
  fs::remove_all(root);
}
