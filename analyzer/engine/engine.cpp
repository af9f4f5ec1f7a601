#include "engine/engine.h"


#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/frontends.h"
#include "engine/noqa.h"
#include "util/bytes.h"

namespace oomlint {

std::string_view severityName(Severity s) {
  switch (s) {
    case Severity::Info: return "info";
    case Severity::Warning: return "warning";
    case Severity::Error: return "error";
  }
  return "warning";
}

std::string_view applicabilityName(Applicability a) {
  switch (a) {
    case Applicability::Safe: return "safe";
    case Applicability::Unsafe: return "unsafe";
    case Applicability::DisplayOnly: return "display-only";
  }
  return "display-only";
}

Finding& Context::report(const RuleInfo& rule, const Span& span, std::string message) {
  Finding f;
  f.code = rule.code;
  f.message = std::move(message);
  f.span = span;
  f.severity = rule.severity;
  out_.push_back(std::move(f));
  return out_.back();
}

Finding& Finding::note(const Span& where, std::string text) {
  if (where.line == 0 || (where.begin == span.begin && where.end == span.end)) return *this;
  for (const Related& r : related)
    if (r.span.begin == where.begin && r.span.end == where.end) return *this;
  related.push_back({where, std::move(text)});
  return *this;
}

Finding& Finding::withFix(Applicability applicability, std::string message, std::vector<Edit> edits) {
  hasFix = true;
  fix.applicability = applicability;
  fix.message = std::move(message);
  fix.edits = std::move(edits);
  return *this;
}

std::string EstimatedCost::summary() const {
  std::string amount = "+";  // appended: GCC 12 warns falsely (-Wrestrict) on "+" + std::string
  amount += humanBytes(bytes);
  if (measure == "growth") return amount + " per iteration";
  if (measure == "peak") return amount + " at the peak";
  if (measure == "saved") return amount + " kept for backward per call";
  return amount + " kept after the step";
}

Finding& Finding::withEstimate(EstimatedCost estimate) {
  if (!estimate.present || estimate.bytes < 1) return *this;  // nothing to say in bytes
  estimated = std::move(estimate);
  message += " (estimated " + estimated.summary() + ")";
  return *this;
}

const Rule* findRule(std::string_view code) {
  for (const Rule* r : allRules())
    if (r->info().code == code) return r;
  return nullptr;
}

bool isPythonPath(const std::string& path) {
  auto ends = [&](std::string_view s) { return path.size() >= s.size() && path.compare(path.size() - s.size(), s.size(), s) == 0; };
  return ends(".py") || ends(".pyi");
}

namespace {

/// The module registers hooks on modules (`layer.register_forward_hook(self.save)`): the API of
/// a PyTorch helper that is handed its model and needs no import of its own.
bool registersModuleHooks(const Module& m) {
  for (NodeId e = 0; e < m.exprs.size(); ++e) {
    if (m.exprs[e].kind != ExprKind::Call) continue;
    std::string_view meth = methodName(m, e);
    if (meth == "register_forward_hook" || meth == "register_full_backward_hook" || meth == "register_backward_hook" ||
        meth == "register_forward_pre_hook" || meth == "register_full_backward_pre_hook")
      return true;
  }
  return false;
}

}  // namespace

bool isTorchCode(const Module& m, const ProjectView* project) {
  if (m.importsTorch) return true;
  // A module of a PyTorch program that imports nothing of torch itself: a trainer handed its model,
  // a hook helper (`module.register_forward_hook(self.save)`). Not one written for another framework.
  if (m.lang != Lang::Python || m.importsOtherFramework) return false;
  return (project && project->programFact(ProgramFact::UsesTorch)) || registersModuleHooks(m);
}

std::vector<Finding> runRules(const Module& m, const RuleSelection& selection) {
  CheckOptions opts;
  opts.selection = selection;
  return runRules(m, opts);
}

std::vector<Finding> runRules(const Module& m, const CheckOptions& opts) {
  const RuleSelection& selection = opts.selection;
  std::vector<Finding> out;
  if (!isTorchCode(m, opts.project)) {  // nothing to say, but its summaries may matter to modules that are PyTorch code
    if (opts.onFacts) {
      Facts facts(m, opts.project);
      opts.onFacts(m, &facts);
    }
    return out;
  }
  std::vector<const Rule*> active;
  if (opts.reportFindings)
    for (const Rule* r : allRules())
      if (selection.enabled(r->info().code) && (m.lang == Lang::Python ? r->info().python : r->info().cpp))
        active.push_back(r);
  if (active.empty() && !opts.onFacts) return out;
  Facts facts(m, opts.project);
  if (opts.onFacts) opts.onFacts(m, &facts);
  if (active.empty()) return out;
  Context ctx(m, facts, out, selection.targetTorch());
  // A C++ file's header code is there for its summaries; findings belong to the header's own check.
  uint32_t functions = std::min<uint32_t>(static_cast<uint32_t>(m.functions.size()), m.firstExternalFunction);
  NodeId stmts = std::min<NodeId>(static_cast<NodeId>(m.stmts.size()), m.firstExternalStmt);
  for (uint32_t fn = 0; fn < functions; ++fn)
    for (const Rule* r : active) r->onFunction(ctx, fn);
  for (NodeId s = 0; s < stmts; ++s) {
    for (const Rule* r : active) r->onStatement(ctx, s);
    for (NodeId call : facts.callsOf(s))
      for (const Rule* r : active) r->onCall(ctx, call);
  }
  out.erase(std::remove_if(out.begin(), out.end(), [](const Finding& f) { return f.span.line == 0 || Module::isExternal(f.span); }),
            out.end());
  for (Finding& f : out) {
    const Rule* r = findRule(f.code);
    if (r) f.severity = selection.severityOf(f.code, r->info().severity);
    // A fix that would edit a header's code cannot be applied to this file: offer none.
    bool editsElsewhere = false;
    for (const Edit& e : f.fix.edits) editsElsewhere |= e.begin > m.source.size() || e.end > m.source.size();
    if (editsElsewhere) {
      f.hasFix = false;
      f.fix = Fix{};
    }
  }
  return out;
}

namespace {

Span spanAt(const Module& m, uint32_t offset) {
  Span s;
  s.begin = s.end = offset;
  s.line = m.lineOf(offset);
  s.col = offset - m.lineStarts[s.line - 1];
  s.endLine = s.line;
  s.endCol = s.col;
  return s;
}

/// Offset of the first byte that is not valid UTF-8, or npos.
size_t firstInvalidUtf8(std::string_view s) {
  size_t i = 0, n = s.size();
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + len > n) return i;
    for (size_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return i;
    if (len == 2 && c < 0xC2) return i;  // overlong
    i += len;
  }
  return std::string_view::npos;
}

void sortFindings(std::vector<Finding>& v) {
  std::stable_sort(v.begin(), v.end(), [](const Finding& a, const Finding& b) {
    if (a.span.line != b.span.line) return a.span.line < b.span.line;
    if (a.span.col != b.span.col) return a.span.col < b.span.col;
    return a.code < b.code;
  });
  v.erase(std::unique(v.begin(), v.end(),
                      [](const Finding& a, const Finding& b) {
                        return a.code == b.code && a.span.line == b.span.line && a.span.col == b.span.col;
                      }),
          v.end());
}

Finding engineFinding(std::string_view code, Span span, std::string message) {
  Finding f;
  f.code = code;
  f.span = span;
  f.message = std::move(message);
  f.severity = Severity::Error;
  return f;
}

}  // namespace

