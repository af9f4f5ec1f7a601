#include <gtest/gtest.h>

#include "config/glob.h"
#include "util/path.h"

using namespace oomlint;

TEST(Glob, StarsClassesAndDirectories) {
  EXPECT_TRUE(globMatch("*.py", "train.py"));
  EXPECT_FALSE(globMatch("*.py", "a/train.py"));
  EXPECT_TRUE(globMatch("**/*.py", "a/b/train.py"));
  EXPECT_TRUE(globMatch("**/*.py", "train.py"));
  EXPECT_FALSE(globMatch("**/foo.py", "a/bfoo.py"));
  EXPECT_TRUE(globMatch("a/**/c.py", "a/c.py"));
  EXPECT_TRUE(globMatch("a/**/c.py", "a/x/y/c.py"));
  EXPECT_TRUE(globMatch("test_?.py", "test_1.py"));
  EXPECT_TRUE(globMatch("[ab]*.py", "b1.py"));
  EXPECT_FALSE(globMatch("[!ab]*.py", "b1.py"));
  // `*` + literal, matched without the general matcher: the same answers.
  EXPECT_TRUE(globMatch("*.py", ".py"));
  EXPECT_FALSE(globMatch("*.py", "py"));
  EXPECT_FALSE(globMatch("*.py", "train.pyi"));
  EXPECT_TRUE(globMatch("*_pb2.py", "a_pb2.py"));
  EXPECT_FALSE(globMatch("*.py", "a/.py"));
  EXPECT_TRUE(globMatch("*/x.py", "a/x.py"));  // a slash in the tail: the general matcher
}

TEST(Glob, PathPatternsAnchorOnlyWithSlash) {
  EXPECT_TRUE(pathPatternMatch("legacy", "src/legacy/x.py"));
  EXPECT_TRUE(pathPatternMatch("*_pb2.py", "src/gen/a_pb2.py"));
  EXPECT_TRUE(pathPatternMatch("src/gen", "src/gen/a.py"));
  EXPECT_FALSE(pathPatternMatch("gen/a.py", "src/gen/a.py"));
  EXPECT_TRUE(pathPatternMatch("scripts/*.py", "scripts/run.py"));
}

TEST(Glob, PreparedPatternsAnswerAsEachPatternDoes) {
  // Every kind PathPatterns sorts patterns into (names, `*` + name, other globs, anchored), with
  // the normalisations pathPatternMatch makes (trailing slash, `./`, leading slash).
  const std::vector<std::string> patterns = {
      "build", "build/", "./legacy", "*.c", "*_pb2.py", "test_?.py", "[ab]*", "*.py*", "**", "src/gen", "/scripts/*.py",
      "a/**/c.py", "\\*.py", "", "docs/", "*"};
  const std::vector<std::string> paths = {
      "build", "src/build/x.py", "legacy/a.py", "x.c", "deep/dir/x.cc", "src/gen/a_pb2.py", "test_1.py", "test_12.py", "b1.py",
      "c1.py", "x.pyi", "src/gen", "src/gen/a.py", "scripts/run.py", "tools/scripts/run.py", "a/c.py", "a/x/y/c.py", "*.py",
      "", "docs", "docs/index.md", "/usr/lib/python3/x.py", "a//b.py"};
  for (const std::string& p : patterns)
    for (const std::string& path : paths)
      EXPECT_EQ(PathPatterns({p}).matchesAny(path), pathPatternMatch(p, path)) << "pattern '" << p << "', path '" << path << "'";
  // A list matches when any of its patterns does.
  PathPatterns list({"*.c", "legacy", "src/gen"});
  EXPECT_TRUE(list.matchesAny("src/gen/a.py"));
  EXPECT_TRUE(list.matchesAny("x/legacy/y.py"));
  EXPECT_TRUE(list.matchesAny("x/y.c"));
  EXPECT_FALSE(list.matchesAny("x/y.py"));
  EXPECT_FALSE(PathPatterns({}).matchesAny("x.py"));
}

TEST(Paths, AbsolutePathsAreNormalisedLexically) {
  EXPECT_EQ(absolutePath("/a/b/c.py"), "/a/b/c.py");
  EXPECT_EQ(absolutePath("/"), "/");
  EXPECT_EQ(absolutePath("/a/./b/../c.py"), "/a/c.py");
  EXPECT_EQ(absolutePath("/a//b/"), "/a/b");
  EXPECT_EQ(absolutePath("/a/b/."), "/a/b");
  EXPECT_EQ(absolutePath("/a/b/.."), "/a");
  EXPECT_EQ(absolutePath("/.."), "/");
  EXPECT_EQ(absolutePath("/a/.hidden/b..c/...py"), "/a/.hidden/b..c/...py");  // names that only start with dots
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof cwd), nullptr);
  EXPECT_EQ(absolutePath("x.py"), std::string(cwd) == "/" ? "/x.py" : std::string(cwd) + "/x.py");
  EXPECT_TRUE(isNormalAbsolute("/a/b"));
  EXPECT_FALSE(isNormalAbsolute("/a/b/"));
  EXPECT_FALSE(isNormalAbsolute("/a/./b"));
  EXPECT_FALSE(isNormalAbsolute("/a/.."));
  EXPECT_FALSE(isNormalAbsolute("a/b"));
}
