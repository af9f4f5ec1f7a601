// Joining chunk fragments into one module: every id, list and span of a fragment moved by the
// module's bases at the point it is appended.
#include "python/splice.h"

namespace oomlint::python {

void splice(Module& m, const Module& f, uint32_t byteOffset, uint32_t lineOffset, std::vector<NodeId>& topLevel) {
  const uint32_t E = static_cast<uint32_t>(m.exprs.size()), S = static_cast<uint32_t>(m.stmts.size());
  const uint32_t A = static_cast<uint32_t>(m.args.size()), L = static_cast<uint32_t>(m.lists.size());
  const uint32_t H = static_cast<uint32_t>(m.handlers.size()), P = static_cast<uint32_t>(m.params.size());
  const uint32_t C = static_cast<uint32_t>(m.classes.size()), F = static_cast<uint32_t>(m.functions.size()) - 1;
  auto fn = [&](uint32_t k) { return k == 0 ? 0 : k + F; };
  auto ex = [&](NodeId e) { return e == kNone ? kNone : e + E; };
  auto st = [&](NodeId s) { return s == kNone ? kNone : s + S; };
  auto span = [&](Span s) {
    s.begin += byteOffset;
    s.end += byteOffset;
    s.line += lineOffset;
    s.endLine += lineOffset;
    return s;
  };

  // Lists hold statement ids or expression ids: each is moved by the base of its kind, once.
  const List body = f.functions[0].body;
  const uint32_t kept = body.first;  // the module body is the fragment's last list
  m.lists.insert(m.lists.end(), f.lists.begin(), f.lists.begin() + kept);
  std::vector<bool> moved(kept, false);
  auto list = [&](List l, uint32_t base) {
    if (l.count == 0) return l.first == 0 ? l : List{l.first + L, 0};
    for (uint32_t i = l.first; i < l.first + l.count && i < kept; ++i)
      if (!moved[i]) {
        m.lists[L + i] += base;
        moved[i] = true;
      }
    return List{l.first + L, l.count};
  };
  for (uint32_t i = body.first; i < body.first + body.count; ++i) topLevel.push_back(f.lists[i] + S);

  // Copied in bulk, then moved in place.
  m.exprs.insert(m.exprs.end(), f.exprs.begin(), f.exprs.end());
  for (auto x = m.exprs.begin() + E; x != m.exprs.end(); ++x) {
    x->span = span(x->span);
    x->lhs = ex(x->lhs);
    x->rhs = ex(x->rhs);
    x->firstArg += A;
    x->canonical = 0;
    x->function = fn(x->function);
    x->owner = fn(x->owner);
    x->stmt = st(x->stmt);
  }
  m.args.insert(m.args.end(), f.args.begin(), f.args.end());
  for (auto a = m.args.begin() + A; a != m.args.end(); ++a) a->value = ex(a->value);
  m.params.insert(m.params.end(), f.params.begin(), f.params.end());
  for (auto p = m.params.begin() + P; p != m.params.end(); ++p) p->defaultValue = ex(p->defaultValue);
  m.handlers.insert(m.handlers.end(), f.handlers.begin(), f.handlers.end());
  for (auto h = m.handlers.begin() + H; h != m.handlers.end(); ++h) {
    h->type = ex(h->type);
    h->span = span(h->span);
    h->body = list(h->body, S);
  }
  m.stmts.insert(m.stmts.end(), f.stmts.begin(), f.stmts.end());
  for (auto s = m.stmts.begin() + S; s != m.stmts.end(); ++s) {
    s->span = span(s->span);
    s->parent = st(s->parent);
    s->function = fn(s->function);
    s->target = ex(s->target);
    s->value = ex(s->value);
    s->targets = list(s->targets, E);
    s->body = list(s->body, S);
    s->orelse = list(s->orelse, S);
    s->finalbody = list(s->finalbody, S);
    s->firstHandler += H;
    if (s->kind == StmtKind::FunctionDef) s->def = fn(s->def);
    else if (s->kind == StmtKind::ClassDef) s->def += C;
    s->firstExpr += E;
    s->endExpr += E;
  }
  for (size_t k = 1; k < f.functions.size(); ++k) {
    Function& g = m.functions.emplace_back(f.functions[k]);
    g.span = span(g.span);
    g.nameSpan = span(g.nameSpan);
    g.parent = fn(g.parent);
    if (g.cls >= 0) g.cls += static_cast<int32_t>(C);
    g.defStmt = st(g.defStmt);
    g.lambdaBody = ex(g.lambdaBody);
    g.decorators = list(g.decorators, E);
    g.body = list(g.body, S);
    g.firstParam += P;
  }
  for (const Class& original : f.classes) {
    Class& c = m.classes.emplace_back(original);
    c.span = span(c.span);
    c.function = fn(c.function);
    c.defStmt = st(c.defStmt);
    c.bases = list(c.bases, E);
    c.body = list(c.body, S);
  }
  for (Comment c : f.comments) {
    c.begin += byteOffset;
    c.end += byteOffset;
    c.line += lineOffset;
    m.comments.push_back(c);
  }
  addModuleWide(m, f);
}

void addModuleWide(Module& m, const Module& f) {
  for (const auto& [name, dotted] : f.imports) m.imports[name] = dotted;  // a later import rebinds
  m.importsTorch |= f.importsTorch;
  m.importsOtherFramework |= f.importsOtherFramework;
  m.truncatedDepth |= f.truncatedDepth;
}

}  // namespace oomlint::python
