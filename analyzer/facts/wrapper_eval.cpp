// Part of pass 6 (evaluation contexts): inference wrappers. A plain class (no module, no training
// framework) whose `__init__` puts a module it keeps in eval mode (`self.model =
// AutoModel.from_pretrained(name)` then `self.model.eval()`, or `model.eval()` then `self.mdl =
// model`), and that never trains it, serves predictions: each of its methods runs that module in
// eval mode, whatever the method is called (`get_image_embeddings`, `encode`, `__call__`).
#include "facts/builder.h"
#include "facts/mode_switch.h"

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
    // The statements at the top of `__init__`: a switch under a condition may not run.
    auto body = items(m_, m_.functions[init[c]].body);
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
      // Trained, replaced or unfrozen elsewhere: not an inference-only module. A frozen one runs
      // without a graph anyway.
      if (switchedToTrain(m_, attr) || !f_.attributeWriters(attr).empty() || f_.isFrozenModule(kept))
        continue;
      out[c].push_back({f_.pathKey(kept), top[i]});
    }
  }
  return out;
}

}  // namespace oomlint
