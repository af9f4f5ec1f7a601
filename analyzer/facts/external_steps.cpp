// What a step that no code of this file runs tells about its callers: the loss object's method, or
// the trainer's update, that a loop in another file calls once per batch. Seen from here only
// through the function itself and the other implementations of the same method in the file.
#include <algorithm>

#include "facts/facts.h"

namespace oomlint {

namespace {

/// Calls that keep their argument in the receiver.
bool storesArgument(std::string_view method) {
  return method == "append" || method == "extend" || method == "insert" || method == "add" || method == "update" ||
         method == "setdefault" || method == "put" || method == "push_back" || method == "emplace_back";
}

}  // namespace

NodeId Facts::externalStepOf(uint32_t fn) const {
  if (fn == 0 || fn >= m_.functions.size()) return kNone;
  const Function& f = m_.functions[fn];
  if (f.isLambda || f.defStmt == kNone || f.name == "forward" || f.name.starts_with("__")) return kNone;
  if (!(summaries_[fn].events & event::kBackward) || frameworkStep(fn) || stepCallOf(fn) != kNone) return kNone;
  if (!namedInCode_) {
    // Every name and attribute the code reads or calls, and the words of its string literals
    // (`getattr(loss, "gen_loss")`): a function named anywhere may be called here.
    namedInCode_ = std::make_unique<std::unordered_set<std::string_view>>();
    for (const Expr& x : m_.exprs)
      if (x.kind == ExprKind::Name || x.kind == ExprKind::Attribute) namedInCode_->insert(x.text);
  }
  if (namedInCode_->count(f.name)) return kNone;
  for (const Expr& x : m_.exprs)
    if (x.kind == ExprKind::String && x.text.find(f.name) != std::string_view::npos) return kNone;
  return f.defStmt;
}

Facts::LetGo Facts::graphsLetGoByCallers(uint32_t fn) const {
  LetGo out;
  if (fn == 0 || fn >= m_.functions.size()) return out;
  const Function& f = m_.functions[fn];
  if (f.cls < 0 || f.isLambda) return out;
  for (uint32_t g = 1; g < m_.functions.size(); ++g) {
    const Function& other = m_.functions[g];
    if (g == fn || other.isLambda || other.cls < 0 || other.cls == f.cls || other.name != f.name) continue;
    uint32_t shared = std::min<uint32_t>({f.paramCount, other.paramCount, 32});
    uint32_t positions = shared == 32 ? ~0u : (1u << shared) - 1;
    for (const StepEvent& e : events(g)) {
      if (e.call == kNone || (!isBackwardCall(e.call) && !isAutogradGradCall(e.call))) continue;
      const Stmt& st = m_.stmt(e.stmt);
      if (st.function != g || st.parent != kNone) continue;  // its own call, on every path
      if (flagArg(e.call, "retain_graph") != Tri::No || flagArg(e.call, "create_graph") != Tri::No) continue;
      NodeId subject = backwardSubject(e.call);
      uint32_t freed = subject == kNone ? 0 : value(subject).params & positions & ~1u;
      if (freed && out.evidence == kNone) out.evidence = e.call;
      out.params |= freed;
    }
  }
  return out;
}

namespace {

bool graphInputsOf(const Facts& f, NodeId e, uint32_t& params, int& budget) {
  const Module& m = f.module();
  if (e == kNone || --budget < 0) return false;
  const ValueFact& v = f.value(e);
  if (v.history == Tri::No || v.leaf) return true;
  const Expr& x = m.expr(e);
  switch (x.kind) {
    case ExprKind::Number:
    case ExprKind::String:
    case ExprKind::Bool:
    case ExprKind::NoneLit: return true;
    case ExprKind::Name: {
      if (!m.canonical(e).empty()) return true;  // an imported name: `torch`, `F`
      std::vector<NodeId> defs;
      f.definitionsOf(e, defs);
      if (defs.empty()) {
        // A parameter of the function, or a name from outside it.
        const Function& fun = m.functions[m.stmt(x.stmt).function];
        for (uint32_t i = 0; i < fun.paramCount && i < 32; ++i)
          if (m.params[fun.firstParam + i].name == x.text) {
            params |= 1u << i;
            return true;
          }
        return false;
      }
      for (NodeId d : defs)
        if (m.stmt(d).kind != StmtKind::Assign || !graphInputsOf(f, m.stmt(d).value, params, budget)) return false;
      return true;
    }
    case ExprKind::Attribute:
      if (isSelfName(m, x.lhs)) {
        Kind k = f.kindOf(e);
        return k == Kind::Module || k == Kind::ModuleCollection || k == Kind::LossFn || k == Kind::Value;
      }
      return graphInputsOf(f, x.lhs, params, budget);
    case ExprKind::Subscript: return graphInputsOf(f, x.lhs, params, budget);
    case ExprKind::Call: {
      // The callable is no graph node: its result is made of its receiver and arguments.
      NodeId recv = m.canonical(e).empty() ? receiverOf(m, e) : kNone;
      if (recv != kNone && !graphInputsOf(f, recv, params, budget)) return false;
      for (const Arg& a : argsOf(m, x))
        if (!graphInputsOf(f, a.value, params, budget)) return false;
      return true;
    }
    case ExprKind::BinOp: return graphInputsOf(f, x.lhs, params, budget) && graphInputsOf(f, x.rhs, params, budget);
    case ExprKind::UnaryOp: return graphInputsOf(f, x.lhs, params, budget);
    case ExprKind::Container:
    case ExprKind::Conditional:
      if (x.kind == ExprKind::Container && shape::isComprehension(x.shape)) return false;
      for (const Arg& a : argsOf(m, x))
        if (!graphInputsOf(f, a.value, params, budget)) return false;
      return true;
    default: return false;
  }
}

}  // namespace

bool Facts::graphInputs(NodeId e, uint32_t& params) const {
  int budget = 128;
  return graphInputsOf(*this, e, params, budget);
}

bool Facts::keepsHistoryPastCall(uint32_t fn) const {
  auto mayCarry = [&](NodeId e) { return e != kNone && value(e).history != Tri::No; };
  // A name the function binds (`loss = ...`, `h, c = ...`) dies with the call; a receiver it reads
  // must have been bound here too (a parameter's list is the caller's).
  auto localTarget = [&](NodeId t) {
    if (m_.expr(t).kind == ExprKind::Name) return true;
    if (m_.expr(t).kind != ExprKind::Container) return false;
    for (const Arg& a : argsOf(m_, m_.expr(t)))
      if (m_.expr(a.value).kind != ExprKind::Name) return false;
    return true;
  };
  auto local = [&](NodeId e) { return e != kNone && m_.expr(e).kind == ExprKind::Name && bindingSite(e) != kNone; };
  for (NodeId s : statementsOf(fn)) {
    const Stmt& st = m_.stmt(s);
    if (st.kind == StmtKind::Return && mayCarry(st.value)) return true;
    if (st.kind == StmtKind::Assign && mayCarry(st.value))
      for (NodeId t : items(m_, st.targets))
        if (!localTarget(t)) return true;
    if (st.kind == StmtKind::AugAssign && mayCarry(st.value) && !localTarget(st.target)) return true;
    for (NodeId c : callsOf(s)) {
      if (!storesArgument(methodName(m_, c)) || local(receiverOf(m_, c))) continue;
      for (const Arg& a : argsOf(m_, m_.expr(c)))
        if (mayCarry(a.value)) return true;
    }
  }
  return false;
}

}  // namespace oomlint
