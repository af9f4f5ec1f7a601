// Queries: a slot that a later statement of the same iteration empties. `state["out"] = out`
// followed by `state["out"] = None` (or `del state["out"]`, `self.last = None`) keeps nothing
// past the iteration, however long `state` lives.
#include "facts/builder.h"

namespace oomlint {

namespace {

/// The statements of the list that holds `s` (its parent's body, branch or handler, or its
/// function's body).
List siblingsOf(const Module& m, const std::vector<int32_t>& branch, NodeId s) {
  const Stmt& st = m.stmt(s);
  if (st.parent == kNone) return m.functions[st.function].body;
  const Stmt& p = m.stmt(st.parent);
  switch (branch[s]) {
    case 0: return p.body;
    case 1: return p.orelse;
    case 2: return p.finalbody;
    default: {
      uint32_t h = static_cast<uint32_t>(branch[s] - 3);
      return h < p.handlerCount ? m.handlers[p.firstHandler + h].body : List{};
    }
  }
}

/// `None`, or C++'s undefined tensor `torch::Tensor()`.
bool emptyValue(const Module& m, NodeId v) {
  const Expr& x = m.expr(v);
  if (x.kind == ExprKind::NoneLit) return true;
  if (x.kind != ExprKind::Call || x.argCount != 0) return false;
  const std::string& canon = m.canonical(v);
  return canon == "torch.Tensor" || canon == "at.Tensor";
}

}  // namespace

bool Facts::sameSlot(NodeId a, NodeId b) const {
  const Expr& x = m_.expr(a);
  const Expr& y = m_.expr(b);
  if (x.kind != y.kind) return false;
  if (x.kind == ExprKind::Name) return x.text == y.text;
  if (x.kind == ExprKind::Attribute) return !pathKey(a).empty() && pathKey(a) == pathKey(b);
  if (x.kind != ExprKind::Subscript || x.rhs == kNone || y.rhs == kNone) return false;
  // `state["out"]` and `state["out"]`: the same container and the same written key.
  std::string_view kx = m_.textOf(x.rhs), ky = m_.textOf(y.rhs);
  return !kx.empty() && kx == ky && !pathKey(x.lhs).empty() && pathKey(x.lhs) == pathKey(y.lhs);
}

bool Facts::clearsSlot(NodeId s, NodeId slot) const {
  const Stmt& st = m_.stmt(s);
  if (st.kind == StmtKind::Delete) {
    for (NodeId t : items(m_, st.targets)) {
      if (sameSlot(t, slot)) return true;
      // `del saved[:]`: the whole container emptied.
      const Expr& d = m_.expr(t);
      if (d.kind == ExprKind::Subscript && d.rhs != kNone && m_.textOf(d.rhs) == ":" && sameSlot(d.lhs, slot)) return true;
    }
    return false;
  }
  // `saved.clear()` (Python and C++).
  if (st.kind == StmtKind::Expr && st.value != kNone && m_.expr(st.value).kind == ExprKind::Call && methodName(m_, st.value) == "clear" &&
      m_.expr(st.value).argCount == 0)
    return receiverOf(m_, st.value) != kNone && sameSlot(receiverOf(m_, st.value), slot);
  if (st.kind != StmtKind::Assign || st.value == kNone) return false;
  const Expr& v = m_.expr(st.value);
  bool emptyList = v.kind == ExprKind::Container && v.argCount == 0 && !shape::isComprehension(v.shape);  // `saved = []`
  if (!emptyList && !emptyValue(m_, st.value)) return false;
  for (NodeId t : items(m_, st.targets))
    if (sameSlot(t, slot)) return true;
  return false;
}

bool Facts::clearedLaterInIteration(NodeId store, NodeId slot, NodeId iteration) const {
  if (iteration == kNone) return false;
  // Later statements of each enclosing list, up to the iteration: every path through the rest
  // of the iteration runs them (an `if` or a loop nested below does not count).
  for (NodeId c = store; c != kNone && c != iteration; c = m_.stmt(c).parent) {
    bool after = false;
    for (NodeId sib : items(m_, siblingsOf(m_, branch_, c))) {
      if (sib == c) {
        after = true;
        continue;
      }
      if (after && clearsSlot(sib, slot)) return true;
    }
  }
  return false;
}

}  // namespace oomlint
