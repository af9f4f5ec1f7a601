// Pass 5 (between the rounds of values): what backward calls prove. The tensor a backward runs on
// carries history, and so does the value of the assignment that reaches it, back along the data
// (`loss = rec + kl` proves `kl`'s helper call too; `loss = criterion(pred, y)` proves `pred`, the
// loss's input). A function whose parameter is what its backward runs on (`def _backward(self,
// loss, opt): loss.backward()`) proves its callers' argument the same way, through the summaries,
// in this file and from other modules.
#include <map>
#include <set>

#include "facts/builder.h"

namespace oomlint {

/// The names a backward's subject is made of: `loss` in `(loss / k)`, `out` in `out["loss"]`,
/// `loss` in `loss.mean()`, both terms of `rec + kl`, the losses in `sum(losses)`,
/// `torch.stack([a, b])` and `a if c else b`; not the scale factors. A product of two values of
/// unknown history names neither: either one could be the plain number.
void subjectRoots(const Module& m, const std::vector<ValueFact>& values, NodeId e, std::vector<NodeId>& out, int depth) {
  if (e == kNone || depth > 8) return;
  const Expr& x = m.expr(e);
  auto plain = [&](NodeId v) { return m.expr(v).kind == ExprKind::Number || values[v].history == Tri::No; };
  switch (x.kind) {
    case ExprKind::Name: out.push_back(e); break;
    case ExprKind::Attribute:
    case ExprKind::Subscript: out.push_back(e); break;
    case ExprKind::Call: {
      std::string_view meth = methodName(m, e);
      const std::string& canon = m.canonical(e);
      bool gathers = canon == "torch.stack" || canon == "torch.cat" || canon == "torch.sum" || canon == "torch.mean" ||
                     (receiverOf(m, e) == kNone && m.expr(x.lhs).kind == ExprKind::Name && m.expr(x.lhs).text == "sum");
      if (meth == "scale") subjectRoots(m, values, positionalArg(m, e, 0), out, depth + 1);
      else if (gathers) subjectRoots(m, values, positionalArg(m, e, 0), out, depth + 1);
      else if (receiverOf(m, e) != kNone && canon.empty()) subjectRoots(m, values, receiverOf(m, e), out, depth + 1);
      break;
    }
    case ExprKind::BinOp:
      if (x.text == "+" || x.text == "-") {
        subjectRoots(m, values, x.lhs, out, depth + 1);
        subjectRoots(m, values, x.rhs, out, depth + 1);
      } else if (x.text == "/") {
        subjectRoots(m, values, x.lhs, out, depth + 1);
      } else if (x.text == "*") {
        if (plain(x.lhs)) subjectRoots(m, values, x.rhs, out, depth + 1);
        else if (plain(x.rhs)) subjectRoots(m, values, x.lhs, out, depth + 1);
      }
      break;
    case ExprKind::UnaryOp: subjectRoots(m, values, x.lhs, out, depth + 1); break;
    case ExprKind::Conditional:
      if (x.argCount == 3) {
        subjectRoots(m, values, m.args[x.firstArg].value, out, depth + 1);
        subjectRoots(m, values, m.args[x.firstArg + 2].value, out, depth + 1);
      }
      break;
    case ExprKind::Container:
      if (!shape::isComprehension(x.shape))
        for (const Arg& a : argsOf(m, x)) subjectRoots(m, values, a.value, out, depth + 1);
      break;
    default: break;
  }
}


namespace {

/// Index of the parameter of `fn` that the name `e` still holds, history and all (`loss` after
/// `loss *= mul`), or -1.
int heldParameter(const Module& m, const std::vector<ValueFact>& values, uint32_t fn, NodeId e) {
  if (m.expr(e).kind != ExprKind::Name) return -1;
  const Function& fun = m.functions[fn];
  for (uint32_t i = 0; i < fun.paramCount && i < 32; ++i)
    if (m.params[fun.firstParam + i].name == m.expr(e).text) return (values[e].params >> i) & 1u ? static_cast<int>(i) : -1;
  return -1;
}

}  // namespace

void FactsBuilder::computeBackwardParams(std::vector<std::pair<NodeId, NodeId>>& subjects) {
  std::vector<NodeId> roots;
  for (const auto& [c, subject] : subjects) {
    uint32_t fn = functionOf(m_.expr(c).stmt);
    if (fn == 0) continue;
    roots.clear();
    subjectRoots(m_, f_.values_, subject, roots);
    for (NodeId r : roots)
      if (int p = heldParameter(m_, f_.values_, fn, r); p >= 0) f_.summaries_[fn].backwardParams |= 1u << p;
  }
  // Through calls: `def train_step(self, loss): self._backward(loss)` backpropagates its own `loss`.
  std::vector<std::pair<NodeId, Facts::Callee>> calls;
  for (NodeId c = 0; c < m_.exprs.size(); ++c) {
    if (m_.expr(c).kind != ExprKind::Call || m_.expr(c).stmt == kNone) continue;
    if (f_.gradMode_[m_.expr(c).stmt] == GradMode::Disabled) continue;
    Facts::Callee callee = f_.calleeOf(c);
    if (callee) calls.emplace_back(c, std::move(callee));
  }
  for (int round = 0; round < 8; ++round) {
    bool changed = false;
    for (const auto& [c, callee] : calls) {
      uint32_t bits = callee.summary->backwardParams;
      uint32_t fn = functionOf(m_.expr(c).stmt);
      for (uint32_t i = 0; bits && i < callee.params.size() && i < 32; ++i) {
        if (!(bits & (1u << i))) continue;
        NodeId arg = callee.argFor(m_, c, i);
        if (arg == kNone) continue;
        if (fn != 0) {
          int p = heldParameter(m_, f_.values_, fn, arg);
          if (p >= 0 && !(f_.summaries_[fn].backwardParams & (1u << p))) {
            f_.summaries_[fn].backwardParams |= 1u << p;
            changed = true;
          }
        }
        if (round == 0) subjects.emplace_back(c, arg);
      }
    }
    if (!changed) break;
  }
}

/// The assignments of the name `e` reads that branches of its own path make (`if ...: loss = a(x)
/// else: loss = b(x)`), back to one made on the path itself; none in another loop, or behind it.
/// Then the sums into the name after that one (`loss += criterion(seq, y)` in a loop that ends
/// before the reader).
void FactsBuilder::branchDefinitions(NodeId e, std::vector<NodeId>& out) const {
  std::vector<NodeId> defs;
  f_.definitionsOf(e, defs);
  out.clear();
  NodeId reader = m_.expr(e).stmt;
  auto onPath = [&](NodeId s) {  // `s` encloses the reader
    for (NodeId p = m_.stmt(reader).parent; p != kNone; p = m_.stmt(p).parent)
      if (p == s) return true;
    return false;
  };
  uint32_t from = 0;
  for (auto it = defs.rbegin(); it != defs.rend(); ++it) {
    NodeId d = *it;
    bool branch = false, loop = false;
    for (NodeId p = m_.stmt(d).parent; p != kNone && !onPath(p); p = m_.stmt(p).parent) {
      StmtKind k = m_.stmt(p).kind;
      if (k == StmtKind::For || k == StmtKind::While || k == StmtKind::FunctionDef || k == StmtKind::ClassDef) loop = true;
      if (k == StmtKind::If || k == StmtKind::Try) branch = true;
    }
    if (loop) break;  // a loop of its own, before this one: what it left may not reach
    out.push_back(d);
    if (!branch) {  // made on the reader's own path: nothing before it reaches
      from = m_.stmt(d).span.begin;
      break;
    }
  }
  // Back from the reader, in source order, to that assignment or 256 statements: a long function
  // with a backward per block must stay linear.
  std::string_view name = m_.expr(e).text;
  uint32_t to = m_.stmt(reader).span.begin;
  const std::vector<NodeId>& stmts = f_.statementsOf(m_.stmt(reader).function);
  for (uint32_t i = f_.posInFn_[reader], budget = 256; i-- > 0 && budget-- > 0;) {
    const Stmt& st = m_.stmt(stmts[i]);
    if (st.span.begin <= from) break;
    if (st.kind != StmtKind::AugAssign || (st.op != "+=" && st.op != "-=") || st.span.begin >= to) continue;
    if (m_.expr(st.target).kind == ExprKind::Name && m_.expr(st.target).text == name) out.push_back(stmts[i]);
  }
}

void FactsBuilder::frameworkBackwardSubjects(std::vector<std::pair<NodeId, NodeId>>& subjects) const {
  // What a training framework backpropagates after the step: what Lightning's `training_step`
  // returns (the tensor, or the dict whose "loss" it takes), what a Hugging Face Trainer's
  // `compute_loss` returns; not when the module optimises by hand (`automatic_optimization =
  // False`: the framework then ignores the return). The return is its own proof: it is no call.
  // Classes a method of which sets `self.automatic_optimization = False`.
  std::set<int32_t> manual;
  for (uint32_t g = 1; g < m_.functions.size(); ++g) {
    int32_t cls = f_.classOfFunction(g);
    if (cls < 0) continue;
    for (NodeId s : f_.fnStmts_[g]) {
      const Stmt& st = m_.stmt(s);
      if (st.kind == StmtKind::Assign && st.target != kNone && isFalseLiteral(m_, st.value) &&
          f_.pathKey(st.target) == "self.automatic_optimization")
        manual.insert(cls);
    }
  }
  for (uint32_t fn = 1; fn < m_.functions.size(); ++fn) {
    int32_t cls = f_.classOfFunction(fn);
    if (!(f_.frameworkStep(fn) & loop_role::kTraining) || cls < 0 || manual.count(cls)) continue;
    for (NodeId s : f_.fnStmts_[fn]) {
      const Stmt& st = m_.stmt(s);
      if (st.kind == StmtKind::Return && st.value != kNone && f_.gradMode_[s] != GradMode::Disabled) subjects.emplace_back(st.value, st.value);
    }
  }
}

NodeId FactsBuilder::provenLossInput(NodeId call) const {
  if (call == kNone || m_.expr(call).kind != ExprKind::Call || !f_.isLossCall(call)) return kNone;
  for (const Arg& a : argsOf(m_, m_.expr(call)))
    if (a.value != kNone && f_.values_[a.value].history == Tri::Yes) return kNone;  // explained already
  NodeId input = positionalArg(m_, call, 0);
  return input != kNone && f_.values_[input].history == Tri::Unknown ? input : kNone;
}

bool FactsBuilder::collectHistoryEvidence(std::vector<NodeId>& proofs) {
  std::vector<std::pair<NodeId, NodeId>> subjects;  // (the call that proves, the expression it runs on)
  for (NodeId c = 0; c < m_.exprs.size(); ++c) {
    if (m_.expr(c).kind != ExprKind::Call || !(f_.isBackwardCall(c) || f_.isAutogradGradCall(c))) continue;
    if (f_.gradMode_[m_.expr(c).stmt] == GradMode::Disabled) continue;
    subjects.emplace_back(c, f_.backwardSubject(c));
  }
  frameworkBackwardSubjects(subjects);
  computeBackwardParams(subjects);
  bool any = false;
  for (const auto& [c, subject] : subjects) {
    // Back along the data: the assignment that reaches each root, then what its value was
    // computed from (and, through `out["loss"]` / `out.loss`, the value `out` was assigned).
    std::vector<NodeId> work, sites;
    // `compute_loss(x).backward()`, `self._backward(self.g_loss(z))`: the call's own result.
    if (subject != kNone && m_.expr(subject).kind == ExprKind::Call && f_.values_[subject].history == Tri::Unknown) {
      proofs[subject] = c;
      any = true;
    }
    subjectRoots(m_, f_.values_, subject, work);
    // `criterion(pred, y).backward()`: the loss's history comes through its input.
    if (NodeId input = provenLossInput(subject); input != kNone) subjectRoots(m_, f_.values_, input, work);
    size_t direct = work.size();  // the subject's own roots: `out["loss"]` proves `out` through "loss"
    for (int budget = 32; !work.empty() && budget > 0; --budget) {
      NodeId e = work.back();
      work.pop_back();
      std::string_view key = "*";
      if (work.size() < direct) {
        direct = work.size();
        if (m_.expr(e).kind == ExprKind::Subscript && m_.expr(m_.expr(e).lhs).kind == ExprKind::Name)
          if (NodeId r = m_.expr(e).rhs; r != kNone && m_.expr(r).kind == ExprKind::String && !stringContents(m_.expr(r).text).empty())
            key = stringContents(m_.expr(r).text);
      }
      while (m_.expr(e).kind == ExprKind::Attribute || m_.expr(e).kind == ExprKind::Subscript) e = m_.expr(e).lhs;
      if (m_.expr(e).kind != ExprKind::Name) continue;
      // The assignment that reaches it; after branches that assign it differently (`if cfg.tb:
      // loss = tb_loss(x) else: loss = db_loss(x)`), each one: the backward runs on what any of
      // them made.
      sites.clear();
      NodeId reaching = f_.useSite_[e];
      if (reaching == kNone) branchDefinitions(e, sites);
      else if (m_.stmt(reaching).kind == StmtKind::AugAssign) f_.definitionsOf(e, sites);  // `loss += aux` after `loss = ce`
      else sites.push_back(reaching);
      for (NodeId site : sites) {
        const Stmt& st = m_.stmt(site);
        bool sum = st.kind == StmtKind::AugAssign && (st.op == "+=" || st.op == "-=");
        if (st.kind != StmtKind::Assign && !sum) continue;
        if (st.kind == StmtKind::Assign) {
          provenTargets_.insert({site, m_.expr(e).text});
          auto [at, fresh] = entryProof_.try_emplace(site, key);
          if (!fresh && at->second != key) at->second = "*";
          // Of `log, out = step(x)`, the outputs the backward reached are known in the next round.
          if (st.target != kNone && m_.expr(st.target).kind == ExprKind::Container) any = true;
        }
        NodeId v = st.value;
        if (v == kNone || f_.values_[v].history == Tri::No) continue;
        if (f_.values_[v].history == Tri::Unknown) {
          proofs[v] = c;
          any = true;
        }
        subjectRoots(m_, f_.values_, v, work);
        if (NodeId input = provenLossInput(v); input != kNone) subjectRoots(m_, f_.values_, input, work);
      }
    }
  }
  return sameCalleeEvidence(proofs) || any;
}

bool FactsBuilder::sameCalleeEvidence(std::vector<NodeId>& proofs) {
  // The callee as the call spells it, and where the spelling means the same object: the function
  // for a local name or parameter (`criterion`), the class for an attribute of `self`.
  auto scopeOf = [&](NodeId call, std::string_view& key) -> int64_t {
    const Expr& x = m_.expr(call);
    if (x.kind != ExprKind::Call || x.stmt == kNone || !m_.canonical(call).empty()) return -1;
    key = f_.pathKey(x.lhs);
    if (key.empty()) return -1;
    uint32_t fn = functionOf(x.stmt);
    if (m_.expr(x.lhs).kind == ExprKind::Name) return fn == 0 ? -1 : static_cast<int64_t>(fn);
    if (!key.starts_with("self.")) return -1;
    int32_t cls = f_.classOfFunction(fn);
    return cls < 0 ? -1 : (int64_t{1} << 40) + cls;
  };
  std::map<std::pair<int64_t, std::string_view>, NodeId> proven;
  for (NodeId e = 0; e < m_.exprs.size(); ++e) {
    std::string_view key;
    if (proofs[e] == kNone) continue;
    if (int64_t scope = scopeOf(e, key); scope >= 0) proven.emplace(std::make_pair(scope, key), proofs[e]);
  }
  if (proven.empty()) return false;
  // `criterion(out, y)` that a training loop's backward proves a loss is one in the evaluation
  // loop too, where autograd is on and an argument carries history.
  bool any = false;
  for (NodeId c = 0; c < m_.exprs.size(); ++c) {
    std::string_view key;
    int64_t scope = scopeOf(c, key);
    if (scope < 0 || proofs[c] != kNone || f_.values_[c].history != Tri::Unknown) continue;
    if (f_.gradMode_[m_.expr(c).stmt] != GradMode::Enabled) continue;
    auto it = proven.find({scope, key});
    if (it == proven.end()) continue;
    bool historyIn = false;
    for (const Arg& a : argsOf(m_, m_.expr(c)))
      if (a.value != kNone && f_.values_[a.value].history == Tri::Yes) historyIn = true;
    if (!historyIn) continue;
    proofs[c] = it->second;
    lossByCallee_.insert(c);
    any = true;
  }
  return any;
}

}  // namespace oomlint
