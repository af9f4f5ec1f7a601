#include "fix/fix.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include <map>
#include <set>

#include "engine/frontends.h"
#include "engine/noqa.h"
#include "util/lines.h"

namespace oomlint {

std::string applyEdits(const std::string& source, std::vector<Edit> edits) {
  std::sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) { return a.begin < b.begin; });
  std::string out;
  out.reserve(source.size() + 64);
  uint32_t pos = 0;
  for (const Edit& e : edits) {
    if (e.begin < pos || e.end > source.size() || e.end < e.begin) continue;  // overlapping: skip
    out.append(source, pos, e.begin - pos);
    out += e.content;
    pos = e.end;
  }
  out.append(source, pos, std::string::npos);
  return out;
}

namespace {

bool eligible(const Finding& f, const FixOptions& opts) {
  if (!f.hasFix || f.fix.edits.empty()) return false;
  if (f.fix.applicability == Applicability::Safe) return true;
  return opts.unsafe && f.fix.applicability == Applicability::Unsafe;
}

std::pair<uint32_t, uint32_t> extent(const Fix& fix) {
  uint32_t b = UINT32_MAX, e = 0;
  for (const Edit& ed : fix.edits) {
    b = std::min(b, ed.begin);
    e = std::max(e, ed.end);
  }
  return {b, e};
}

}  // namespace

namespace {

/// The fix's edits cross no boundary; then each boundary after them moves with them.
bool shiftBoundaries(const Fix& fix, std::vector<uint32_t>* boundaries) {
  if (!boundaries) return true;
  for (const Edit& e : fix.edits)
    for (uint32_t b : *boundaries)
      if (e.begin < b && e.end > b) return false;
  for (uint32_t& b : *boundaries) {
    int64_t delta = 0;
    for (const Edit& e : fix.edits)
      if (e.end <= b && !(e.begin == b && e.end == b)) delta += static_cast<int64_t>(e.content.size()) - (e.end - e.begin);
    b = static_cast<uint32_t>(b + delta);
  }
  return true;
}

/// The module path a notebook's cells are checked under (its rules see a Python file).
std::string modulePath(const std::string& notebookPath) { return notebookPath + ".py"; }

std::vector<uint32_t> cellBegins(const Notebook& nb) {
  std::vector<uint32_t> out;
  for (const NotebookCell& c : nb.cells) out.push_back(c.begin);
  return out;
}

FixOutcome fixNotebook(const std::string& path, const std::string& json, const CheckOptions& check, const FixOptions& opts) {
  FixOutcome out;
  out.source = json;
  Notebook nb = readNotebook(json);
  if (!nb.error.empty() || !nb.skipped.empty()) return out;
  std::vector<uint32_t> starts = cellBegins(nb);
  FixOptions inner = opts;
  inner.boundaries = &starts;
  FixOutcome moduleFixed = applyFixes(modulePath(path), nb.module, check, inner);
  out.refused = moduleFixed.refused;
  if (moduleFixed.applied == 0) return out;
  size_t refusedCells = 0;
  out.source = writeNotebook(json, nb, moduleFixed.source, starts, refusedCells);
  out.applied = moduleFixed.applied;
  out.refused += refusedCells;
  out.appliedCodes = std::move(moduleFixed.appliedCodes);
  return out;
}

}  // namespace

