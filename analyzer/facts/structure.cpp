// Pass 1, structure: statements per function, enclosing loops, calls per statement, functions by
// name, class families (a class with its in-file bases and subclasses); and, once kinds are
// known, the functions each call may run.
#include <algorithm>

#include "facts/builder.h"
#include "facts/names.h"

namespace oomlint {

void FactsBuilder::buildStructure() {
  size_t ns = m_.stmts.size(), ne = m_.exprs.size(), nf = m_.functions.size(), nc = m_.classes.size();
  f_.fnStmts_.assign(nf, {});
  f_.stmtCalls_.assign(ns, {});
  f_.loopOf_.assign(ns, kNone);
  f_.depth_.assign(ns, 0);
  if (m_.lang == Lang::Cpp) {
    f_.cppKeys_.assign(ne, {});
    for (NodeId e = 0; e < ne; ++e)
      if (m_.expr(e).kind == ExprKind::Attribute) {
        std::string key = dottedPath(m_, e);
        if (!key.empty()) f_.cppKeys_[e] = f_.cppKeyText_.emplace_back(std::move(key));
      }
  }
  f_.posInFn_.assign(ns, 0);
  f_.endInFn_.assign(ns, 0);
  for (NodeId s = 0; s < ns; ++s) {
    const Stmt& st = m_.stmt(s);
    f_.posInFn_[s] = static_cast<uint32_t>(f_.fnStmts_[st.function].size());
    f_.fnStmts_[st.function].push_back(s);
    if (st.parent != kNone) {
      StmtKind pk = m_.stmt(st.parent).kind;
      f_.loopOf_[s] = (pk == StmtKind::For || pk == StmtKind::While) ? st.parent : f_.loopOf_[st.parent];
      f_.depth_[s] = f_.depth_[st.parent] + 1;
    }
  }
  // Each statement's nested statements are the run [posInFn_, endInFn_) of its function's list:
  // exact when the list is a pre-order of the function's statement tree, which is checked here.
  f_.preorder_.assign(nf, true);
  for (uint32_t fn = 0; fn < nf; ++fn) {
    const std::vector<NodeId>& list = f_.fnStmts_[fn];
    for (uint32_t i = 0; i < list.size(); ++i) f_.endInFn_[list[i]] = i + 1;
    for (uint32_t i = static_cast<uint32_t>(list.size()); i-- > 0;) {
      NodeId p = m_.stmt(list[i]).parent;
      if (p == kNone || m_.stmt(p).function != fn) continue;
      if (f_.posInFn_[p] >= i) f_.preorder_[fn] = false;
      f_.endInFn_[p] += f_.endInFn_[list[i]] - i;  // a subtree's size: its end minus its position
    }
    for (uint32_t i = 0; i < list.size() && f_.preorder_[fn]; ++i) {
      NodeId p = m_.stmt(list[i]).parent;
      if (p != kNone && m_.stmt(p).function == fn && f_.endInFn_[list[i]] > f_.endInFn_[p]) f_.preorder_[fn] = false;
    }
  }
  // Which list of its parent holds each statement: 0 body, 1 orelse, 2 finalbody, 3+h handler h.
  f_.branch_.assign(ns, -1);
  for (NodeId p = 0; p < ns; ++p) {
    const Stmt& st = m_.stmt(p);
    auto mark = [&](List l, int32_t branch) {
      for (NodeId c : items(m_, l))
        if (f_.branch_[c] < 0) f_.branch_[c] = branch;
    };
    mark(st.body, 0);
    mark(st.orelse, 1);
    mark(st.finalbody, 2);
    for (uint32_t h = 0; h < st.handlerCount; ++h) mark(m_.handlers[st.firstHandler + h].body, 3 + static_cast<int32_t>(h));
  }
  // A loop whose body returns, breaks or raises at its top level.
  f_.runsOnce_.assign(ns, false);
  for (NodeId s = 0; s < ns; ++s) {
    StmtKind k = m_.stmt(s).kind;
    NodeId p = m_.stmt(s).parent;
    if ((k == StmtKind::Return || k == StmtKind::Break || k == StmtKind::Raise) && p != kNone && f_.branch_[s] == 0) {
      StmtKind pk = m_.stmt(p).kind;
      if (pk == StmtKind::For || pk == StmtKind::While) f_.runsOnce_[p] = true;
    }
  }
  // Calls a statement runs; those inside a lambda's body expression run wherever the lambda is
  // called, not where it is written. (A C++ lambda's statements are its own.)
  for (NodeId e = 0; e < ne; ++e) {
    const Expr& x = m_.expr(e);
    if (x.kind != ExprKind::Call || x.stmt == kNone) continue;
    if (m_.functions[x.owner].isLambda && m_.stmt(x.stmt).function != x.owner) continue;
    f_.stmtCalls_[x.stmt].push_back(e);
  }
  methodsOf_.assign(nc, {});
  for (const Function& fn : m_.functions) {
    if (fn.isLambda) continue;
    const auto id = static_cast<uint32_t>(&fn - m_.functions.data());
    f_.functionsByName_[fn.name].push_back(id);
    if (fn.cls >= 0 && static_cast<size_t>(fn.cls) < nc) methodsOf_[static_cast<size_t>(fn.cls)].push_back(id);
  }

  // Class families: bases named by a class of this file, both ways.
  f_.classFamily_.assign(nc, {});
  f_.familyRoot_.assign(nc, -1);
  std::unordered_map<std::string_view, int32_t>& byName = f_.classesByName_;
  for (size_t c = 0; c < nc; ++c) byName.emplace(m_.classes[c].name, static_cast<int32_t>(c));
  std::vector<int32_t> parent(nc);
  for (size_t c = 0; c < nc; ++c) parent[c] = static_cast<int32_t>(c);
  auto find = [&](int32_t x) {
    while (parent[static_cast<size_t>(x)] != x) x = parent[static_cast<size_t>(x)] = parent[static_cast<size_t>(parent[static_cast<size_t>(x)])];
    return x;
  };
  for (size_t c = 0; c < nc; ++c)
    for (NodeId b : items(m_, m_.classes[c].bases)) {
      std::string_view last = names::lastComponent(m_.textOf(b));
      auto it = byName.find(last);
      if (it == byName.end() || it->second == static_cast<int32_t>(c)) continue;
      int32_t a = find(static_cast<int32_t>(c)), r = find(it->second);
      if (a != r) parent[static_cast<size_t>(a)] = r;
    }
  for (size_t c = 0; c < nc; ++c) {
    int32_t root = find(static_cast<int32_t>(c));
    f_.familyRoot_[c] = root;
    f_.classFamily_[static_cast<size_t>(root)].push_back(static_cast<int32_t>(c));
  }
  for (size_t c = 0; c < nc; ++c)
    if (f_.familyRoot_[c] != static_cast<int32_t>(c)) f_.classFamily_[c] = f_.classFamily_[static_cast<size_t>(f_.familyRoot_[c])];
}

namespace {


/// `super().method` / `super(Cls, self).method`.
bool isSuperCall(const Module& m, NodeId e) {
  const Expr& x = m.expr(e);
  return x.kind == ExprKind::Call && m.expr(x.lhs).kind == ExprKind::Name && m.expr(x.lhs).text == "super";
}

/// `target` (a loop's target: a name, or a tuple of them) binds `name`.
bool bindsName(const Module& m, NodeId target, std::string_view name) {
  if (target == kNone) return false;
  const Expr& t = m.expr(target);
  if (t.kind == ExprKind::Name) return t.text == name;
  if (t.kind != ExprKind::Container) return false;
  for (const Arg& a : argsOf(m, t))
    if (bindsName(m, a.value, name)) return true;
  return false;
}

/// aliasedFunction's lookup, before loops that rebind the name are ruled out.
uint32_t aliasedIn(const Module& m, const Facts& f, uint32_t caller, std::string_view name,
                   const std::unordered_map<std::string_view, std::vector<uint32_t>>& byName) {
  for (uint32_t g = caller;; g = m.functions[g].parent) {
    const Function& fun = m.functions[g];
    for (uint32_t i = 0; i < fun.paramCount; ++i)
      if (m.params[fun.firstParam + i].name == name) return 0;
    const std::vector<NodeId>& binds = f.assignmentsOf(g, name);
    if (binds.size() > 1) return 0;
    if (binds.size() == 1) {
      const Stmt& st = m.stmt(binds[0]);
      if (st.kind != StmtKind::Assign || st.value == kNone) return 0;
      const Expr& v = m.expr(st.value);
      if (v.kind == ExprKind::Lambda) return v.function;
      if (v.kind != ExprKind::Name || v.canonical != 0 || v.text == name) return 0;
      auto it = byName.find(v.text);
      if (it == byName.end() || it->second.size() != 1) return 0;
      uint32_t d = it->second.front();
      if (m.functions[d].cls >= 0) return 0;
      for (uint32_t p = caller;; p = m.functions[p].parent) {  // visible where it is called
        if (m.functions[d].parent == p) return d;
        if (p == 0) return 0;
      }
    }
    if (g == 0) return 0;
  }
}

/// The function a plain name denotes where `caller` calls it through a local name bound once: a
/// lambda (`auto step = [&](...) {...};`, `step = lambda b: ...`) or another name for a function
/// of this file (`step = train_step`), in the innermost scope that binds the name. 0 when the name
/// is bound several times, to anything else, is a parameter there, or is a loop's target in a
/// scope on the way (`for step in steps: step(x)`).
uint32_t aliasedFunction(const Module& m, const Facts& f, uint32_t caller, std::string_view name,
                         const std::unordered_map<std::string_view, std::vector<uint32_t>>& byName) {
  uint32_t d = aliasedIn(m, f, caller, name, byName);
  for (uint32_t g = caller; d != 0; g = m.functions[g].parent) {
    for (NodeId s : f.statementsOf(g))
      if (m.stmt(s).kind == StmtKind::For && bindsName(m, m.stmt(s).target, name)) return 0;
    if (g == 0 || !f.assignmentsOf(g, name).empty()) break;
  }
  return d;
}

}  // namespace

void FactsBuilder::resolveCallTargets() {
  callSites_.assign(m_.functions.size(), {});
  f_.callTargetStart_.assign(m_.exprs.size() + 1, 0);
  f_.callTargetIds_.clear();
  auto methodsNamed = [&](int32_t cls, std::string_view name, std::vector<uint32_t>& out) {
    if (cls < 0) return;
    // The family's methods called `name` (each class is in it once), in definition order, at most six.
    const size_t from = out.size();
    for (int32_t c : f_.classFamily_[static_cast<size_t>(cls)])
      for (uint32_t fn : methodsOf_[static_cast<size_t>(c)])
        if (m_.functions[fn].name == name) out.push_back(fn);
    std::sort(out.begin() + static_cast<std::ptrdiff_t>(from), out.end());
    if (out.size() > 6) out.resize(6);
  };
  bool anyForward = false;  // a class of this file defines `forward`: calls of its instances run it
  for (const Function& fn : m_.functions)
    if (fn.cls >= 0 && fn.name == "forward") anyForward = true;
  for (NodeId e = 0; e < m_.exprs.size(); ++e) {
    f_.callTargetStart_[e] = static_cast<uint32_t>(f_.callTargetIds_.size());
    const Expr& c = m_.expr(e);
    if (c.kind != ExprKind::Call || c.stmt == kNone || c.lhs == kNone) continue;
    const Expr& callee = m_.expr(c.lhs);
    std::vector<uint32_t> out;
    uint32_t caller = functionOf(c.stmt);
    if (callee.kind == ExprKind::Name && callee.canonical == 0) {
      auto it = f_.functionsByName_.find(callee.text);
      if (it != f_.functionsByName_.end()) {
        // A name defined many times resolves to its last definition (what Python would call
        // after the module ran); a few alternatives (if/else definitions) are all kept. Nested
        // definitions count only inside the function that defines them.
        const std::vector<uint32_t>& defs = it->second;
        for (uint32_t d : defs) {
          const Function& df = m_.functions[d];
          if (df.cls >= 0) continue;
          bool visible = df.parent == 0;
          for (uint32_t p = caller; !visible && p != 0; p = m_.functions[p].parent)
            if (df.parent == p) visible = true;
          if (visible) out.push_back(d);
        }
        if (out.size() > 4) out.erase(out.begin(), out.end() - 1);
      }
      if (out.empty())
        if (uint32_t d = aliasedFunction(m_, f_, caller, callee.text, f_.functionsByName_); d != 0) out.push_back(d);
      // `Cls(...)` runs Cls.__init__; a module class's instance call runs its forward elsewhere.
    } else if (callee.kind == ExprKind::Attribute && callee.lhs != kNone) {
      NodeId base = callee.lhs;
      if (isSelfName(m_, base)) {
        methodsNamed(f_.classOfFunction(caller), callee.text, out);
      } else if (isSuperCall(m_, base)) {
        methodsNamed(f_.classOfFunction(caller), callee.text, out);
        out.erase(std::remove_if(out.begin(), out.end(), [&](uint32_t t) { return m_.functions[t].cls == f_.classOfFunction(caller); }),
                  out.end());
      } else if (kindsFinal_) {
        int32_t cls = f_.classOf(base);
        if (cls >= 0) methodsNamed(cls, callee.text, out);
      }
    }
    // A module instance of a class of this file: `net(x)` runs its forward.
    if (out.empty() && kindsFinal_ && anyForward && f_.isForwardCall(e)) {
      NodeId mod = callee.kind == ExprKind::Attribute && callee.text == "forward" ? callee.lhs : c.lhs;
      int32_t cls = f_.classOf(mod);
      if (cls >= 0) methodsNamed(cls, "forward", out);
    }
    // An instance of a plain class of this file: `unit(batch)` runs its `__call__`.
    if (out.empty() && kindsFinal_ && (callee.kind == ExprKind::Name || callee.kind == ExprKind::Attribute) &&
        f_.kindOf(c.lhs) == Kind::Instance)
      methodsNamed(f_.classOf(c.lhs), "__call__", out);
    if (out.empty()) continue;
    for (uint32_t t : out) callSites_[t].push_back(e);
    f_.callTargetIds_.insert(f_.callTargetIds_.end(), out.begin(), out.end());
  }
  f_.callTargetStart_[m_.exprs.size()] = static_cast<uint32_t>(f_.callTargetIds_.size());
}

// ------------------------------------------------------------------ queries

bool Facts::within(NodeId inner, NodeId outer) const {
  if (inner == kNone || outer == kNone) return inner == outer && inner != kNone;
  uint32_t fn = m_.stmt(outer).function;
  if (m_.stmt(inner).function == fn && preorder_[fn])
    return posInFn_[inner] >= posInFn_[outer] && posInFn_[inner] < endInFn_[outer];
  for (NodeId p = inner; p != kNone; p = m_.stmt(p).parent)
    if (p == outer) return true;
  return false;
}

std::span<const NodeId> Facts::statementsWithin(NodeId stmt) const {
  uint32_t fn = m_.stmt(stmt).function;
  const std::vector<NodeId>& list = fnStmts_[fn];
  if (preorder_[fn]) return {list.data() + posInFn_[stmt], endInFn_[stmt] - posInFn_[stmt]};
  auto [it, fresh] = nestedLists_.try_emplace(stmt);
  if (fresh)
    for (NodeId s : list)
      if (within(s, stmt)) it->second.push_back(s);
  return it->second;
}


bool Facts::exclusive(NodeId a, NodeId b) const {
  if (a == kNone || b == kNone || a == b) return false;
  // Climb both to the same depth, then together to the lowest common parent.
  NodeId x = a, y = b;
  while (depth_[x] > depth_[y]) x = m_.stmt(x).parent;
  while (depth_[y] > depth_[x]) y = m_.stmt(y).parent;
  if (x == y) return false;  // one contains the other
  NodeId px = m_.stmt(x).parent, py = m_.stmt(y).parent;
  while (px != py) {
    x = px;
    y = py;
    px = m_.stmt(x).parent;
    py = m_.stmt(y).parent;
  }
  if (px == kNone) return false;
  if (m_.stmt(px).kind != StmtKind::If) return false;
  int bx = branch_[x], by = branch_[y];
  return bx >= 0 && by >= 0 && bx != by;
}

bool Facts::mayPrecede(NodeId a, NodeId b) const {
  if (a == kNone || b == kNone) return false;
  return m_.stmt(a).span.begin < m_.stmt(b).span.begin && !within(b, a) && !exclusive(a, b);
}

bool Facts::dominates(NodeId a, NodeId b) const {
  if (a == kNone || b == kNone || a == b) return false;
  if (m_.stmt(a).span.begin >= m_.stmt(b).span.begin) return false;
  // `a` must sit directly in a block that also (transitively) holds `b`, and that block must not
  // be one a loop or branch skips: every statement between `a`'s parent and `b` encloses `b`.
  NodeId pa = m_.stmt(a).parent;
  if (pa == kNone) return m_.stmt(a).function == m_.stmt(b).function;
  if (!within(b, pa)) return false;
  // `b`'s ancestor directly under `a`'s parent must sit in the same list as `a` (not the other
  // branch of an if, not a handler of the try whose body holds `a`).
  NodeId y = b;
  while (m_.stmt(y).parent != pa) y = m_.stmt(y).parent;
  return branch_[a] == branch_[y];
}

std::string_view Facts::pathKey(NodeId e) const {
  if (e == kNone) return {};
  const Expr& x = m_.expr(e);
  if (x.kind == ExprKind::Name) return x.text;
  if (x.kind != ExprKind::Attribute) return {};
  if (m_.lang == Lang::Cpp) return cppKeys_[e];
  // Asked of the same attributes by every pass: worked out once.
  if (pathDone_.empty()) {
    pathDone_.assign(m_.exprs.size(), false);
    pathKeys_.assign(m_.exprs.size(), {});
  }
  if (pathDone_[e]) return pathKeys_[e];
  pathDone_[e] = true;
  // The source text of a plain dotted chain is its own key (no spaces, no calls).
  for (NodeId p = x.lhs; p != kNone; p = m_.expr(p).lhs) {
    const Expr& px = m_.expr(p);
    if (px.kind == ExprKind::Name) break;
    if (px.kind != ExprKind::Attribute) return {};
  }
  std::string_view t = m_.textOf(e);
  for (char c : t)
    if (c == ' ' || c == '\n' || c == '\t' || c == '\\' || c == '(' || c == '#') return {};
  return pathKeys_[e] = t;
}

std::span<const uint32_t> Facts::callTargets(NodeId call) const {
  if (static_cast<size_t>(call) + 1 >= callTargetStart_.size()) return {};
  // While resolveCallTargets() fills the array, the calls it has not reached yet have no targets
  // (their end is still 0), as when nothing is resolved.
  uint32_t begin = callTargetStart_[call], end = callTargetStart_[call + 1];
  if (end <= begin) return {};
  return std::span<const uint32_t>(callTargetIds_).subspan(begin, end - begin);
}

int32_t Facts::classOfFunction(uint32_t fn) const {
  // A nested function inside a method still sees `self` of that class.
  for (int guard = 0; guard < 64; ++guard) {
    if (m_.functions[fn].cls >= 0) return m_.functions[fn].cls;
    if (fn == 0) return -1;
    fn = m_.functions[fn].parent;
  }
  return -1;
}

uint32_t Facts::functionDenoted(NodeId e) const {
  if (e == kNone) return UINT32_MAX;
  const Expr& x = m_.expr(e);
  if (x.kind == ExprKind::Lambda) return x.function;
  uint32_t caller = x.stmt == kNone ? 0 : m_.stmt(x.stmt).function;
  auto byName = [&](std::string_view name, int32_t cls) -> uint32_t {
    auto it = functionsByName_.find(name);
    if (it == functionsByName_.end()) return UINT32_MAX;
    for (uint32_t fn : it->second) {
      int32_t c = m_.functions[fn].cls;
      if (cls < 0 ? c < 0 : (c >= 0 && familyRoot_[static_cast<size_t>(c)] == familyRoot_[static_cast<size_t>(cls)])) return fn;
    }
    return UINT32_MAX;
  };
  if (x.kind == ExprKind::Name && x.canonical == 0) {
    uint32_t fn = byName(x.text, -1);
    if (fn != UINT32_MAX) return fn;
    // An instance of a class of this file stands for its `__call__` (`SaveOutput()` as a hook).
    int32_t cls = classOf(e);
    return cls >= 0 ? byName("__call__", cls) : UINT32_MAX;
  }
  if (x.kind == ExprKind::Attribute && isSelfName(m_, x.lhs))
    return byName(x.text, classOfFunction(caller));
  if (x.kind == ExprKind::Attribute) {
    int32_t cls = classOf(x.lhs);  // `recorder.save` on an instance of a class of this file
    if (cls >= 0) return byName(x.text, cls);
  }
  return UINT32_MAX;
}

std::vector<uint32_t> Facts::methodsTaking(std::string_view name, uint32_t params) const {
  std::vector<uint32_t> out;
  auto it = functionsByName_.find(name);
  if (it == functionsByName_.end()) return out;
  for (uint32_t fn : it->second) {
    const Function& func = m_.functions[fn];
    if (func.cls < 0 || isModuleClass(func.cls) || func.paramCount != params + 1) continue;
    if (m_.params[func.firstParam].name != "self") continue;  // a static or class method
    out.push_back(fn);
  }
  return out;
}

bool Facts::mentionsPath(NodeId e, std::string_view path) const {
  if (path.empty()) return false;
  bool found = false;
  forSubtree(e, [&](NodeId x) {
    if (found) return;
    ExprKind k = m_.expr(x).kind;
    if (k != ExprKind::Name && k != ExprKind::Attribute) return;
    std::string_view p = pathKey(x);
    if (p == path || (p.size() > path.size() && p.substr(0, path.size()) == path && p[path.size()] == '.')) found = true;
  });
  return found;
}

Span Facts::firstLine(Span s) const {
  if (s.endLine != s.line && s.line >= 1 && s.line <= m_.lineStarts.size()) {
    std::string_view text = m_.lineText(s.line);
    size_t n = text.size();
    while (n > 0 && (text[n - 1] == ' ' || text[n - 1] == '\t')) --n;
    s.endLine = s.line;
    s.endCol = static_cast<uint32_t>(n);
    s.end = m_.lineStarts[s.line - 1] + static_cast<uint32_t>(n);
  }
  return s;
}

bool Facts::inHandler(NodeId stmt, NodeId outer) const {
  for (NodeId c = stmt, p = m_.stmt(stmt).parent; p != kNone && c != outer; c = p, p = m_.stmt(p).parent) {
    if (m_.stmt(p).kind == StmtKind::Try && branch_[c] >= 3) return true;
    if (p == outer) break;
  }
  return false;
}

std::span<const StepEvent> Facts::eventsWithin(NodeId stmt) const {
  uint32_t fn = m_.stmt(stmt).function;
  const std::vector<StepEvent>& all = events_[fn];
  if (!preorder_[fn]) return all;
  auto first = std::lower_bound(all.begin(), all.end(), posInFn_[stmt],
                                [&](const StepEvent& e, uint32_t pos) { return posInFn_[e.stmt] < pos; });
  auto last = std::lower_bound(first, all.end(), endInFn_[stmt],
                               [&](const StepEvent& e, uint32_t pos) { return posInFn_[e.stmt] < pos; });
  return {first, last};
}

}  // namespace oomlint
