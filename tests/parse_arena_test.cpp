// The per-file arena behind tree-sitter's allocations (python/parse_arena.h): what it hands out,
// realloc and calloc semantics through tree-sitter's own allocator hooks, fallbacks to malloc, and
// parses on several threads at once giving the same models as one thread.
#include <gtest/gtest.h>

#include <tree_sitter/api.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "python/frontend.h"
#include "python/parse_arena.h"

// tree-sitter's allocator hooks: the arena installs itself there (ts_set_allocator).
extern "C" {
extern void* (*ts_current_malloc)(size_t);
extern void* (*ts_current_calloc)(size_t, size_t);
extern void* (*ts_current_realloc)(void*, size_t);
extern void (*ts_current_free)(void*);
const TSLanguage* tree_sitter_python(void);
}

using oomlint::python::ParseArena;

namespace {

std::string trainingScript(int copies) {
  std::string s = "import torch\n";
  for (int i = 0; i < copies; ++i)
    s += "def step_" + std::to_string(i) + "(model, batch, opt):\n"
         "    total = 0\n"
         "    for x, y in batch:\n"
         "        loss = model(x).sub(y).pow(2).mean()  # noqa: OOM999\n"
         "        loss.backward()\n"
         "        total += loss\n"
         "    return f\"{total}\"\n";
  return s;
}

}  // namespace

TEST(ParseArena, ServesTreeSitterInsideAScopeOnly) {
  ParseArena::installHooks();
  EXPECT_EQ(0u, ParseArena::bytesInUse());
  std::string src = trainingScript(50);
  for (int round = 0; round < 2; ++round) {
    ParseArena arena;
    EXPECT_EQ(0u, ParseArena::bytesInUse()) << "each scope starts empty";
    TSParser* parser = ts_parser_new();
    ts_parser_set_language(parser, tree_sitter_python());
    TSTree* tree = ts_parser_parse_string(parser, nullptr, src.data(), static_cast<uint32_t>(src.size()));
    EXPECT_FALSE(ts_node_has_error(ts_tree_root_node(tree)));
    EXPECT_GT(ParseArena::bytesInUse(), src.size()) << "the tree lives in the arena";
    ts_tree_delete(tree);  // allowed (frees are no-ops), though parse() skips it
    ts_parser_delete(parser);
  }
  EXPECT_EQ(0u, ParseArena::bytesInUse());
  // Outside a scope tree-sitter's memory is malloc's: a tree may outlive any arena.
  TSParser* parser = ts_parser_new();
  ts_parser_set_language(parser, tree_sitter_python());
  TSTree* tree = ts_parser_parse_string(parser, nullptr, src.data(), static_cast<uint32_t>(src.size()));
  { ParseArena unrelated; }
  EXPECT_EQ(std::string("module"), ts_node_type(ts_tree_root_node(tree)));
  ts_tree_delete(tree);
  ts_parser_delete(parser);
}

TEST(ParseArena, ReallocCallocAndLargeRequestsBehaveLikeMalloc) {
  ParseArena::installHooks();
  {
    // Dirty the memory the next scope will reuse.
    ParseArena arena;
    for (int i = 0; i < 64; ++i) std::memset(ts_current_malloc(1000), 0xAB, 1000);
  }
  ParseArena arena;
  auto* zeroed = static_cast<unsigned char*>(ts_current_calloc(250, 4));
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(0, zeroed[i]) << "calloc from reused arena memory must be zeroed";

  // The last allocation grows in place; an earlier one moves. Both keep their bytes.
  auto* a = static_cast<char*>(ts_current_malloc(24));
  std::memcpy(a, "abcdefghijklmnopqrstuvw", 24);
  auto* grown = static_cast<char*>(ts_current_realloc(a, 4000));
  EXPECT_EQ(a, grown);
  EXPECT_STREQ("abcdefghijklmnopqrstuvw", grown);
  auto* b = static_cast<char*>(ts_current_malloc(16));
  std::memcpy(b, "0123456789abcde", 16);
  ts_current_malloc(8);  // b is no longer the last allocation
  auto* moved = static_cast<char*>(ts_current_realloc(b, 10000));
  EXPECT_NE(b, moved);
  EXPECT_STREQ("0123456789abcde", moved);
  EXPECT_EQ(b, ts_current_realloc(b, 8)) << "shrinking stays in place";
  ts_current_free(moved);
  ts_current_free(b);

  // Requests past the arena's limit go to malloc and are freed for real.
  size_t before = ParseArena::bytesInUse();
  void* big = ts_current_malloc(size_t{4} << 20);
  ASSERT_NE(nullptr, big);
  std::memset(big, 1, size_t{4} << 20);
  EXPECT_EQ(before, ParseArena::bytesInUse());
  big = ts_current_realloc(big, size_t{8} << 20);
  ts_current_free(big);
  // So does everything past the blocks, until the scope ends: thousands of allocations keep working.
  std::vector<int*> many;
  for (int i = 0; i < 30000; ++i) {
    many.push_back(static_cast<int*>(ts_current_malloc(200 * sizeof(int))));
    many.back()[199] = i;
  }
  for (int i = 0; i < 30000; ++i) ASSERT_EQ(i, many[i][199]);
  EXPECT_GT(ParseArena::bytesInUse(), size_t{16} << 20) << "the arena grew past its first blocks";
}

