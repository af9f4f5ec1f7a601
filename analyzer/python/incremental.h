#pragma once
/// The LSP server's Python document: after each edit only the top-level statements the edit
/// touched are parsed and lowered again; the rest of the model is reused.
///
/// Why not tree-sitter's own incremental re-parse: with tree-sitter 0.20.7 and tree-sitter-python
/// 0.23.6, an edit in the last statement of a block (typing at the end of a loop body, the common
/// case) makes the parser re-lex everything after it, since no node that follows a dedent is
/// reused. That is a full parse per keystroke.
///
/// The text is kept as chunks: runs of whole top-level statements, each starting at column 0 of a
/// line, each with its own lowered model fragment in its own coordinates. An edit marks the chunks
/// it touches dirty; model() parses each dirty run on its own and splices the fragments into one
/// Module. When a run does not stand on its own (a syntax error such as an unclosed bracket or an
/// `else:` that belongs above, a first line indented into the block above, a trailing backslash),
/// the whole text is parsed again: the model always equals python::parse's.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/model.h"

namespace oomlint::python {

class IncrementalDocument {
 public:
  /// Below this many bytes to parse, one thread is faster than starting others.
  static constexpr size_t kParallelBytes = 32 * 1024;
  /// Bytes [begin, end) of the previous text were replaced by `length` bytes.
  void edited(uint32_t begin, uint32_t end, uint32_t length);
  /// The text was replaced as a whole.
  void reset() { chunks_.clear(); }
  /// The next text is `size` bytes whose top-level statements start at the offsets `starts` (a
  /// notebook's cells, which Jupyter runs one at a time, so each normally stands on its own):
  /// model() then parses each run by itself instead of the whole text at once, which lets it use
  /// threads. Kept chunks are dropped. The model is the same either way.
  void seed(const std::vector<uint32_t>& starts, uint32_t size);
  /// The model of `text`, which must be the text after every edit reported so far. With
  /// `threads` > 1, the runs that must be parsed again are parsed on up to that many threads.
  /// `previous`, the model this returned before (given back once nothing else reads it), lends
  /// its arrays' memory to the new one: an edit of a long notebook then writes into pages it
  /// already has instead of faulting in fresh ones (most of an edit's page faults otherwise).
  std::unique_ptr<Module> model(const std::string& path, const std::string& text, unsigned threads = 1,
                                std::unique_ptr<Module> previous = nullptr);
  /// How many top-level chunks the text is kept as (1 while it has a syntax error).
  size_t chunkCount() const { return chunks_.size(); }
  /// Bytes the last model() call parsed (tests and benchmarks: what an edit cost).
  size_t parsedBytes() const { return parsed_; }
  /// Leading chunks the last model() took over from `previous` without splicing them again.
  size_t keptChunks() const { return kept_; }

 private:
  struct Chunk {
    uint32_t begin = 0, length = 0;
    std::shared_ptr<const Module> fragment;  // null: not lowered since it changed
  };
  std::vector<Chunk> chunks_;
  size_t parsed_ = 0;

  /// The sizes of the model's arrays before one chunk was spliced in.
  struct SpliceMark {
    size_t exprs = 0, stmts = 0, args = 0, lists = 0, handlers = 0, params = 0, functions = 0, classes = 0, comments = 0,
           topLevel = 0;
  };
  /// What the last model() spliced: each chunk's fragment and offset with the mark before it, then
  /// the mark after the last. The next model() keeps the previous model's arrays up to the first
  /// chunk that differs (an edit in the middle of a notebook splices only the cells after it).
  struct Spliced {
    const Module* fragment = nullptr;
    uint32_t begin = 0;
    SpliceMark before;
  };
  std::vector<Spliced> spliced_;
  SpliceMark splicedEnd_;
  size_t kept_ = 0;
  /// How many leading chunks `previous` (a model this returned) holds exactly as they are now.
  size_t reusablePrefix(const Module& previous) const;
  static SpliceMark marksOf(const Module& m, const std::vector<NodeId>& topLevel);

  /// Parses chunks_[i] on its own and replaces it by the chunks it splits into. False when it
  /// does not parse cleanly on its own; then, if it is the whole text, `*whole` is its model.
  bool relower(size_t i, const std::string& text, std::unique_ptr<Module>* whole, const std::string& path);
  /// relower() for every dirty chunk at once, on up to `threads` threads; a chunk that does not
  /// stand on its own is left dirty for model()'s own loop (which then parses the whole text).
  void relowerInParallel(const std::string& text, unsigned threads);
};

}  // namespace oomlint::python
