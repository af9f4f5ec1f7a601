#include "python/incremental.h"

#include <tree_sitter/api.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstring>
#include <thread>

#include "python/frontend.h"
#include "python/lowering.h"
#include "python/parse_arena.h"
#include "python/splice.h"

namespace oomlint::python {
namespace {

struct TreeHandle {
  TSTree* tree;
  bool inArena = false;  // dropped with its ParseArena: no walk over the tree to free it
  explicit TreeHandle(TSTree* t, bool arena = false) : tree(t), inArena(arena) {}
  ~TreeHandle() {
    if (!inArena) ts_tree_delete(tree);
  }
  TreeHandle(const TreeHandle&) = delete;
  TreeHandle& operator=(const TreeHandle&) = delete;
};

/// True when the statement at `at` begins with a clause keyword that continues a block above
/// (`else:`, `elif`, `except`, `finally:`). tree-sitter-python reads `else:\n    y = 1` alone as
/// an annotated assignment (`else: y = 1`) without any error, so a run that starts so would
/// parse "cleanly" on its own and lose its `if`.
bool continuesABlock(std::string_view text, uint32_t at) {
  for (std::string_view keyword : {"else", "elif", "except", "finally"}) {
    if (text.substr(at, keyword.size()) != keyword) continue;
    char next = at + keyword.size() < text.size() ? text[at + keyword.size()] : ' ';
    if (!(std::isalnum(static_cast<unsigned char>(next)) || next == '_')) return true;
  }
  return false;
}

/// Byte offsets (in the parsed text) where chunks start: the text's start, then every top-level
/// statement that begins a line at column 0. Empty when the text cannot stand on its own: a syntax
/// error, a first statement that is indented (it belongs to the block above) or that continues a
/// block above (`else:`), or a trailing backslash (the next line continues it).
std::vector<uint32_t> chunkStarts(TSTree* tree, std::string_view text) {
  TSNode root = ts_tree_root_node(tree);
  if (ts_node_has_error(root)) return {};
  size_t last = text.find_last_not_of(" \t\r\n\f");
  if (last != std::string_view::npos && text[last] == '\\') return {};
  std::vector<uint32_t> starts{0};
  TSTreeCursor cursor = ts_tree_cursor_new(root);  // one pass: ts_node_named_child(i) rescans from the first
  bool first = true, ok = true;
  for (bool more = ts_tree_cursor_goto_first_child(&cursor); more && ok; more = ts_tree_cursor_goto_next_sibling(&cursor)) {
    TSNode c = ts_tree_cursor_current_node(&cursor);
    if (!ts_node_is_named(c) || std::strcmp(ts_node_type(c), "comment") == 0) continue;
    uint32_t at = ts_node_start_byte(c);
    bool lineStart = ts_node_start_point(c).column == 0 && (at == 0 || text[at - 1] == '\n');
    if (first && (!lineStart || continuesABlock(text, at))) ok = false;
    else if (!first && lineStart) starts.push_back(at);
    first = false;
  }
  ts_tree_cursor_delete(&cursor);
  if (!ok) starts.clear();
  return starts;
}

}  // namespace

void IncrementalDocument::edited(uint32_t begin, uint32_t end, uint32_t length) {
  if (chunks_.empty()) return;  // nothing kept: the next model() parses everything
  auto containing = [&](uint32_t offset) {
    auto it = std::upper_bound(chunks_.begin(), chunks_.end(), offset,
                               [](uint32_t o, const Chunk& c) { return o < c.begin; });
    return static_cast<size_t>(std::max<std::ptrdiff_t>(0, it - chunks_.begin() - 1));
  };
  // No need to take the chunk before: if the edit makes this one's first line continue the block
  // above (indented, `else:`), it no longer parses on its own and model() parses the whole text.
  size_t a = containing(begin);
  // The text at `end` joins the edit (deleting a line break merges two lines).
  size_t b = std::max(a, containing(end));
  uint32_t from = chunks_[a].begin;
  uint32_t to = chunks_[b].begin + chunks_[b].length;
  int64_t delta = int64_t{length} - (int64_t{end} - int64_t{begin});
  Chunk merged{from, static_cast<uint32_t>(int64_t{to} - from + delta), nullptr};
  chunks_.erase(chunks_.begin() + static_cast<std::ptrdiff_t>(a) + 1, chunks_.begin() + static_cast<std::ptrdiff_t>(b) + 1);
  chunks_[a] = std::move(merged);
  for (size_t i = a + 1; i < chunks_.size(); ++i) chunks_[i].begin = static_cast<uint32_t>(chunks_[i].begin + delta);
}

namespace {

/// Parses the run [begin, begin + length) of `text` with `parser` and lowers each top-level
/// piece of it as a chunk. False when the run does not stand on its own; then, if it is the
/// whole text, `*whole` is its model. `inArena`: the parser works inside a ParseArena, which
/// drops the tree.
template <typename Chunk>
bool lowerRun(TSParser* parser, bool inArena, uint32_t begin, uint32_t length, const std::string& text,
              const std::string& path, std::vector<Chunk>& pieces, std::unique_ptr<Module>* whole) {
  std::string_view run = std::string_view(text).substr(begin, length);
  std::string repaired;  // the same text with tree-sitter's misparses repaired, kept while the tree lives
  TreeHandle tree(parseWithRepairs(parser, run, repaired), inArena);
  std::vector<uint32_t> starts = chunkStarts(tree.tree, run);
  if (starts.empty()) {
    if (whole && begin == 0 && length == text.size()) *whole = lowerTree(path, text, tree.tree);
    return false;
  }
  TSPoint origin{0, 0};  // row of each piece's first line, counted as the pieces go
  for (size_t k = 0; k < starts.size(); ++k) {
    uint32_t from = starts[k], to = k + 1 < starts.size() ? starts[k + 1] : length;
    if (k > 0) origin.row += static_cast<uint32_t>(std::count(run.begin() + starts[k - 1], run.begin() + from, '\n'));
    auto fragment = lowerChunk(std::string(run.substr(from, to - from)), tree.tree, origin, from);
    pieces.push_back(Chunk{begin + from, to - from, std::move(fragment)});
  }
  return true;
}

}  // namespace

void IncrementalDocument::seed(const std::vector<uint32_t>& starts, uint32_t size) {
  chunks_.clear();
  for (size_t k = 0; k < starts.size(); ++k) {
    uint32_t from = starts[k], to = k + 1 < starts.size() ? starts[k + 1] : size;
    if (from >= to || to > size || (k == 0 && from != 0)) {  // not runs that cover the text: parse it whole
      chunks_.clear();
      return;
    }
    chunks_.push_back(Chunk{from, to - from, nullptr});
  }
  if (!chunks_.empty() && chunks_.back().begin + chunks_.back().length != size) chunks_.clear();
}

bool IncrementalDocument::relower(size_t i, const std::string& text, std::unique_ptr<Module>* whole,
                                  const std::string& path) {
  const uint32_t begin = chunks_[i].begin, length = chunks_[i].length;
  parsed_ += length;
  std::vector<Chunk> pieces;
  if (!lowerRun(threadParser(), false, begin, length, text, path, pieces, whole)) return false;
  chunks_.erase(chunks_.begin() + static_cast<std::ptrdiff_t>(i));
  chunks_.insert(chunks_.begin() + static_cast<std::ptrdiff_t>(i), pieces.begin(), pieces.end());
  return true;
}

void IncrementalDocument::relowerInParallel(const std::string& text, unsigned threads) {
  std::vector<size_t> dirty;
  for (size_t i = 0; i < chunks_.size(); ++i)
    if (!chunks_[i].fragment) dirty.push_back(i);
  threads = std::min<unsigned>(threads, static_cast<unsigned>(dirty.size()));
  size_t bytes = 0;
  for (size_t i : dirty) bytes += chunks_[i].length;
  if (threads < 2 || bytes < kParallelBytes) return;
  std::vector<std::vector<Chunk>> pieces(dirty.size());
  std::vector<char> lowered(dirty.size(), 0);
  std::atomic<size_t> next{0};
  ParseArena::installHooks();  // before any thread is inside tree-sitter
  auto work = [&] {
    for (size_t k; (k = next.fetch_add(1)) < dirty.size();) {
      // One arena per run: its tree dies inside it (the lowered fragments are not tree-sitter's),
      // and the next run's parser and tree reuse the same, already touched, memory. An arena for
      // all of a thread's runs kept every tree until the last, and first touches of fresh pages
      // were a third of a notebook's check.
      ParseArena arena;
      ArenaParser parser;
      const Chunk& c = chunks_[dirty[k]];
      lowered[k] = lowerRun(parser.parser, true, c.begin, c.length, text, std::string(), pieces[k], nullptr);
    }
  };
  std::vector<std::thread> helpers;
  for (unsigned t = 1; t < threads; ++t) helpers.emplace_back(work);
  work();
  for (std::thread& h : helpers) h.join();
  for (size_t k = dirty.size(); k-- > 0;) {  // from the back, so the indices before stay valid
    if (!lowered[k]) continue;
    parsed_ += chunks_[dirty[k]].length;
    auto at = chunks_.begin() + static_cast<std::ptrdiff_t>(dirty[k]);
    at = chunks_.erase(at);
    chunks_.insert(at, pieces[k].begin(), pieces[k].end());
  }
}

IncrementalDocument::SpliceMark IncrementalDocument::marksOf(const Module& m, const std::vector<NodeId>& topLevel) {
  return SpliceMark{m.exprs.size(),     m.stmts.size(),   m.args.size(),    m.lists.size(),    m.handlers.size(),
                    m.params.size(),    m.functions.size(), m.classes.size(), m.comments.size(), topLevel.size()};
}

size_t IncrementalDocument::reusablePrefix(const Module& previous) const {
  // `previous` holds the fragments it was spliced from (parts, in order): if it holds the ones
  // the last splice recorded, its arrays up to a chunk's mark are exactly that prefix's splice.
  size_t k = 0;
  while (k < chunks_.size() && k < spliced_.size() && k < previous.parts.size() && chunks_[k].fragment.get() == spliced_[k].fragment &&
         chunks_[k].begin == spliced_[k].begin && previous.parts[k].get() == spliced_[k].fragment)
    ++k;
  if (k == 0) return 0;
  // The recorded marks must fit the arrays (a model from an older call of another length is not reused).
  const SpliceMark& at = k < spliced_.size() ? spliced_[k].before : splicedEnd_;
  const List body = previous.functions.empty() ? List{} : previous.functions[0].body;
  if (previous.exprs.size() < at.exprs || previous.stmts.size() < at.stmts || previous.args.size() < at.args ||
      previous.lists.size() < at.lists || previous.handlers.size() < at.handlers || previous.params.size() < at.params ||
      previous.functions.size() < at.functions || previous.classes.size() < at.classes || previous.comments.size() < at.comments ||
      body.count < at.topLevel || uint64_t{body.first} + body.count > previous.lists.size())
    return 0;
  return k;
}

std::unique_ptr<Module> IncrementalDocument::model(const std::string& path, const std::string& text, unsigned threads,
                                                   std::unique_ptr<Module> previous) {
  const auto size = static_cast<uint32_t>(text.size());
  parsed_ = 0;
  kept_ = 0;
  // Edits that were not all reported leave chunks that do not cover the text: start over.
  if (!chunks_.empty() && uint64_t{chunks_.back().begin} + chunks_.back().length != size) chunks_.clear();
  if (chunks_.empty()) chunks_.push_back(Chunk{0, size, nullptr});
  if (threads > 1) relowerInParallel(text, threads);
  for (size_t i = 0; i < chunks_.size(); ++i) {
    if (chunks_[i].fragment) continue;
    size_t before = chunks_.size();
    std::unique_ptr<Module> whole;
    if (relower(i, text, &whole, path)) {
      i += chunks_.size() - before;  // skip the pieces just made
      continue;
    }
    // Not on its own: the whole text, chunked if it can be, else lowered as one (a syntax error).
    chunks_.assign(1, Chunk{0, size, nullptr});
    if (!whole && relower(0, text, &whole, path)) break;
    return whole;
  }

  auto m = std::make_unique<Module>();
  std::vector<NodeId> topLevel;
  const size_t kept = previous ? reusablePrefix(*previous) : 0;
  kept_ = kept;
  SpliceMark mark = kept < spliced_.size() ? spliced_[kept].before : splicedEnd_;
  if (previous) {  // its largest arrays: their memory, and the content of the chunks that did not change
    if (kept > 0) {
      List body = previous->functions[0].body;
      topLevel.assign(previous->lists.begin() + body.first, previous->lists.begin() + body.first + static_cast<std::ptrdiff_t>(mark.topLevel));
      m->handlers.swap(previous->handlers);
      m->params.swap(previous->params);
      m->functions.swap(previous->functions);
      m->classes.swap(previous->classes);
      m->comments.swap(previous->comments);
    } else {
      mark = SpliceMark{};
    }
    m->exprs.swap(previous->exprs);
    m->stmts.swap(previous->stmts);
    m->args.swap(previous->args);
    m->lists.swap(previous->lists);
    m->exprs.resize(mark.exprs);
    m->stmts.resize(mark.stmts);
    m->args.resize(mark.args);
    m->lists.resize(mark.lists);
    m->handlers.resize(mark.handlers);
    m->params.resize(mark.params);
    m->functions.resize(mark.functions);
    m->classes.resize(mark.classes);
    m->comments.resize(mark.comments);
    for (Expr& x : m->exprs) x.canonical = 0;  // the new names table is filled by resolveNames() below
    previous.reset();
  }
  m->lang = Lang::Python;
  m->path = path;
  m->source = text;
  m->lineStarts = lineStartsOf(m->source);
  size_t exprs = 0, stmts = 0, args = 0, lists = 0;
  for (const Chunk& c : chunks_) {
    exprs += c.fragment->exprs.size();
    stmts += c.fragment->stmts.size();
    args += c.fragment->args.size();
    lists += c.fragment->lists.size();
  }
  m->exprs.reserve(exprs);
  m->stmts.reserve(stmts);
  m->args.reserve(args);
  m->lists.reserve(lists);
  Function top;
  top.name = "<module>";
  if (m->functions.empty()) m->functions.push_back(top);
  else m->functions[0] = top;
  for (size_t i = 0; i < kept; ++i) {  // the kept chunks' arrays are in place; the rest is module-wide
    addModuleWide(*m, *chunks_[i].fragment);
    m->parts.push_back(chunks_[i].fragment);
  }
  spliced_.resize(kept);
  for (size_t i = kept; i < chunks_.size(); ++i) {
    const Chunk& c = chunks_[i];
    spliced_.push_back(Spliced{c.fragment.get(), c.begin, marksOf(*m, topLevel)});
    uint32_t line = m->lineOf(c.begin) - 1;
    splice(*m, *c.fragment, c.begin, line, topLevel);
    m->parts.push_back(c.fragment);
  }
  splicedEnd_ = marksOf(*m, topLevel);
  // The module spans what the first chunk's tree started with to where the last one's ended.
  const Span& first = chunks_.front().fragment->functions[0].span;
  const Span& last = chunks_.back().fragment->functions[0].span;
  Span& whole = m->functions[0].span;
  whole.begin = first.begin;
  whole.line = first.line;
  whole.col = first.col;
  whole.end = last.end + chunks_.back().begin;
  whole.endLine = last.endLine + m->lineOf(chunks_.back().begin) - 1;
  whole.endCol = last.endCol;
  m->functions[0].body = List{static_cast<uint32_t>(m->lists.size()), static_cast<uint32_t>(topLevel.size())};
  m->lists.insert(m->lists.end(), topLevel.begin(), topLevel.end());
  resolveNames(*m);
  return m;
}

std::unique_ptr<Module> parseRuns(std::string path, std::string source, const std::vector<uint32_t>& starts,
                                  unsigned threads) {
  IncrementalDocument document;
  document.seed(starts, static_cast<uint32_t>(source.size()));
  return document.model(path, source, threads);
}

}  // namespace oomlint::python
