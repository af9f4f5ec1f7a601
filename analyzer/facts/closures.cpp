// Pass 1b, closures run inside a loop's iteration. A function defined inside a loop body and
// called there, or handed to a call there (`optimizer.step(closure)`), runs as part of that
// iteration: its statements belong to the loop as much as the def statement does, and the names
// it reads from the enclosing function are that function's variables.
#include <unordered_map>

#include "facts/builder.h"

namespace oomlint {

namespace {

/// A call that registers its callable argument for later (a hook, a callback list): the
/// function then runs whenever the library decides, not once in this iteration.
bool registersCallable(const Module& m, NodeId call) {
  std::string_view meth = methodName(m, call);
  return meth.starts_with("register") || meth.starts_with("add_") || meth == "append" || meth == "connect";
}

}  // namespace

void FactsBuilder::findInlineClosures() {
  size_t nf = m_.functions.size();
  f_.closureRun_.assign(nf, kNone);
  f_.closuresHandedTo_.clear();
  // Nested defs by (enclosing function, name): defined in a loop of that function, or handed to
  // an optimizer's `step` wherever they are defined (`optimizer.step(closure)` runs the closure
  // each time it is called: LBFGS defines it once, before the loop).
  std::unordered_map<std::string_view, std::vector<uint32_t>> candidates;  // by name: a lookup per reference
  for (uint32_t fn = 1; fn < nf; ++fn) {
    const Function& fun = m_.functions[fn];
    if (fun.isLambda || fun.defStmt == kNone || fun.cls >= 0 || fun.parent == 0) continue;
    if (m_.stmt(fun.defStmt).function != fun.parent) continue;
    candidates[fun.name].push_back(fn);
  }
  if (candidates.empty()) return;
  for (NodeId e = 0; e < m_.exprs.size(); ++e) {
    const Expr& c = m_.expr(e);
    if (c.kind != ExprKind::Call || c.stmt == kNone) continue;
    uint32_t caller = m_.stmt(c.stmt).function;
    // The callee itself (`closure()`), or a plain argument (`optimizer.step(closure)`).
    auto runsHere = [&](NodeId ref, bool called) {
      const Expr& r = m_.expr(ref);
      if (r.kind != ExprKind::Name) return;
      auto named = candidates.find(r.text);
      if (named == candidates.end()) return;
      for (uint32_t fn : named->second) {
        const Function& fun = m_.functions[fn];
        if (fun.parent != caller || f_.closureRun_[fn] != kNone) continue;
        NodeId loop = f_.loopOf_[fun.defStmt];
        bool stepArgument = !called && methodName(m_, e) == "step";
        if (loop == kNone && !stepArgument) continue;
        if ((loop != kNone && !f_.within(c.stmt, loop)) || f_.posInFn_[c.stmt] < f_.posInFn_[fun.defStmt]) continue;
        if (!called && registersCallable(m_, e)) continue;
        f_.closureRun_[fn] = e;
        if (!called) f_.closuresHandedTo_[e].push_back(fn);
      }
    };
    if (c.lhs != kNone) runsHere(c.lhs, true);
    for (const Arg& a : argsOf(m_, c))
      if (a.keyword.empty() || a.keyword == "closure") runsHere(a.value, false);
  }
}

bool Facts::capturedOutlivesIteration(uint32_t reader, std::string_view name, NodeId loop) const {
  uint32_t outer = m_.stmt(loop).function;
  auto local = [&](uint32_t fn) {
    const Function& fun = m_.functions[fn];
    for (uint32_t i = 0; i < fun.paramCount; ++i)
      if (m_.params[fun.firstParam + i].name == name) return true;
    return !assignmentsOf(fn, name).empty();
  };
  // Made afresh by each call of the nested function (or a function between): no longer than it.
  for (uint32_t g = reader; g != outer; g = m_.functions[g].parent)
    if (g == 0 || local(g)) return false;
  // The loop's function: a variable it binds inside the loop is fresh each iteration.
  for (NodeId a : assignmentsOf(outer, name))
    if (within(a, loop)) return false;
  return true;
}

}  // namespace oomlint
