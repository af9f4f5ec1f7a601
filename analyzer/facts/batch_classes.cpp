// Part of pass 5 (kinds), run in each of its rounds. A class whose `__iter__` walks a data loader
// (`return iter(self.loader)`, `return map(self.to_device, self.loader)`, `for b in self.loader:
// yield ...`) is a loader itself: iterating an instance yields batches, so `for batch in
// Prefetcher(loader)` is a data loop. A method that returns its own instance (`return self`, a
// `copy.copy(self)` given another loader) returns a loader too: Summary::returnsLoader, which
// kinds.cpp works out with returnsModule.
#include "facts/builder.h"

namespace oomlint {

namespace {

/// The iterable an `__iter__` hands back: X of `iter(X)`, `map(fn, X)`, `filter(fn, X)`, or the
/// value itself.
NodeId handedBack(const Module& m, NodeId e) {
  for (int guard = 0; guard < 4 && e != kNone && m.expr(e).kind == ExprKind::Call; ++guard) {
    std::string_view f = calleeName(m, e);
    if (f == "iter") e = positionalArg(m, e, 0);
    else if (f == "map" || f == "filter") e = positionalArg(m, e, 1);
    else break;
  }
  return e;
}

/// `copy.copy(x)`, `copy.deepcopy(x)`: the object copied, else kNone.
NodeId copied(const Module& m, NodeId e) {
  if (e == kNone || m.expr(e).kind != ExprKind::Call) return kNone;
  const std::string& c = m.canonical(e);
  return c == "copy.copy" || c == "copy.deepcopy" ? positionalArg(m, e, 0) : kNone;
}

}  // namespace

bool FactsBuilder::walksLoader(uint32_t fn) const {
  for (NodeId s : f_.fnStmts_[fn]) {
    const Stmt& st = m_.stmt(s);
    if (st.kind == StmtKind::Return && st.value != kNone && f_.kindOf(handedBack(m_, st.value)) == Kind::Loader) return true;
  }
  return iteratesLoader(fn);  // a generator over the loader's batches
}

bool FactsBuilder::returnsOwnInstance(uint32_t fn, NodeId e, int depth) const {
  if (e == kNone || depth < 0) return false;
  if (NodeId c = copied(m_, e); c != kNone) return returnsOwnInstance(fn, c, depth - 1);
  const Expr& x = m_.expr(e);
  if (x.kind != ExprKind::Name) return false;
  if (x.text == "self") return true;
  // `other = copy.copy(self)`, then its loader replaced: every assignment of the name in the
  // function is one (def-use is not known yet while kinds are worked out).
  const std::vector<NodeId>& assigns = f_.assignmentsOf(fn, x.text);
  if (assigns.empty()) return false;
  for (NodeId d : assigns) {
    const Stmt& st = m_.stmt(d);
    if (st.kind != StmtKind::Assign || st.targets.count != 1 || st.target == kNone || m_.expr(st.target).kind != ExprKind::Name ||
        !returnsOwnInstance(fn, st.value, depth - 1))
      return false;
  }
  return true;
}

bool FactsBuilder::findBatchClasses() {
  bool changed = false;
  f_.batchClass_.resize(m_.classes.size(), false);
  for (uint32_t fn = 1; fn < m_.functions.size(); ++fn) {
    const Function& func = m_.functions[fn];
    if (func.cls < 0 || func.isLambda || func.name != "__iter__") continue;
    auto c = static_cast<size_t>(func.cls);
    // A module with `__iter__` walks its layers, not batches.
    if (f_.batchClass_[c] || f_.isModuleClass(func.cls) || !walksLoader(fn)) continue;
    f_.batchClass_[c] = changed = true;
  }
  return changed;
}

}  // namespace oomlint
