// Pass 8 (after loop roles), evaluation on a flag's false path: one function that trains or
// evaluates as a boolean parameter says (`def run_epoch(model, loader, is_train)`), with
// `model.eval()` and no update on the path where the flag is false, and a call of this file that
// passes False with autograd on. Its forwards outside the flag's training branches then run an
// evaluation with autograd enabled: the loop's backward is on the other path only.
#include "facts/builder.h"
#include "facts/mode_switch.h"

namespace oomlint {

namespace {

/// Which way an `if` test ties to parameter `p`: +1 for `p` (the body runs when it is true, and
/// `p and x` too), -1 for `not p` (the body runs when it is false), 0 for anything else.
int polarity(const Module& m, NodeId test, std::string_view p) {
  if (test == kNone) return 0;
  const Expr& t = m.expr(test);
  if (t.kind == ExprKind::Name) return t.text == p ? 1 : 0;
  if (t.kind == ExprKind::UnaryOp && (t.text == "not" || t.text == "!") && t.lhs != kNone) {
    const Expr& o = m.expr(t.lhs);
    return o.kind == ExprKind::Name && o.text == p ? -1 : 0;
  }
  if (t.kind == ExprKind::BoolOp && (t.text == "and" || t.text == "&&"))
    for (const Arg& a : argsOf(m, t))
      if (polarity(m, a.value, p) == 1) return 1;  // `p and x` holds only where `p` does
  return 0;
}

}  // namespace

/// +1: `stmt` runs only where parameter `p` is true; -1: only where it is false; 0: either way.
int FactsBuilder::flagSide(NodeId stmt, std::string_view p) const {
  for (NodeId c = stmt, par = m_.stmt(stmt).parent; par != kNone; c = par, par = m_.stmt(par).parent) {
    const Stmt& ps = m_.stmt(par);
    if (ps.kind != StmtKind::If) continue;
    int pol = polarity(m_, ps.value, p);
    if (pol == 0 || f_.branch_[c] > 1) continue;
    // The `else` of `if p and x:` runs where `p` is false or `x` is: either way.
    bool conjunction = m_.expr(ps.value).kind == ExprKind::BoolOp;
    if (f_.branch_[c] == 0) return pol;
    if (!conjunction) return -pol;
  }
  return 0;
}

/// The statement that puts a module in eval mode where `p` is false: `model.eval()` on that side
/// of an `if p`, or `model.train(p)`. kNone when there is none. `path` gets the module's path.
NodeId FactsBuilder::evalWhenFalse(uint32_t fn, std::string_view p, std::string_view& path) const {
  for (NodeId s : f_.fnStmts_[fn]) {
    const Stmt& st = m_.stmt(s);
    if (st.kind != StmtKind::Expr || st.value == kNone || m_.expr(st.value).kind != ExprKind::Call) continue;
    NodeId base = kNone;
    char sw = moduleModeSwitch(m_, st.value, base);
    bool follows = false;  // `model.train(p)`, `model.train(mode=p)`
    if (!sw && methodName(m_, st.value) == "train") {
      NodeId a = positionalArg(m_, st.value, 0);
      if (a == kNone) a = keywordArg(m_, st.value, "mode");
      follows = a != kNone && m_.expr(a).kind == ExprKind::Name && m_.expr(a).text == p;
      base = receiverOf(m_, st.value);
    }
    if (!follows && !(sw == 'e' && flagSide(s, p) == -1)) continue;
    Kind k = f_.kindOf(base);
    if (k != Kind::Module && k != Kind::ModuleCollection) continue;
    path = f_.pathKey(base);
    if (!path.empty()) return s;
  }
  return kNone;
}

/// A call of `fn` in this file that passes a literal False for parameter `i`, with autograd on.
NodeId FactsBuilder::falseFlagCall(uint32_t fn, uint32_t i) const {
  const Function& fun = m_.functions[fn];
  std::string_view p = m_.params[fun.firstParam + i].name;
  for (NodeId call : callSites_[fn]) {
    bool bound = fun.cls >= 0 && m_.expr(m_.expr(call).lhs).kind == ExprKind::Attribute;
    if (bound && i == 0) continue;
    NodeId a = keywordArg(m_, call, p);
    if (a == kNone) a = positionalArg(m_, call, bound ? i - 1 : i);
    if (a == kNone || !isFalseLiteral(m_, a)) continue;
    if (f_.gradMode_[m_.expr(call).stmt] == GradMode::Enabled) return call;
  }
  return kNone;
}

void FactsBuilder::findFlagEvaluations() {
  f_.flagEval_.clear();
  for (uint32_t fn = 1; fn < m_.functions.size(); ++fn) {
    const Function& fun = m_.functions[fn];
    if (fun.isLambda || callSites_[fn].empty()) continue;
    for (uint32_t i = 0; i < fun.paramCount && i < 32; ++i) {
      std::string_view p = m_.params[fun.firstParam + i].name;
      std::string_view path;
      NodeId opener = evalWhenFalse(fn, p, path);
      if (opener == kNone) continue;
      // Every update of the function, its own or a helper's, runs only where the flag is true.
      bool updatesOnlyWhenTrue = true;
      for (const StepEvent& e : f_.events(fn))
        if ((e.kind & event::kUpdate) && flagSide(e.stmt, p) != 1) updatesOnlyWhenTrue = false;
      if (!updatesOnlyWhenTrue) continue;
      NodeId site = falseFlagCall(fn, i);
      if (site == kNone) continue;
      for (NodeId s : f_.fnStmts_[fn]) {
        if (f_.gradMode_[s] != GradMode::Enabled || flagSide(s, p) == 1) continue;
        if (m_.stmt(s).span.begin < m_.stmt(opener).span.begin) continue;
        for (NodeId c : f_.stmtCalls_[s]) {
          if (!f_.isForwardCall(c) || f_.evalOpener_.count(c)) continue;
          std::string_view receiver = f_.forwardReceiverPath(c);
          bool under = receiver == path || (receiver.size() > path.size() && receiver.substr(0, path.size()) == path &&
                                            receiver[path.size()] == '.');
          if (under) f_.flagEval_.emplace(c, Facts::FlagEval{opener, site, i});
        }
      }
    }
  }
}

const Facts::FlagEval* Facts::flagEvaluation(NodeId call) const {
  auto it = flagEval_.find(call);
  return it == flagEval_.end() ? nullptr : &it->second;
}

}  // namespace oomlint