TEST(ParseArena, ParsesOnSeveralThreadsGiveTheSameModels) {
  std::vector<std::string> sources;
  for (int i = 1; i <= 8; ++i) sources.push_back(trainingScript(i * 40) + (i % 2 ? "x = (\n" : ""));
  std::vector<std::string> expected;
  for (const std::string& s : sources) {
    auto m = oomlint::python::parse("t.py", s);
    expected.push_back(std::to_string(m->stmts.size()) + "/" + std::to_string(m->exprs.size()) + "/" +
                       std::to_string(m->comments.size()) + "/" + std::to_string(m->syntaxIssues.size()));
  }
  std::vector<std::string> got(sources.size() * 4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (size_t i = 0; i < sources.size(); ++i) {
        auto m = oomlint::python::parse("t.py", sources[i]);
        got[t * sources.size() + i] = std::to_string(m->stmts.size()) + "/" + std::to_string(m->exprs.size()) + "/" +
                                      std::to_string(m->comments.size()) + "/" + std::to_string(m->syntaxIssues.size());
      }
    });
  for (auto& th : threads) th.join();
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(expected[i % sources.size()], got[i]) << i;
  EXPECT_EQ("/1", expected[0].substr(expected[0].size() - 2)) << "the odd sources end in a syntax error";
  EXPECT_TRUE(oomlint::python::parsesCleanly(sources[1]));
  EXPECT_FALSE(oomlint::python::parsesCleanly(sources[0]));
}

TEST(ParseArena, WhatDoesNotFitComesFromMallocAndIsFreedWithTheScope) {
  // parse() never deletes its tree, so tree-sitter's malloc'd allocations (past the blocks, or too
  // large for one) must go when the scope ends; LeakSanitizer checks that in the ASan build.
  std::string src = trainingScript(400);
  auto whole = oomlint::python::parse("t.py", src);
  ParseArena::limitBlocksForTesting(1);
  size_t liveInside = 0;
  {
    ParseArena arena;
    TSParser* parser = ts_parser_new();
    ts_parser_set_language(parser, tree_sitter_python());
    TSTree* tree = ts_parser_parse_string(parser, nullptr, src.data(), static_cast<uint32_t>(src.size()));
    EXPECT_FALSE(ts_node_has_error(ts_tree_root_node(tree)));
    liveInside = ParseArena::mallocBlocksLive();
    void* big = ts_current_malloc(size_t{1} << 20);  // too large for any block
    EXPECT_EQ(liveInside + 1, ParseArena::mallocBlocksLive());
    ts_current_free(big);
    EXPECT_EQ(liveInside, ParseArena::mallocBlocksLive());
    ts_parser_delete(parser);
  }
  EXPECT_GT(liveInside, 1000u) << "one 1 MiB block cannot hold this tree";
  EXPECT_EQ(0u, ParseArena::mallocBlocksLive());
  auto limited = oomlint::python::parse("t.py", src);
  ParseArena::limitBlocksForTesting(0);
  EXPECT_EQ(whole->stmts.size(), limited->stmts.size());
  EXPECT_EQ(whole->exprs.size(), limited->exprs.size());
  EXPECT_EQ(whole->comments.size(), limited->comments.size());
}
