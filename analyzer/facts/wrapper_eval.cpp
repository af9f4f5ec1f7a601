// Part of pass 6 (evaluation contexts): inference wrappers. A plain class (no module, no training
// framework) whose `__init__` (or a method it calls, `self._load_model(path)`) puts a module it keeps in eval mode (`self.model =
// AutoModel.from_pretrained(name)` then `self.model.eval()`, or `model.eval()` then `self.mdl =
// model`), and that never trains it, serves predictions: each of its methods runs that module in
// eval mode, whatever the method is called (`get_image_embeddings`, `encode`, `__call__`).
#include <algorithm>

#include "facts/builder.h"
#include "facts/mode_switch.h"
#include "facts/torch_api.h"

namespace oomlint {

namespace {

/// `self.P = X` among `stmts` after position `from`: the attribute expression, or kNone.
NodeId keptAs(const Module& m, const std::vector<NodeId>& stmts, size_t from, std::string_view local) {
  for (size_t i = from; i < stmts.size(); ++i) {
    const Stmt& st = m.stmt(stmts[i]);
    if (st.kind != StmtKind::Assign || st.targets.count != 1 || st.value == kNone) continue;
    const Expr& v = m.expr(st.value);
    const Expr& t = m.expr(st.target);
    if (v.kind == ExprKind::Name && v.text == local && t.kind == ExprKind::Attribute && isSelfName(m, t.lhs)) return st.target;
  }
  return kNone;
}

/// Some `.train()` (not `train(False)`) is called on an attribute named `attr`, or on `self`.
bool switchedToTrain(const Module& m, std::string_view attr) {
  // `self.model.train()`, `wrapper.model.train(flag)`, `self.train()`: an attribute of that name
  // on any object, or the wrapper itself, put in training mode (or switched by a flag) somewhere.
  for (NodeId e = 0; e < m.exprs.size(); ++e) {
    if (m.expr(e).kind != ExprKind::Call || methodName(m, e) != "train") continue;
    NodeId base = kNone;
    if (moduleModeSwitch(m, e, base) == 'e') continue;  // `train(False)`
    NodeId recv = receiverOf(m, e);
    if (recv == kNone) continue;
    const Expr& r = m.expr(recv);
    if ((r.kind == ExprKind::Attribute && r.text == attr) || isSelfName(m, recv)) return true;
  }
  return false;
}

}  // namespace

void FactsBuilder::keptInEvalBy(uint32_t fn, std::vector<KeptInEval>& out) const {
  // The statements at the top of the function: a switch under a condition may not run.
  auto body = items(m_, m_.functions[fn].body);
  std::vector<NodeId> top(body.begin(), body.end());
  for (size_t i = 0; i < top.size(); ++i) {
    const Stmt& st = m_.stmt(top[i]);
    if ((st.kind != StmtKind::Expr && st.kind != StmtKind::Assign) || st.value == kNone) continue;
    if (m_.expr(st.value).kind != ExprKind::Call) continue;
    NodeId base = kNone;
    if (moduleModeSwitch(m_, st.value, base) != 'e') continue;
    NodeId subject = st.kind == StmtKind::Assign ? (st.targets.count == 1 ? st.target : kNone) : base;
    if (subject == kNone) continue;
    Kind k = f_.kindOf(subject);
    if (k != Kind::Module && k != Kind::ModuleCollection) continue;
    NodeId kept = subject;
    const Expr& se = m_.expr(subject);
    if (se.kind == ExprKind::Name) kept = keptAs(m_, top, i + 1, se.text);
    if (kept == kNone || m_.expr(kept).kind != ExprKind::Attribute || !isSelfName(m_, m_.expr(kept).lhs)) continue;
    std::string_view attr = m_.expr(kept).text;
    // Trained, replaced (other than by this function before its switch) or unfrozen elsewhere:
    // not an inference-only module. A frozen one runs without a graph anyway.
    bool replaced = false;
    for (NodeId w : f_.attributeWriters(attr))
      if (m_.stmt(w).function != fn || m_.stmt(w).span.begin > st.span.begin) replaced = true;
    if (switchedToTrain(m_, attr) || replaced || f_.isFrozenModule(kept)) continue;
    out.push_back({f_.pathKey(kept), top[i]});
  }
}

bool FactsBuilder::disablesGradForGood(uint32_t fn) const {
  for (NodeId s : f_.fnStmts_[fn]) {
    const Stmt& st = m_.stmt(s);
    if (st.kind != StmtKind::Expr || st.value == kNone || m_.expr(st.value).kind != ExprKind::Call) continue;
    const std::string& canon = m_.canonical(st.value);
    if (torch_api::isSetGradEnabled(canon) && isFalseLiteral(m_, positionalArg(m_, st.value, 0)))
      return true;
  }
  return false;
}

std::vector<std::vector<FactsBuilder::KeptInEval>> FactsBuilder::inferenceWrapperModules() const {
  std::vector<std::vector<KeptInEval>> out(m_.classes.size());
  std::vector<uint32_t> init(m_.classes.size(), 0);
  std::vector<bool> trains(m_.classes.size(), false);
  for (uint32_t fn = 1; fn < m_.functions.size(); ++fn) {
    int32_t cls = m_.functions[fn].cls;
    if (cls < 0) continue;
    if (m_.functions[fn].name == "__init__") init[static_cast<size_t>(cls)] = fn;
    if (f_.summaries_[fn].events & event::kUpdate) trains[static_cast<size_t>(cls)] = true;
  }
  for (size_t c = 0; c < m_.classes.size(); ++c) {
    int32_t cls = static_cast<int32_t>(c);
    if (!init[c] || trains[c] || f_.isModuleClass(cls) || f_.classFramework(cls) != 0) continue;
    // `__init__` and the methods of this class it calls at its top (`self._load_model(weight)`):
    // what they do, the constructor does.
    std::vector<uint32_t> setup{init[c]};
    for (NodeId s : items(m_, m_.functions[init[c]].body))
      for (NodeId call : f_.stmtCalls_[s]) {
        std::span<const uint32_t> targets = f_.callTargets(call);
        NodeId callee = m_.expr(call).lhs;
        bool onSelf = m_.expr(callee).kind == ExprKind::Attribute && isSelfName(m_, m_.expr(callee).lhs);
        if (onSelf && targets.size() == 1 && m_.functions[targets[0]].cls == cls && targets[0] != init[c]) setup.push_back(targets[0]);
      }
    // `torch.set_grad_enabled(False)` as a statement turns autograd off for the process: the
    // wrapper's methods then run without it.
    if (std::any_of(setup.begin(), setup.end(), [&](uint32_t fn) { return disablesGradForGood(fn); })) continue;
    for (uint32_t fn : setup) keptInEvalBy(fn, out[c]);
  }
  return out;
}

}  // namespace oomlint
