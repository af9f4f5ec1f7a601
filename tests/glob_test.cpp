#include <gtest/gtest.h>

#include "config/glob.h"

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