std::vector<Finding> analyzeModule(const Module& m, const CheckOptions& opts) {
  std::vector<Finding> findings;
  size_t bad = firstInvalidUtf8(m.source);
  if (bad != std::string_view::npos)
    findings.push_back(engineFinding(kParseErrorCode, spanAt(m, static_cast<uint32_t>(bad)),
                                     "invalid UTF-8 at byte " + std::to_string(bad) + (m.lang == Lang::Python ? "; Python source must be UTF-8" : "; oomlint reads C++ sources as UTF-8")));
  if (m.truncatedDepth) {
    Span s;
    s.line = 1;
    findings.push_back(engineFinding(kParseErrorCode, s, "nesting deeper than oomlint analyses (200 levels); the deepest parts were skipped"));
  }
  std::vector<Finding> ruleFindings = runRules(m, opts);
  if (!opts.reportFindings) return {};
  // A syntax error is suppressed like a rule's finding (`# noqa: OOM000` on its line, OOM000 in
  // per-file-ignores): valid code the parser gets wrong must not block a commit forever.
  if (!m.syntaxIssues.empty() && opts.selection.reportsSyntaxErrors())
    ruleFindings.push_back(engineFinding(kParseErrorCode, m.syntaxIssues.front().span, m.syntaxIssues.front().message));
  bool wantUnused = opts.selection.enabled(kUnusedNoqaCode) && isTorchCode(m, opts.project);
  if (wantUnused || (opts.respectNoqa && !ruleFindings.empty())) {
    // Directives are parsed once: the same pass finds the unused ones and applies the others.
    Suppressions sup(m);
    if (wantUnused) {
      std::vector<Finding> unused = sup.unused(ruleFindings, opts.selection);
      ruleFindings.insert(ruleFindings.end(), std::make_move_iterator(unused.begin()), std::make_move_iterator(unused.end()));
    }
    if (opts.respectNoqa)
      ruleFindings.erase(std::remove_if(ruleFindings.begin(), ruleFindings.end(),
                                        [&](const Finding& f) { return sup.suppressed(f.code, f.span.line); }),
                         ruleFindings.end());
  }
  findings.insert(findings.end(), std::make_move_iterator(ruleFindings.begin()), std::make_move_iterator(ruleFindings.end()));
  sortFindings(findings);
  return findings;
}

