// Running updates: an assignment whose value adds to what its target held (`total = total +
// loss`, `ema = 0.9 * ema + 0.1 * x`). Read by the accumulation rules and by the summaries that
// tell callers a method sums its argument into its object.
#include "facts/facts.h"

namespace oomlint {

NodeId Facts::runningUpdate(NodeId value, std::string_view key, std::vector<NodeId>* terms, bool* average) const {
  if (value == kNone || key.empty()) return kNone;
  const Expr& v = m_.expr(value);
  // `avg = loss if avg is None else 0.98 * avg + 0.02 * loss`: the arm that updates.
  if (v.kind == ExprKind::Conditional && v.argCount == 3) {
    NodeId r = runningUpdate(m_.args[v.firstArg].value, key, terms, average);
    return r != kNone ? r : runningUpdate(m_.args[v.firstArg + 2].value, key, terms, average);
  }
  if (v.kind != ExprKind::BinOp || (v.text != "+" && v.text != "-")) return kNone;
  // `total = total + rec + kld`: more terms added after the update, left to right.
  if (const Expr& inner = m_.expr(v.lhs); inner.kind == ExprKind::BinOp && (inner.text == "+" || inner.text == "-")) {
    if (NodeId r = runningUpdate(v.lhs, key, terms, average); r != kNone) {
      if (terms) terms->push_back(v.rhs);
      return r;
    }
  }
  // The read of `key` in a term: the term itself, or a factor of a product (`0.9 * key`).
  auto readIn = [&](NodeId term) -> NodeId {
    if (pathKey(term) == key) return term;
    const Expr& t = m_.expr(term);
    if (t.kind != ExprKind::BinOp || t.text != "*") return kNone;
    if (pathKey(t.lhs) == key) return t.lhs;
    if (pathKey(t.rhs) == key) return t.rhs;
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

}  // namespace oomlint
