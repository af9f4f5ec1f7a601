// The floor for a tree-sitter design: read each file, parse it with tree-sitter-python and walk
// every node once with a cursor. Same threading as oomlint (one file per task, N workers).
// Usage: bare_parse [--threads N] [--arena] FILE...   (or a single @list-file with one path per line)
// --arena: tree-sitter allocates from oomlint's per-file arena (python/parse_arena.h), as oomlint
// does, and the tree is dropped with the arena instead of freed node by node.
#include <tree_sitter/api.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "python/parse_arena.h"

extern "C" const TSLanguage* tree_sitter_python(void);

int main(int argc, char** argv) {
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::string> files;
  bool arena = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--arena") {
      arena = true;
    } else if (a == "--threads" && i + 1 < argc) {
      threads = static_cast<unsigned>(std::stoul(argv[++i]));
    } else if (!a.empty() && a[0] == '@') {
      std::ifstream in(a.substr(1));
      for (std::string line; std::getline(in, line);)
        if (!line.empty()) files.push_back(line);
    } else {
      files.push_back(a);
    }
  }
  std::atomic<size_t> next{0};
  std::atomic<uint64_t> nodes{0};
  if (arena) oomlint::python::ParseArena::installHooks();
  auto worker = [&] {
    TSParser* parser = arena ? nullptr : ts_parser_new();
    if (parser) ts_parser_set_language(parser, tree_sitter_python());
    uint64_t local = 0;
    for (size_t i = next++; i < files.size(); i = next++) {
      std::ifstream in(files[i], std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      std::string src = ss.str();
      std::optional<oomlint::python::ParseArena> scope;
      TSParser* p = parser;
      if (arena) {
        scope.emplace();
        p = ts_parser_new();
        ts_parser_set_language(p, tree_sitter_python());
      }
      TSTree* tree = ts_parser_parse_string(p, nullptr, src.data(), static_cast<uint32_t>(src.size()));
      TSTreeCursor c = ts_tree_cursor_new(ts_tree_root_node(tree));
      // Pre-order walk of every node.
      for (;;) {
        ++local;
        if (ts_tree_cursor_goto_first_child(&c)) continue;
        while (!ts_tree_cursor_goto_next_sibling(&c))
          if (!ts_tree_cursor_goto_parent(&c)) goto done;
      }
    done:
      ts_tree_cursor_delete(&c);
      if (arena) {
        ts_parser_delete(p);
      } else {
        ts_tree_delete(tree);
      }
    }
    nodes += local;
    if (parser) ts_parser_delete(parser);
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  std::cout << files.size() << " files, " << nodes.load() << " nodes\n";
  return 0;
}