bool isCppPath(const std::string& path) { return languageOf(path) == DocumentLanguage::Cpp; }

namespace {

/// A notebook: its code cells checked as one Python module; a notebook that cannot be read is an
/// error like a file that cannot be read, and a notebook of another language is skipped.
FileResult checkNotebook(const std::string& path, const std::string& json, const CheckOptions& opts) {
  auto nb = std::make_shared<Notebook>(readNotebook(json));
  if (!nb->error.empty()) return ioErrorResult(path, nb->error);
  FileResult result;
  result.path = path;
  if (!nb->skipped.empty()) {
    result.skippedReason = path + ": " + nb->skipped;
    return result;
  }
  ParsedDocument doc = parseCells(path, nb->module, cellStartsOf(*nb));
  if (doc.module) result.findings = analyzeModule(*doc.module, opts);
  for (Finding& f : result.findings)
    if (f.estimated.present) f.estimated.basis = cellLinesIn(*nb, f.estimated.basis);
  result.source = nb->module;
  result.notebook = std::move(nb);
  return result;
}

}  // namespace

FileResult checkSource(const std::string& path, std::string source, const CheckOptions& opts) {
  FileResult result;
  result.path = path;
  if (isNotebookPath(path)) return checkNotebook(path, source, opts);
  if (languageOf(path) == DocumentLanguage::Unsupported)
    return ioErrorResult(path, "not a file oomlint can check: expected Python (.py, .pyi), a notebook (.ipynb) or C++ sources");
  ParsedDocument doc = parseDocument(path, std::move(source), languageOf(path));
  result.lang = doc.lang;
  if (!doc.module) {
    if (!doc.skippedReason.empty()) result.skippedReason = doc.skippedReason;
    if (!doc.parseFailure.empty()) {
      Span s;
      s.line = 1;
      result.findings.push_back(engineFinding(kParseErrorCode, s, doc.parseFailure));
    }
    if (doc.nulBytes) {
      Span s;
      s.line = 1;
      result.findings.push_back(engineFinding(kParseErrorCode, s, "file contains NUL bytes; not a Python source file"));
    }
    result.source = std::move(doc.source);
    return result;
  }
  result.findings = analyzeModule(*doc.module, opts);
  result.source = std::move(doc.module->source);
  result.dependencies = std::move(doc.module->headerDependencies);
  return result;
}

std::string readSourceFile(const std::string& path, std::string& source) {
  // open + fstat + read straight into the string: no stream buffers, one copy from the kernel.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return std::string("cannot read file: ") + std::strerror(errno);
    return std::string("cannot open file: ") + std::strerror(errno);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    return std::string("cannot read file: ") + std::strerror(e);
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return "is a directory";
  }
  // The size is a hint: the file may grow or shrink while it is read, so read until end of file.
  source.resize(static_cast<size_t>(st.st_size > 0 ? st.st_size : 0) + 1);
  size_t used = 0;
  for (;;) {
    if (used == source.size()) source.resize(source.size() * 2 + 4096);
    ssize_t n = ::read(fd, source.data() + used, source.size() - used);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      source.clear();
      return std::string("read error: ") + std::strerror(e);
    }
    used += static_cast<size_t>(n);
  }
  ::close(fd);
  source.resize(used);
  return {};
}

