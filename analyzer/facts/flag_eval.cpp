// Pass 8 (after loop roles), evaluation on a flag's path: code that trains or evaluates as a
// variable says, with the variable known on one path. Either a parameter that a call of this
// file sets to a literal with autograd on (`run_epoch(model, loader, is_train=False)`), or the
// target of a loop over literals (`for phase in ["train", "val"]:`). Where that value puts a
// module in eval mode (`model.eval()` under a test of the variable, `model.train(is_train)`) and
// leaves every update out (`if is_train: loss.backward()`), the forwards that still run there
// with autograd on are an evaluation with autograd enabled.
#include <algorithm>

#include "facts/builder.h"
#include "facts/mode_switch.h"
#include "facts/names.h"

namespace oomlint {

namespace {

/// A literal the variable is given: `False`, `"val"`, `0`, `None`.
bool isLiteral(const Module& m, NodeId e) {
  if (e == kNone) return false;
  ExprKind k = m.expr(e).kind;
  return k == ExprKind::Bool || k == ExprKind::String || k == ExprKind::Number || k == ExprKind::NoneLit;
}

/// The literal's truth: +1 true, -1 false.
int truthOf(const Module& m, NodeId lit) {
  const Expr& x = m.expr(lit);
  switch (x.kind) {
    case ExprKind::Bool: return x.text == "True" || x.text == "true" ? 1 : -1;
    case ExprKind::NoneLit: return -1;
    case ExprKind::Number: return x.text == "0" || x.text == "0.0" ? -1 : 1;
    case ExprKind::String: return stringContents(x.text).empty() ? -1 : 1;
    default: return 0;
  }
}

bool sameLiteral(const Module& m, NodeId a, NodeId b) {
  const Expr& x = m.expr(a);
  const Expr& y = m.expr(b);
  if (x.kind != y.kind) return false;
  return x.kind == ExprKind::String ? stringContents(x.text) == stringContents(y.text) : x.text == y.text;
}

}  // namespace

/// What a test comes to where variable `var` holds literal `value`: +1 true, -1 false, 0 unknown.
/// Reads `var`, `not var`, `var == "train"`, `var != "val"`, `var in ("train", "finetune")`,
/// `var is False`, and `and` / `or` of those.
int FactsBuilder::testUnder(NodeId test, std::string_view var, NodeId value) const {
  if (test == kNone) return 0;
  const Expr& t = m_.expr(test);
  switch (t.kind) {
    case ExprKind::Name: return t.text == var ? truthOf(m_, value) : 0;
    case ExprKind::UnaryOp: return (t.text == "not" || t.text == "!") ? -testUnder(t.lhs, var, value) : 0;
    case ExprKind::BoolOp: {
      bool conj = t.text == "and" || t.text == "&&";
      int out = conj ? 1 : -1;
      for (const Arg& a : argsOf(m_, t)) {
        int v = testUnder(a.value, var, value);
        if (v == -out) return v;  // a false operand decides `and`, a true one `or`
        if (v == 0) out = 0;
      }
      return out;
    }
    case ExprKind::Compare: {
      if (t.argCount != 2) return 0;
      NodeId l = m_.args[t.firstArg].value, r = m_.args[t.firstArg + 1].value;
      if (m_.expr(r).kind == ExprKind::Name && m_.expr(r).text == var) std::swap(l, r);
      if (m_.expr(l).kind != ExprKind::Name || m_.expr(l).text != var) return 0;
      if (t.text == "in") {
        if (m_.expr(r).kind != ExprKind::Container) return 0;
        for (const Arg& a : argsOf(m_, m_.expr(r)))
          if (!isLiteral(m_, a.value)) return 0;
        for (const Arg& a : argsOf(m_, m_.expr(r)))
          if (sameLiteral(m_, a.value, value)) return 1;
        return -1;
      }
      if (!isLiteral(m_, r)) return 0;
      bool equal = sameLiteral(m_, r, value);
      if (t.text == "==" || t.text == "is") return equal ? 1 : -1;
      if (t.text == "!=") return equal ? -1 : 1;
      return 0;
    }
    default: return 0;
  }
}

/// Whether `stmt` runs where `var` holds `value`: -1 an enclosing test rules it out, +1 an
/// enclosing test of `var` lets it in, 0 no test of `var` decides.
int FactsBuilder::runsUnder(NodeId stmt, std::string_view var, NodeId value) const {
  int out = 0;
  for (NodeId c = stmt, par = m_.stmt(stmt).parent; par != kNone; c = par, par = m_.stmt(par).parent) {
    const Stmt& ps = m_.stmt(par);
    if (ps.kind != StmtKind::If || f_.branch_[c] > 1) continue;
    int v = testUnder(ps.value, var, value);
    if (v == 0) continue;
    bool inBody = f_.branch_[c] == 0;
    if (inBody != (v == 1)) return -1;
    out = 1;
  }
  return out;
}

/// The statement of `scope` that puts a module in eval mode where `var` holds `value`:
/// `model.eval()` under a test of `var` that lets it in, or `model.train(var)` for a false value.
/// `path` gets the module's path.
NodeId FactsBuilder::evalUnder(std::span<const NodeId> scope, std::string_view var, NodeId value, std::string_view& path) const {
  for (NodeId s : scope) {
    const Stmt& st = m_.stmt(s);
    if (st.kind != StmtKind::Expr || st.value == kNone || m_.expr(st.value).kind != ExprKind::Call) continue;
    NodeId base = kNone;
    char sw = moduleModeSwitch(m_, st.value, base);
    bool follows = false;  // `model.train(var)`, `model.train(mode=var)`
    if (!sw && methodName(m_, st.value) == "train" && truthOf(m_, value) == -1) {
      NodeId a = positionalArg(m_, st.value, 0);
      if (a == kNone) a = keywordArg(m_, st.value, "mode");
      follows = a != kNone && m_.expr(a).kind == ExprKind::Name && m_.expr(a).text == var;
      base = receiverOf(m_, st.value);
    }
    if (!(follows && runsUnder(s, var, value) >= 0) && !(sw == 'e' && runsUnder(s, var, value) == 1)) continue;
    Kind k = f_.kindOf(base);
    if (k != Kind::Module && k != Kind::ModuleCollection) continue;
    path = f_.pathKey(base);
    if (!path.empty()) return s;
  }
  return kNone;
}

void FactsBuilder::markFlagEvaluation(uint32_t fn, NodeId loop, std::string_view var, NodeId value, NodeId site) {
  std::span<const NodeId> scope = loop == kNone ? std::span<const NodeId>(f_.fnStmts_[fn]) : f_.statementsWithin(loop);
  std::string_view path;
  NodeId opener = evalUnder(scope, var, value, path);
  if (opener == kNone) return;
  // No update of the scope (the function, or the loop's body), its own or a helper's, runs there.
  for (const StepEvent& e : f_.events(fn))
    if ((e.kind & event::kUpdate) && (loop == kNone || f_.within(e.stmt, loop)) && runsUnder(e.stmt, var, value) >= 0) return;
  for (NodeId s : scope) {
    if (f_.gradMode_[s] != GradMode::Enabled || m_.stmt(s).span.begin < m_.stmt(opener).span.begin) continue;
    if (runsUnder(s, var, value) < 0) continue;
    for (NodeId c : f_.stmtCalls_[s]) {
      if (!f_.isForwardCall(c) || f_.evalOpener_.count(c) || f_.flagEval_.count(c)) continue;
      if (names::extendsPath(f_.forwardReceiverPath(c), path)) f_.flagEval_.emplace(c, Facts::FlagEval{opener, site, var, value, loop != kNone});
    }
  }
}

void FactsBuilder::findFlagEvaluations() {
  f_.flagEval_.clear();
  for (uint32_t fn = 1; fn < m_.functions.size(); ++fn) {
    const Function& fun = m_.functions[fn];
    if (fun.isLambda || f_.fnStmts_[fn].empty()) continue;
    // Parameters a call of this file sets to a literal, with autograd on there; each value once
    // (a helper called a hundred times with `False` is read once).
    std::vector<std::pair<uint32_t, NodeId>> seen;  // parameter, literal
    for (NodeId call : callSites_[fn]) {
      if (f_.gradMode_[m_.expr(call).stmt] != GradMode::Enabled) continue;
      bool bound = fun.cls >= 0 && m_.expr(m_.expr(call).lhs).kind == ExprKind::Attribute;
      for (uint32_t i = bound ? 1 : 0; i < fun.paramCount; ++i) {
        std::string_view p = m_.params[fun.firstParam + i].name;
        NodeId a = keywordArg(m_, call, p);
        if (a == kNone) a = positionalArg(m_, call, bound ? i - 1 : i);
        if (!isLiteral(m_, a) || std::any_of(seen.begin(), seen.end(), [&](const auto& v) { return v.first == i && sameLiteral(m_, v.second, a); }))
          continue;
        seen.emplace_back(i, a);
        markFlagEvaluation(fn, kNone, p, a, call);
      }
    }
    // Loops over literals: each value is one pass of the body.
    for (NodeId s : f_.fnStmts_[fn]) {
      const Stmt& st = m_.stmt(s);
      if (st.kind != StmtKind::For || st.value == kNone || st.target == kNone || m_.expr(st.target).kind != ExprKind::Name) continue;
      const Expr& it = m_.expr(st.value);
      if (it.kind != ExprKind::Container || shape::isComprehension(it.shape)) continue;
      for (const Arg& a : argsOf(m_, it))
        if (isLiteral(m_, a.value)) markFlagEvaluation(fn, s, m_.expr(st.target).text, a.value, s);
    }
  }
}

const Facts::FlagEval* Facts::flagEvaluation(NodeId call) const {
  auto it = flagEval_.find(call);
  return it == flagEval_.end() ? nullptr : &it->second;
}

}  // namespace oomlint