FixOutcome applyFixes(const std::string& path, const std::string& source, const CheckOptions& check, const FixOptions& opts) {
  if (isNotebookPath(path)) return fixNotebook(path, source, check, opts);
  FixOutcome out;
  out.source = source;
  // C++ re-parses cost a Clang run each: a pass's fixes are checked together, once.
  const DocumentLanguage language = languageOf(path);
  const bool cpp = language == DocumentLanguage::Cpp;
  if (!parsesCleanly(path, source, language)) return out;
  for (int pass = 0; pass < opts.maxPasses; ++pass) {
    FileResult r = checkSource(path, out.source, check);
    std::vector<const Finding*> candidates;
    for (const Finding& f : r.findings)
      if (eligible(f, opts)) candidates.push_back(&f);
    std::sort(candidates.begin(), candidates.end(),
              [](const Finding* a, const Finding* b) { return extent(a->fix).first < extent(b->fix).first; });
    // Non-overlapping fixes, applied back to front so earlier offsets stay valid; each is kept
    // only if the file still parses with it.
    std::vector<const Finding*> chosen;
    uint32_t lastEnd = 0;
    bool first = true;
    for (const Finding* f : candidates) {
      auto [b, e] = extent(f->fix);
      if (!first && b < lastEnd) continue;
      chosen.push_back(f);
      lastEnd = std::max(e, b + 1);
      first = false;
    }
    size_t appliedThisPass = 0;
    std::string text = out.source;
    for (auto it = chosen.rbegin(); it != chosen.rend(); ++it) {
      std::string next = applyEdits(text, (*it)->fix.edits);
      if (next == text) continue;
      if (!cpp && !parsesCleanly(path, next, language)) {
        ++out.refused;
        continue;
      }
      if (!shiftBoundaries((*it)->fix, opts.boundaries)) {  // it would join two notebook cells
        ++out.refused;
        continue;
      }
      text = std::move(next);
      ++appliedThisPass;
      out.appliedCodes.emplace_back((*it)->code);
    }
    if (appliedThisPass == 0) break;
    if (cpp && !parsesCleanly(path, text, language)) {
      out.refused += appliedThisPass;
      out.appliedCodes.resize(out.appliedCodes.size() - appliedThisPass);
      break;
    }
    out.applied += appliedThisPass;
    out.source = std::move(text);
  }
  return out;
}

AddNoqaOutcome addNoqaDirectives(const std::string& path, const std::string& source, const CheckOptions& check) {
  AddNoqaOutcome out;
  out.source = source;
  if (isNotebookPath(path)) {
    Notebook nb = readNotebook(source);
    if (!nb.error.empty() || !nb.skipped.empty()) return out;
    AddNoqaOutcome moduleOut = addNoqaDirectives(modulePath(path), nb.module, check);
    out.skipped = moduleOut.skipped;
    if (moduleOut.added == 0) return out;
    // Directives go at line ends: every cell still starts on the line it started on.
    std::vector<uint32_t> lineStarts{0};
    for (uint32_t i = 0; i < moduleOut.source.size(); ++i)
      if (moduleOut.source[i] == '\n') lineStarts.push_back(i + 1);
    std::vector<uint32_t> starts;
    for (const NotebookCell& c : nb.cells)
      starts.push_back(c.firstLine - 1 < lineStarts.size() ? lineStarts[c.firstLine - 1] : static_cast<uint32_t>(moduleOut.source.size()));
    size_t refusedCells = 0;
    out.source = writeNotebook(source, nb, moduleOut.source, starts, refusedCells);
    if (refusedCells) {  // a directive would land on an IPython line: write nothing
      out.source = source;
      out.skipped += moduleOut.added;
      return out;
    }
    out.added = moduleOut.added;
    return out;
  }
  FileResult r = checkSource(path, source, check);
  std::map<uint32_t, std::set<std::string>> byLine;
  for (const Finding& f : r.findings)
    if (f.code != kParseErrorCode && f.code != kIoErrorCode && f.code != "OOM900") byLine[f.span.line].insert(std::string(f.code));
  if (byLine.empty()) return out;
  const DocumentLanguage language = languageOf(path);
  std::unique_ptr<Module> m = parseDocument(path, source, language).module;
  if (!m) return out;
  bool wasClean = m->syntaxIssues.empty();
  std::vector<NoqaDirective> directives = collectNoqa(*m);
  std::vector<Edit> edits;
  for (const auto& [line, codes] : byLine) {
    if (line == 0 || line > m->lineStarts.size()) continue;
    // A comment cannot go where the line ends inside a string or after a backslash continuation.
    bool insideString = false;
    for (const Expr& e : m->exprs)
      if (e.kind == ExprKind::String && e.span.line <= line && e.span.endLine > line) insideString = true;
    std::string_view text = m->lineText(line);
    if (insideString || (!text.empty() && text.back() == '\\')) {
      out.skipped += codes.size();
      continue;
    }
    const NoqaDirective* existing = nullptr;
    for (const NoqaDirective& d : directives)
      if (!d.fileLevel && d.line == line) existing = &d;
    Edit e;
    if (language == DocumentLanguage::Cpp) {
      // C++: clang-tidy's form, merged into a NOLINT(...) already on the line.
      if (existing && existing->all) continue;
      std::set<std::string> merged(codes.begin(), codes.end());
      if (existing && existing->nolint && existing->scope == NoqaDirective::Scope::Line) {
        merged.insert(existing->codes.begin(), existing->codes.end());
        e.begin = existing->begin;
        e.end = existing->end;
        e.content = "NOLINT(";
      } else {
        e.begin = e.end = m->lineStarts[line - 1] + static_cast<uint32_t>(text.size());
        e.content = "  // NOLINT(";
      }
      std::string list;
      for (const std::string& c : merged) list += (list.empty() ? "" : ", ") + c;
      e.content += list + ")";
    } else if (existing) {
      if (existing->all) continue;
      std::set<std::string> merged(existing->codes.begin(), existing->codes.end());
      merged.insert(codes.begin(), codes.end());
      std::string list;
      for (const std::string& c : merged) list += (list.empty() ? "" : ", ") + c;
      e.begin = existing->begin;
      e.end = existing->end;
      e.content = "# noqa: " + list;
    } else {
      std::string list;
      for (const std::string& c : codes) list += (list.empty() ? "" : ", ") + c;
      e.begin = e.end = m->lineStarts[line - 1] + static_cast<uint32_t>(text.size());
      e.content = "  # noqa: " + list;
    }
    out.added += codes.size();
    edits.push_back(std::move(e));
  }
  std::string next = applyEdits(source, edits);
  if (wasClean && !parsesCleanly(path, next, language)) {
    out.skipped += out.added;
    out.added = 0;
    return out;
  }
  out.source = std::move(next);
  return out;
}

