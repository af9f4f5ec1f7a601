#pragma once
/// A per-thread arena for tree-sitter's allocations while one file is parsed and lowered.
///
/// tree-sitter allocates every subtree, stack node and array with malloc and frees each one again
/// when the tree is deleted: on the torch corpus a tenth of oomlint's CPU time went to malloc and
/// free, and another twentieth to walking the finished tree only to free it. While a ParseArena
/// is alive on a thread, tree-sitter's allocations on that thread are carved from large blocks,
/// its frees are no-ops, and the whole file's memory goes back at once when the arena ends.
///
/// Rules for the scope: create the TSParser inside it and delete it (or drop it) before it ends;
/// nothing tree-sitter allocated inside may be used after it ends (the tree, nodes, cursors).
/// Allocations made outside any arena keep going to malloc, so the LSP server's long-lived trees
/// and any other tree-sitter use are unaffected. Inside a scope, what does not fit the arena
/// (very large requests, or a file past 2.2 GiB of blocks) comes from malloc and is freed at the
/// scope's end at the latest.

#include <cstddef>

namespace oomlint::python {

class ParseArena {
 public:
  ParseArena();
  ~ParseArena();
  ParseArena(const ParseArena&) = delete;
  ParseArena& operator=(const ParseArena&) = delete;

  /// Routes tree-sitter's allocations through the arena's hooks, which pass everything outside an
  /// arena to malloc. Call before threads use tree-sitter (the first ParseArena calls it too, but
  /// swapping the allocator while another thread is inside tree-sitter is a data race).
  static void installHooks();

  /// Bytes handed out by the arena active on this thread so far (0 when none is active).
  static size_t bytesInUse();

  /// Allocations tree-sitter got from malloc inside this thread's scope and has not freed yet
  /// (requests too large for a block, or every block used): freed when the scope ends.
  static size_t mallocBlocksLive();

  /// For tests: at most `blocks` blocks per thread (0 restores the default), to reach the
  /// malloc fallback without gigabytes of input.
  static void limitBlocksForTesting(int blocks);
};

}  // namespace oomlint::python
