#include <gtest/gtest.h>

#include "engine/noqa.h"
#include "engine/selection.h"

using namespace oomlint;

TEST(Noqa, ParsesCodesAndBareForms) {
  NoqaDirective d;
  ASSERT_TRUE(parseNoqaComment("# noqa: OOM101, oom102 E501", d));
  EXPECT_FALSE(d.all);
  EXPECT_EQ((std::vector<std::string>{"OOM101", "OOM102", "E501"}), d.codes);
  NoqaDirective bare;
  ASSERT_TRUE(parseNoqaComment("# NOQA", bare));
  EXPECT_TRUE(bare.all);
  NoqaDirective tail;
  ASSERT_TRUE(parseNoqaComment("# type: ignore  # noqa:OOM501", tail));
  EXPECT_EQ((std::vector<std::string>{"OOM501"}), tail.codes);
  NoqaDirective file;
  ASSERT_TRUE(parseNoqaComment("# oomlint: noqa", file));
  EXPECT_TRUE(file.fileLevel);
  EXPECT_TRUE(file.all);
  NoqaDirective none;
  EXPECT_FALSE(parseNoqaComment("# this is not a noqa123 thing", none));
  EXPECT_FALSE(parseNoqaComment("# plain comment", none));
}

TEST(Selection, MostSpecificSelectorWins) {
  SelectorSet s;
  s.select = {"OOM1"};
  s.selectGiven = true;
  s.ignore = {"OOM10"};
  s.extendSelect = {"OOM101"};
  RuleSelection sel(s);
  EXPECT_TRUE(sel.enabled("OOM101"));
  EXPECT_FALSE(sel.enabled("OOM102"));
  EXPECT_FALSE(sel.enabled("OOM201"));
  RuleSelection def;
  EXPECT_TRUE(def.enabled("OOM201"));
  EXPECT_TRUE(isValidSelector("OOM2"));
  EXPECT_TRUE(isValidSelector("ALL"));
  EXPECT_FALSE(isValidSelector("E501"));
  EXPECT_FALSE(def.without({"OOM2"}).enabled("OOM201"));
}