std::string writeFileAtomically(const std::string& given, const std::string& contents) {
  // Write through symlinks to the real file instead of replacing the link.
  char real[PATH_MAX];
  std::string path = ::realpath(given.c_str(), real) ? std::string(real) : given;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::string("cannot stat: ") + std::strerror(errno);
  // Root may write anywhere; a file the user marked read-only is still not ours to change.
  if ((st.st_mode & 0222) == 0) return "file is read-only; fixes not written";
  if (!S_ISREG(st.st_mode)) return "not a regular file; fixes not written";
  std::string dir = ".";
  std::string base = path;
  if (size_t slash = path.rfind('/'); slash != std::string::npos) {
    dir = slash == 0 ? "/" : path.substr(0, slash);
    base = path.substr(slash + 1);
  }
  std::string tmpl = dir + "/." + base + ".oomlint-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  int fd = ::mkstemp(buf.data());
  if (fd < 0) return std::string("cannot create temporary file: ") + std::strerror(errno);
  std::string tmp(buf.data());
  auto fail = [&](const char* what) {
    std::string msg = std::string(what) + ": " + std::strerror(errno);
    ::close(fd);
    ::unlink(tmp.c_str());
    return msg;
  };
  size_t off = 0;
  while (off < contents.size()) {
    ssize_t n = ::write(fd, contents.data() + off, contents.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("write failed");
    }
    off += static_cast<size_t>(n);
  }
  if (::fchmod(fd, st.st_mode & 07777) != 0) return fail("cannot set file mode");
  if (::fsync(fd) != 0) return fail("fsync failed");
  if (::close(fd) != 0) {
    ::unlink(tmp.c_str());
    return std::string("close failed: ") + std::strerror(errno);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string msg = std::string("rename failed: ") + std::strerror(errno);
    ::unlink(tmp.c_str());
    return msg;
  }
  return {};
}

}  // namespace oomlint
