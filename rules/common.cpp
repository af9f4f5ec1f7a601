#include "rules/common.h"

#include <cctype>

namespace oomlint::rules {
namespace {

/// Start offset of an argument, including `name=` for keyword arguments and `*`/`**` for splats.
uint32_t argStart(const Module& m, const Arg& a) {
  uint32_t b = m.expr(a.value).span.begin;
  std::string_view src(m.source);
  if (a.keyword.empty()) return b;
  uint32_t i = b;
  while (i > 0 && (src[i - 1] == ' ' || src[i - 1] == '\t')) --i;
  if (a.keyword == "*" || a.keyword == "**") {
    while (i > 0 && src[i - 1] == '*') --i;
    return i;
  }
  if (i == 0 || src[i - 1] != '=') return b;
  --i;
  while (i > 0 && (src[i - 1] == ' ' || src[i - 1] == '\t')) --i;
  if (i < a.keyword.size() || src.substr(i - a.keyword.size(), a.keyword.size()) != a.keyword) return b;
  return static_cast<uint32_t>(i - a.keyword.size());
}

bool removeArgAt(const Module& m, NodeId call, uint32_t index, Edit& out) {
  const Expr& c = m.expr(call);
  if (index >= c.argCount) return false;
  const Arg* args = m.argsBegin(c);
  std::string_view src(m.source);
  uint32_t start = argStart(m, args[index]);
  uint32_t end = m.expr(args[index].value).span.end;
  if (index > 0) {
    start = m.expr(args[index - 1].value).span.end;  // drop ", arg"
  } else if (index + 1 < c.argCount) {
    end = argStart(m, args[index + 1]);  // drop "arg, "
  } else {
    uint32_t j = end;
    while (j < src.size() && (src[j] == ' ' || src[j] == '\t')) ++j;
    if (j < src.size() && src[j] == ',') end = j + 1;  // a lone trailing comma goes too
  }
  out.begin = start;
  out.end = end;
  out.content.clear();
  return true;
}

/// The statement list that holds `stmt`.
List siblingsOf(const Module& m, NodeId stmt) {
  const Stmt& st = m.stmt(stmt);
  auto holds = [&](List l) {
    for (NodeId s : items(m, l))
      if (s == stmt) return true;
    return false;
  };
  if (st.parent == kNone) return m.functions[st.function].body;
  const Stmt& p = m.stmt(st.parent);
  for (List l : {p.body, p.orelse, p.finalbody})
    if (holds(l)) return l;
  for (uint32_t h = 0; h < p.handlerCount; ++h)
    if (holds(m.handlers[p.firstHandler + h].body)) return m.handlers[p.firstHandler + h].body;
  return {};
}

uint32_t lineStart(const Module& m, uint32_t line) { return m.lineStarts[line - 1]; }

uint32_t lineEndNoNewline(const Module& m, uint32_t line) {
  uint32_t e = line < m.lineStarts.size() ? m.lineStarts[line] : static_cast<uint32_t>(m.source.size());
  while (e > m.lineStarts[line - 1] && (m.source[e - 1] == '\n' || m.source[e - 1] == '\r')) --e;
  return e;
}

bool onlyWhitespace(std::string_view s) {
  for (char c : s)
    if (c != ' ' && c != '\t' && c != '\f') return false;
  return true;
}

/// Leading whitespace of the line holding byte `offset`.
std::string_view indentOf(const Module& m, uint32_t line) {
  std::string_view t = m.lineText(line);
  size_t n = 0;
  while (n < t.size() && (t[n] == ' ' || t[n] == '\t')) ++n;
  return t.substr(0, n);
}

/// The indentation unit around `stmt`: the step from it to its own body, or from its parent to
/// it; a tab when the file indents with tabs; else the smallest indentation of the file's first
/// lines; 4 spaces by default.
std::string indentUnit(const Module& m, NodeId stmt, std::string_view currentIndent) {
  if (currentIndent.find('\t') != std::string_view::npos) return "\t";
  const Stmt& st = m.stmt(stmt);
  auto step = [&](uint32_t outerLine, uint32_t innerLine) -> std::string {
    std::string_view outer = indentOf(m, outerLine), inner = indentOf(m, innerLine);
    if (inner.size() > outer.size() && inner.substr(0, outer.size()) == outer) return std::string(inner.substr(outer.size()));
    return {};
  };
  if (st.body.count) {
    std::string u = step(st.span.line, m.stmt(m.lists[st.body.first]).span.line);
    if (!u.empty()) return u;
  }
  if (st.parent != kNone) {
    std::string u = step(m.stmt(st.parent).span.line, st.span.line);
    if (!u.empty()) return u;
  } else if (st.function != 0) {
    std::string u = step(m.functions[st.function].span.line, st.span.line);
    if (!u.empty()) return u;
  }
  size_t best = 0;
  uint32_t limit = std::min<uint32_t>(static_cast<uint32_t>(m.lineStarts.size()), 500);
  for (uint32_t line = 1; line <= limit; ++line) {
    std::string_view t = m.lineText(line);
    size_t n = 0;
    while (n < t.size() && t[n] == ' ') ++n;
    if (n == 0 || n == t.size() || t[n] == '#') continue;
    if (t[n] == '\t') return "\t";
    if (best == 0 || n < best) best = n;
  }
  if (best == 0 || best > 8) best = 4;
  return std::string(best, ' ');
}

/// The whole lines a statement occupies: [begin, end) without the final newline, its indentation
/// and line ending. False when something else shares its first line before it, or (with
/// `aloneAtEnd`) anything but a comment follows it on its last line.
struct StatementLines {
  uint32_t begin = 0, end = 0;
  std::string_view indent;
  std::string eol = "\n";
};

bool statementLines(const Module& m, NodeId stmt, bool aloneAtEnd, StatementLines& out) {
  const Stmt& st = m.stmt(stmt);
  std::string_view src(m.source);
  out.begin = lineStart(m, st.span.line);
  out.indent = src.substr(out.begin, st.span.begin - out.begin);
  if (!onlyWhitespace(out.indent)) return false;
  // A trailing comment token may include the `\r` of a CRLF line ending.
  out.end = std::max(lineEndNoNewline(m, st.span.endLine), st.span.end);
  uint32_t firstEnd = st.span.line < m.lineStarts.size() ? m.lineStarts[st.span.line] : static_cast<uint32_t>(src.size());
  out.eol = firstEnd >= 2 && src[firstEnd - 1] == '\n' && src[firstEnd - 2] == '\r' ? "\r\n" : "\n";
  if (!aloneAtEnd) return true;
  std::string_view after = src.substr(st.span.end, out.end - st.span.end);
  size_t k = 0;
  while (k < after.size() && (after[k] == ' ' || after[k] == '\t')) ++k;
  return k >= after.size() || after[k] == '#' || after.substr(k, 2) == "//";  // `a(); b()` shares the line
}

}  // namespace

std::string withMethod(const Module& m, NodeId expr, std::string_view pythonSuffix, std::string_view cppSuffix) {
  const Expr& e = m.expr(expr);
  std::string text(m.textOf(expr));
  bool atomic = e.kind == ExprKind::Name || e.kind == ExprKind::Attribute || e.kind == ExprKind::Call ||
                e.kind == ExprKind::Subscript;
  if (!atomic) text = "(" + text + ")";
  text += m.lang == Lang::Python ? pythonSuffix : cppSuffix;
  return text;
}

Edit replaceExpr(const Module& m, NodeId expr, std::string replacement) {
  Edit e;
  e.begin = m.expr(expr).span.begin;
  e.end = m.expr(expr).span.end;
  e.content = std::move(replacement);
  return e;
}

bool removeKeywordArg(const Module& m, NodeId call, std::string_view keyword, Edit& out) {
  const Expr& c = m.expr(call);
  for (uint32_t i = 0; i < c.argCount; ++i)
    if (m.args[c.firstArg + i].keyword == keyword) return removeArgAt(m, call, i, out);
  return false;
}

bool removePositionalArg(const Module& m, NodeId call, uint32_t index, Edit& out) {
  const Expr& c = m.expr(call);
  uint32_t seen = 0;
  for (uint32_t i = 0; i < c.argCount; ++i) {
    if (!m.args[c.firstArg + i].keyword.empty()) continue;
    if (seen++ == index) return removeArgAt(m, call, i, out);
  }
  return false;
}

bool insertArgument(const Module& m, NodeId call, std::string_view arg, bool first, Edit& out) {
  const Expr& c = m.expr(call);
  std::string_view src(m.source);
  if (c.span.end == 0 || src[c.span.end - 1] != ')') return false;
  out.content.clear();
  if (c.argCount == 0) {
    out.begin = out.end = c.span.end - 1;
    out.content = std::string(arg);
    return true;
  }
  const Arg* args = m.argsBegin(c);
  if (first) {
    out.begin = out.end = argStart(m, args[0]);
    out.content = std::string(arg) + ", ";
  } else {
    out.begin = out.end = m.expr(args[c.argCount - 1].value).span.end;
    out.content = ", " + std::string(arg);
  }
  return true;
}

bool insertStatementBefore(const Module& m, NodeId stmt, std::string_view text, Edit& out) {
  StatementLines lines;
  if (!statementLines(m, stmt, false, lines)) return false;
  out.begin = out.end = lines.begin;
  out.content = std::string(lines.indent) + std::string(text) + lines.eol;
  return true;
}

bool insideContext(const Module& m, NodeId stmt, bool (*matches)(const std::string& canonical)) {
  for (NodeId p = stmt; p != kNone; p = m.stmt(p).parent) {
    const Stmt& st = m.stmt(p);
    if (st.kind == StmtKind::With && p != stmt)
      for (NodeId ctx : items(m, st.targets))
        if (matches(m.canonical(ctx))) return true;
  }
  uint32_t fn = m.stmt(stmt).function;
  for (NodeId d : items(m, m.functions[fn].decorators))
    if (matches(m.canonical(d))) return true;
  return false;
}

bool removeStatement(const Module& m, NodeId stmt, Edit& out) {
  const Stmt& st = m.stmt(stmt);
  StatementLines lines;
  if (!statementLines(m, stmt, true, lines)) return false;
  List siblings = siblingsOf(m, stmt);
  if (siblings.count <= 1) {
    out.begin = st.span.begin;
    out.end = st.span.end;
    out.content = m.lang == Lang::Python ? "pass" : "";
    return true;
  }
  out.begin = lines.begin;
  out.end = st.span.endLine < m.lineStarts.size() ? m.lineStarts[st.span.endLine] : static_cast<uint32_t>(m.source.size());
  out.content.clear();
  return true;
}

bool wrapInWith(const Module& m, NodeId stmt, std::string_view ctx, Edit& out) {
  const Stmt& st = m.stmt(stmt);
  std::string_view src(m.source);
  StatementLines lines;
  if (!statementLines(m, stmt, true, lines)) return false;
  uint32_t ls = lines.begin, le = lines.end;
  std::string_view indent = lines.indent;
  // Re-indenting would change the contents of a string literal that spans lines.
  for (NodeId id = st.firstExpr; id < st.endExpr && id < m.exprs.size(); ++id) {
    const Expr& e = m.exprs[id];
    if (e.kind == ExprKind::String && e.span.line != e.span.endLine) return false;
  }
  std::string unit = indentUnit(m, stmt, indent);
  const std::string& eol = lines.eol;
  std::string text(indent);
  text += "with ";
  text += ctx;
  text += ":";
  text += eol;
  for (uint32_t line = st.span.line; line <= st.span.endLine; ++line) {
    uint32_t b = lineStart(m, line);
    uint32_t e = line == st.span.endLine ? le
                                         : (line < m.lineStarts.size() ? m.lineStarts[line] : static_cast<uint32_t>(src.size()));
    std::string_view t = src.substr(b, e - b);
    std::string_view body = t;
    while (!body.empty() && (body.back() == '\n' || body.back() == '\r')) body.remove_suffix(1);
    if (!onlyWhitespace(body)) text += unit;
    text += t;
  }
  out.begin = ls;
  out.end = le;
  out.content = std::move(text);
  return true;
}

std::string localName(const Module& m, std::string_view canonical) {
  // Prefer the spelling readers expect: the module under its own name (`torch.no_grad`), then
  // the longest imported prefix, then the shortest alias; ties broken alphabetically.
  std::string best;
  size_t bestLen = 0;
  bool bestOwnName = false;
  for (const auto& [local, full] : m.imports) {
    if (full == canonical) return std::string(local);
    if (canonical.size() <= full.size() || canonical.substr(0, full.size()) != full || canonical[full.size()] != '.') continue;
    std::string candidate = std::string(local) + std::string(canonical.substr(full.size()));
    bool ownName = local == full;
    bool better = best.empty() || (ownName && !bestOwnName) ||
                  (ownName == bestOwnName && (full.size() > bestLen ||
                                              (full.size() == bestLen && (candidate.size() < best.size() ||
                                                                          (candidate.size() == best.size() && candidate < best)))));
    if (better) {
      best = candidate;
      bestLen = full.size();
      bestOwnName = ownName;
    }
  }
  return best;
}

void noteHistory(Finding& f, const Facts& facts, NodeId value) {
  const Module& m = facts.module();
  NodeId origin = facts.value(value).origin;
  if (origin == kNone || m.expr(origin).kind != ExprKind::Call) return;
  std::string callee = brief(m, m.expr(origin).lhs, 30);
  if (facts.isBackwardCall(origin) || facts.isAutogradGradCall(origin))
    f.note(m.expr(origin).span, "a backward runs on it here, so it carries autograd history");
  else if (facts.isForwardCall(origin))
    f.note(m.expr(origin).span, ticked(callee + "(...)") + " runs with autograd on here: its output carries the graph");
  else if (facts.isLossCall(origin))
    f.note(m.expr(origin).span, "the loss is computed here, with autograd history");
  else if (facts.calleeOf(origin))
    f.note(m.expr(origin).span, ticked(callee + "(...)") + " returns a tensor that carries autograd history");
}

void noteOutside(Finding& f, const Facts& facts, NodeId target) {
  const Module& m = facts.module();
  NodeId root = target;
  while (m.expr(root).kind == ExprKind::Subscript) root = m.expr(root).lhs;
  if (m.expr(root).kind != ExprKind::Name) return;
  NodeId site = facts.bindingSite(root);
  if (site == kNone || facts.enclosingLoop(site) == facts.enclosingLoop(m.expr(target).stmt)) return;
  f.note(facts.headerSpan(site), ticked(m.expr(root).text) + " is bound here, outside the loop, and lives across its iterations");
}

bool identifierMentions(const Facts& facts, NodeId e, std::string_view word) {
  const Module& m = facts.module();
  bool found = false;
  facts.forSubtree(e, [&](NodeId x) {
    const Expr& ex = m.expr(x);
    if ((ex.kind == ExprKind::Name || ex.kind == ExprKind::Attribute) && names::lower(ex.text).find(word) != std::string::npos)
      found = true;
  });
  return found;
}

bool fileMentionsIdentifier(const Module& m, std::string_view word) {
  for (const Expr& ex : m.exprs)
    if ((ex.kind == ExprKind::Name || ex.kind == ExprKind::Attribute) && names::lower(ex.text).find(word) != std::string::npos)
      return true;
  return false;
}

bool hasModulo(const Facts& facts, NodeId e) {
  bool found = false;
  facts.forSubtree(e, [&](NodeId x) {
    if (facts.module().expr(x).kind == ExprKind::BinOp && facts.module().expr(x).text == "%") found = true;
  });
  return found;
}

bool calledPerIteration(const Facts& facts, NodeId iteration) {
  const Module& m = facts.module();
  if (iteration == kNone || m.stmt(iteration).kind != StmtKind::FunctionDef) return false;
  uint32_t fn = m.stmt(iteration).def;
  return !facts.frameworkStep(fn) && facts.stepCallOf(fn) != kNone;
}

std::string_view loopRoleName(uint8_t role) {
  if (role & loop_role::kTraining) return "training loop";
  if (role & loop_role::kEval) return "evaluation loop";
  if (role & loop_role::kData) return "data loop";
  return "loop";
}

void noteLoop(Finding& f, const Facts& facts, NodeId loop) {
  if (loop == kNone) return;
  const Module& m = facts.module();
  if (calledPerIteration(facts, loop)) {
    uint32_t fn = m.stmt(loop).def;
    NodeId call = facts.stepCallOf(fn);
    NodeId callerLoop = facts.stepIterationOf(m.expr(call).stmt);
    std::string role(loopRoleName(facts.iterationRole(callerLoop)));
    f.note(m.expr(call).span, ticked(m.functions[fn].name) + " runs here once per iteration of a " + role);
    return;
  }
  if (m.stmt(loop).kind == StmtKind::FunctionDef && facts.forwardStepOf(m.stmt(loop).def) != kNone) {
    const Function& fn = m.functions[m.stmt(loop).def];
    f.note(fn.nameSpan, "whatever trains `" + std::string(m.classes[static_cast<size_t>(fn.cls)].name) +
                            "` calls `forward` once per step, and nothing in this file empties what it appends to `self`");
    return;
  }
  if (m.stmt(loop).kind == StmtKind::FunctionDef && facts.externalStepOf(m.stmt(loop).def) != kNone) {
    const Function& fn = m.functions[m.stmt(loop).def];
    f.note(fn.nameSpan, "no code of this file calls " + ticked(fn.name) +
                            ": the training code that does, in another file, runs it once per step");
    return;
  }
  if (m.stmt(loop).kind == StmtKind::FunctionDef) {  // a framework step (Facts::iterationOf)
    uint32_t fn = m.stmt(loop).def;
    f.note(m.functions[fn].nameSpan, std::string(facts.frameworkName(fn)) + " runs " + ticked(m.functions[fn].name) +
                                         " once per batch: what it keeps on `self` outlives the step");
    return;
  }
  f.note(facts.headerSpan(loop), "in this " + std::string(loopRoleName(facts.loopRole(loop))));
}

std::string ticked(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '`';
  out += text;
  out += '`';
  return out;
}

std::string brief(const Module& m, NodeId e, size_t max) {
  std::string t(m.textOf(e));
  // C++ members used without `this->`: the implicit object has no text of its own.
  if (t.empty() && m.lang == Lang::Cpp && isSelfName(m, e)) t = "*this";
  // An expression over several lines reads as one: each run of spaces and line breaks is one space.
  std::string flat;
  flat.reserve(t.size());
  for (char c : t) {
    bool space = c == ' ' || c == '\n' || c == '\r' || c == '\t';
    if (space && (flat.empty() || flat.back() == ' ')) continue;
    flat += space ? ' ' : c;
  }
  t = std::move(flat);
  if (t.size() > max) t = t.substr(0, max - 3) + "...";
  return t;
}

bool readWithHistoryElsewhere(const Facts& f, NodeId loop, NodeId s, std::string_view key) {
  const Module& m = f.module();
  for (NodeId o : f.statementsWithin(loop))
    if (o != s && m.stmt(o).value != kNone && f.readWithHistory(m.stmt(o).value, key, loop) != kNone) return true;
  return false;
}

namespace {

/// The term reported of a running update's `terms` (runningUpdateRead).
NodeId reportedTerm(const Facts& f, NodeId read, const std::vector<NodeId>& terms, NodeId& added, bool* several) {
  if (read == kNone || terms.empty()) return kNone;
  // Of several terms, the one reported is the first that carries history.
  added = terms.back();
  for (NodeId t : terms)
    if (f.value(t).history == Tri::Yes) {
      added = t;
      break;
    }
  if (several && terms.size() > 1) *several = true;
  return read;
}

}  // namespace

NodeId runningUpdateRead(const Facts& f, NodeId value, std::string_view key, NodeId& added, bool* average, bool* several) {
  added = kNone;
  std::vector<NodeId> terms;
  return reportedTerm(f, f.runningUpdate(value, key, &terms, average), terms, added, several);
}

NodeId runningUpdateOfTarget(const Facts& f, NodeId value, NodeId target, NodeId& added, bool* average, bool* several) {
  added = kNone;
  std::vector<NodeId> terms;
  std::string_view key = f.pathKey(target);
  NodeId read = key.empty() ? f.runningUpdate(value, target, &terms, average) : f.runningUpdate(value, key, &terms, average);
  return reportedTerm(f, read, terms, added, several);
}

NodeId forwardReading(const Facts& f, NodeId loop, std::string_view path, bool withHistory) {
  const Module& m = f.module();
  if (path.empty()) return kNone;
  for (NodeId o : f.statementsWithin(loop))
    for (NodeId c : f.callsOf(o)) {
      if (!f.isForwardCall(c)) continue;
      for (const Arg& a : argsOf(m, m.expr(c)))
        if (withHistory ? f.readWithHistory(a.value, path, loop) != kNone : f.mentionsPath(a.value, path)) return c;
    }
  return kNone;
}

}  // namespace oomlint::rules