FileResult ioErrorResult(const std::string& path, std::string message) {
  FileResult result;
  result.path = path;
  Span s;
  s.line = 1;
  result.findings.push_back(engineFinding(kIoErrorCode, s, std::move(message)));
  result.ioError = true;
  return result;
}

void keepOnlyReportedLines(FileResult& r) {
  const std::string& src = r.source;
  if (src.size() < 4096) return;  // not worth it
  std::vector<uint32_t> starts = lineStartsOf(src);
  auto lineOfOffset = [&](uint32_t off) {
    return static_cast<uint32_t>(std::upper_bound(starts.begin(), starts.end(), off) - starts.begin());  // 1-based
  };
  std::vector<bool> keep(starts.size() + 1, false);
  auto keepLines = [&](uint32_t a, uint32_t b) {
    for (uint32_t l = std::max<uint32_t>(1, a); l <= b && l < keep.size(); ++l) keep[l] = true;
  };
  for (const Finding& f : r.findings) {
    keepLines(f.span.line, std::max(f.span.line, f.span.endLine));
    keepLines(lineOfOffset(f.span.begin), lineOfOffset(f.span.begin));
    keepLines(lineOfOffset(f.span.end), lineOfOffset(f.span.end));
    for (const Edit& e : f.fix.edits) {
      keepLines(lineOfOffset(e.begin), lineOfOffset(e.begin));
      keepLines(lineOfOffset(e.end), lineOfOffset(e.end));
    }
    for (const Related& rel : f.related) {
      keepLines(rel.span.line, std::max(rel.span.line, rel.span.endLine));
      keepLines(lineOfOffset(rel.span.begin), lineOfOffset(rel.span.end));
    }
  }
  std::string out;
  std::vector<uint32_t> newStarts(starts.size());
  for (size_t l = 1; l <= starts.size(); ++l) {
    newStarts[l - 1] = static_cast<uint32_t>(out.size());
    uint32_t b = starts[l - 1];
    uint32_t e = l < starts.size() ? starts[l] : static_cast<uint32_t>(src.size());
    if (keep[l]) out.append(src, b, e - b);
    else if (l < starts.size()) out += '\n';
  }
  auto remap = [&](uint32_t& off) {
    uint32_t l = lineOfOffset(off);
    off = newStarts[l - 1] + (off - starts[l - 1]);
  };
  for (Finding& f : r.findings) {
    remap(f.span.begin);
    remap(f.span.end);
    for (Edit& e : f.fix.edits) {
      remap(e.begin);
      remap(e.end);
    }
    for (Related& rel : f.related) {
      remap(rel.span.begin);
      remap(rel.span.end);
    }
  }
  r.source = std::move(out);
}

FileResult checkFile(const std::string& path, const CheckOptions& opts) {
  std::string source;
  std::string err = readSourceFile(path, source);
  if (!err.empty()) return ioErrorResult(path, err);
  return checkSource(path, std::move(source), opts);
}

FileResult checkFileKeeping(const std::string& path, const CheckOptions& opts, std::unique_ptr<Module>& parsed) {
  parsed.reset();
  if (languageOf(path) != DocumentLanguage::Python || isNotebookPath(path)) return checkFile(path, opts);
  std::string source;
  std::string err = readSourceFile(path, source);
  if (!err.empty()) return ioErrorResult(path, err);
  ParsedDocument doc = parseDocument(path, std::move(source), DocumentLanguage::Python);
  if (!doc.module) return checkSource(path, std::move(doc.source), opts);  // NUL bytes: as checkSource reports them
  FileResult r = recheckModule(path, *doc.module, opts);
  parsed = std::move(doc.module);
  return r;
}

FileResult recheckModule(const std::string& path, const Module& m, const CheckOptions& opts) {
  FileResult result;
  result.path = path;
  result.lang = m.lang;
  result.findings = analyzeModule(m, opts);
  result.source = m.source;
  return result;
}

}  // namespace oomlint
