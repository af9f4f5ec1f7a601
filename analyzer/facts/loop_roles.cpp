// Pass 7, loop roles. A training loop reaches a backward or an optimizer step (directly or
// through functions of this file); a data loop iterates a data loader (or batches); an
// evaluation loop runs an evaluation forward, or is the data loop of an evaluation function.
// Loops over parameters, modules, trackers, callbacks or files are neither data nor evaluation.
#include "facts/builder.h"
#include "facts/torch_api.h"

namespace oomlint {

void FactsBuilder::computeLoopRoles() {
  size_t ns = m_.stmts.size();
  f_.loopRole_.assign(ns, 0);
  f_.trainingLoopIn_.assign(m_.functions.size(), false);
  std::vector<bool> bookkeeping(ns, false);
  for (NodeId s = 0; s < ns; ++s) {
    const Stmt& st = m_.stmt(s);
    if (st.kind != StmtKind::For && st.kind != StmtKind::While) continue;
    uint8_t role = 0;
    if (f_.subtreeEvents_[s] & (event::kBackward | event::kStep)) role |= loop_role::kTraining;
    if (st.kind == StmtKind::For && st.value != kNone) {
      bookkeeping[s] = torch_api::iteratesBookkeeping(m_, st.value);
      NodeId iter = torch_api::unwrapIterable(m_, st.value);
      bool data = !bookkeeping[s] && f_.kindOf(iter) == Kind::Loader;
      // `for batch in ...`, `for i, batch in ...`: named for batches (the weakest evidence).
      if (!data && !bookkeeping[s])
        forSubtree(st.target, [&](NodeId x) {
          if (m_.expr(x).kind == ExprKind::Name && m_.expr(x).text.find("batch") != std::string_view::npos) data = true;
        });
      if (data) role |= loop_role::kData;
      if (data && f_.evalFunction_[st.function] && !(role & loop_role::kTraining)) role |= loop_role::kEval;
    }
    f_.loopRole_[s] = role;
    if (role & loop_role::kTraining) f_.trainingLoopIn_[st.function] = true;
  }
  // Evaluation: every loop around an evaluation forward, up to the first one that trains.
  for (const auto& [call, opener] : f_.evalOpener_) {
    NodeId s = m_.expr(call).stmt;
    for (NodeId l = f_.loopOf_[s]; l != kNone; l = f_.loopOf_[l]) {
      if (f_.loopRole_[l] & loop_role::kTraining) break;
      if (bookkeeping[l]) continue;
      f_.loopRole_[l] |= loop_role::kEval;
    }
  }
}

}  // namespace oomlint
