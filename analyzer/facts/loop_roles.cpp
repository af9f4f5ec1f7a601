// Pass 7, loop roles. A training loop reaches a backward or an optimizer step (directly or
// through functions of this file); a data loop iterates a data loader (or batches); an
// evaluation loop runs an evaluation forward, or is the data loop of an evaluation function.
// Loops over parameters, modules, trackers, callbacks or files are neither data nor evaluation.
// Then the functions such a loop calls once per iteration: their bodies repeat with it.
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
  auto aroundEvaluation = [&](NodeId call) {
    for (NodeId l = f_.loopOf_[m_.expr(call).stmt]; l != kNone; l = f_.loopOf_[l]) {
      if (f_.loopRole_[l] & loop_role::kTraining) break;
      if (bookkeeping[l]) continue;
      f_.loopRole_[l] |= loop_role::kEval;
    }
  };
  for (const auto& [call, opener] : f_.evalOpener_) aroundEvaluation(call);
  // An evaluation function's calls of helpers of this file that run a forward and no update
  // (`self.forward(*batch)` of a driver class whose subclasses run the model).
  for (uint32_t fn = 1; fn < m_.functions.size(); ++fn) {
    if (!f_.evalFunction_[fn]) continue;
    for (NodeId s : f_.fnStmts_[fn])
      for (NodeId c : f_.stmtCalls_[s])
        if (!f_.evalOpener_.count(c) && runsForwardOnly(c)) aroundEvaluation(c);
  }
  findStepsCalledFromLoops();
}

bool FactsBuilder::runsForwardOnly(NodeId call) const {
  bool forward = false;
  for (uint32_t t : f_.callTargets(call)) {
    const Summary& sum = f_.summaries_[t];
    if (sum.raisesOnly) continue;  // abstract: its overrides are the targets that tell
    if (sum.events & event::kUpdate) return false;
    if (sum.events & event::kForward) forward = true;
  }
  return forward;
}

bool FactsBuilder::runsEveryIteration(NodeId stmt, NodeId iteration) const {
  // `if step % 100 == 0: log_validation(...)` runs now and then; a handler when a step failed.
  for (NodeId c = stmt, p = m_.stmt(stmt).parent; p != kNone && c != iteration; c = p, p = m_.stmt(p).parent) {
    StmtKind k = m_.stmt(p).kind;
    if (k == StmtKind::If || (k == StmtKind::Try && f_.branch_[c] >= 3)) return false;
  }
  return true;
}

void FactsBuilder::findStepsCalledFromLoops() {
  size_t nf = m_.functions.size();
  f_.calledStepRole_.assign(nf, 0);
  f_.stepCall_.assign(nf, kNone);
  // A function that runs a loop of some role itself is a whole run or epoch, not a step.
  std::vector<bool> runsLoops(nf, false);
  for (NodeId s = 0; s < m_.stmts.size(); ++s)
    if (f_.loopRole_[s]) runsLoops[m_.stmt(s).function] = true;
  // Callers first, so a helper of a per-step method is one too (`train_step` -> `log_losses`).
  for (auto it = bottomUp_.rbegin(); it != bottomUp_.rend(); ++it) {
    uint32_t fn = *it;
    const Function& fun = m_.functions[fn];
    if (fn == 0 || fun.isLambda || fun.defStmt == kNone || f_.frameworkStep(fn) || runsLoops[fn]) continue;
    for (NodeId call : callSites_[fn]) {
      NodeId site = m_.expr(call).stmt;
      if (functionOf(site) == fn) continue;  // recursion repeats nothing new
      NodeId loop = f_.stepIterationOf(site);
      if (loop == kNone || !runsEveryIteration(site, loop)) continue;
      // `Runner(batch).run()` or `r = Runner(batch); r.run()`: an object made per iteration takes
      // what its method keeps on `self` with it.
      NodeId recv = receiverOf(m_, call);
      if (recv != kNone && !isSelfName(m_, recv) && !f_.outlivesIteration(recv, loop))
        continue;
      f_.calledStepRole_[fn] |= f_.iterationRole(loop);
      if (f_.stepCall_[fn] == kNone) f_.stepCall_[fn] = call;
    }
  }
}

}  // namespace oomlint
