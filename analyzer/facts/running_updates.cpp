// Running updates: an assignment whose value adds to what its target held (`total = total +
// loss`, `ema = 0.9 * ema + 0.1 * x`). Read by the accumulation rules and by the summaries that
// tell callers a method sums its argument into its object.
#include "facts/facts.h"

namespace oomlint {

namespace {

/// Facts::runningUpdate over any notion of "reads the target" (`isTarget`).
template <class IsTarget>
NodeId runningUpdateOf(const Module& m, NodeId value, const IsTarget& isTarget, std::vector<NodeId>* terms, bool* average) {
  if (value == kNone) return kNone;
  const Expr& v = m.expr(value);
  // `avg = loss if avg is None else 0.98 * avg + 0.02 * loss`: the arm that updates.
  if (v.kind == ExprKind::Conditional && v.argCount == 3) {
    NodeId r = runningUpdateOf(m, m.args[v.firstArg].value, isTarget, terms, average);
    return r != kNone ? r : runningUpdateOf(m, m.args[v.firstArg + 2].value, isTarget, terms, average);
  }
  if (v.kind != ExprKind::BinOp || (v.text != "+" && v.text != "-")) return kNone;
  // `total = total + rec + kld`: more terms added after the update, left to right.
  if (const Expr& inner = m.expr(v.lhs); inner.kind == ExprKind::BinOp && (inner.text == "+" || inner.text == "-")) {
    if (NodeId r = runningUpdateOf(m, v.lhs, isTarget, terms, average); r != kNone) {
      if (terms) terms->push_back(v.rhs);
      return r;
    }
  }
  // The read of the target in a term: the term itself, or a factor of a product (`0.9 * key`).
  auto readIn = [&](NodeId term) -> NodeId {
    if (isTarget(term)) return term;
    const Expr& t = m.expr(term);
    if (t.kind != ExprKind::BinOp || t.text != "*") return kNone;
    if (isTarget(t.lhs)) return t.lhs;
    if (isTarget(t.rhs)) return t.rhs;
    return kNone;
  };
  NodeId r = readIn(v.lhs), added = v.rhs;
  if (r == kNone && v.text == "+") {
    r = readIn(v.rhs);
    added = v.lhs;
  }
  if (r == kNone) return kNone;
  if (terms) terms->push_back(added);
  if (average) *average = r != v.lhs && r != v.rhs;
  return r;
}

/// An index that names one entry whenever it is evaluated: a constant or a plain name, seen
/// through C++'s implicit conversion of a literal key (`m["cls"]` builds a std::string). kNone
/// for anything else.
NodeId plainIndex(const Module& m, NodeId e) {
  const Expr& x = m.expr(e);
  if (x.kind == ExprKind::Call && x.argCount == 1 && m.textOf(e) == m.textOf(m.args[x.firstArg].value))
    return plainIndex(m, m.args[x.firstArg].value);
  bool plain = x.kind == ExprKind::String || x.kind == ExprKind::Number || x.kind == ExprKind::Name;
  return plain ? e : kNone;
}

}  // namespace

NodeId Facts::runningUpdate(NodeId value, std::string_view key, std::vector<NodeId>* terms, bool* average) const {
  if (key.empty()) return kNone;
  return runningUpdateOf(m_, value, [&](NodeId e) { return pathKey(e) == key; }, terms, average);
}

NodeId Facts::runningUpdate(NodeId value, NodeId target, std::vector<NodeId>* terms, bool* average) const {
  if (target == kNone) return kNone;
  return runningUpdateOf(m_, value, [&](NodeId e) { return sameEntry(e, target); }, terms, average);
}

bool Facts::sameEntry(NodeId a, NodeId b) const {
  if (a == kNone || b == kNone) return false;
  std::string_view pa = pathKey(a);
  if (!pa.empty()) return pa == pathKey(b);
  const Expr& x = m_.expr(a);
  const Expr& y = m_.expr(b);
  if (x.kind != ExprKind::Subscript || y.kind != ExprKind::Subscript || x.rhs == kNone || y.rhs == kNone || !sameEntry(x.lhs, y.lhs))
    return false;
  // The same index: one constant (`"cls"`, `0`) or one name.
  NodeId i = plainIndex(m_, x.rhs), j = plainIndex(m_, y.rhs);
  return i != kNone && j != kNone && m_.expr(i).kind == m_.expr(j).kind && m_.textOf(i) == m_.textOf(j);
}

}  // namespace oomlint
