// Pass 4, events: the training-step events (forward, loss, backward, autograd.grad, step,
// zero_grad) each function runs, in order, with calls of this file's functions expanded to the
// events their summaries list; which statements reach an update; and which functions are called
// on a training path (before the update of a training step).
#include <algorithm>
#include <functional>

#include "facts/builder.h"

namespace oomlint {

namespace {

uint8_t directEvent(const Facts& f, const Module& m, NodeId call) {
  if (f.isBackwardCall(call)) return event::kBackward;
  if (f.isAutogradGradCall(call)) return event::kAutogradGrad;
  if (f.isOptimizerStep(call)) return event::kStep;
  if (f.isZeroGradCall(call)) return event::kZeroGrad;
  if (f.isLossCall(call)) return event::kLoss;
  if (f.isForwardCall(call) && f.gradMode(m.expr(call).stmt) != GradMode::Disabled) return event::kForward;
  return 0;
}

/// `p.grad = None`: clears a gradient as zero_grad does.
bool clearsGradByAssignment(const Module& m, const Stmt& st) {
  if (st.kind != StmtKind::Assign) return false;
  for (NodeId t : items(m, st.targets))
    if (m.expr(t).kind == ExprKind::Attribute && m.expr(t).text == "grad") return true;
  return false;
}

void appendOrder(std::vector<uint8_t>& order, uint8_t kind) {
  if (!order.empty() && order.back() == kind) return;
  if (order.size() < 16) order.push_back(kind);
}

}  // namespace

void FactsBuilder::computeEvents() {
  size_t nf = m_.functions.size();
  // Callees first: a depth-first post-order over the call graph.
  std::vector<std::vector<uint32_t>> callees(nf);
  for (NodeId call = 0; call < m_.exprs.size(); ++call) {
    std::span<const uint32_t> targets = f_.callTargets(call);
    if (targets.empty()) continue;
    uint32_t caller = functionOf(m_.expr(call).stmt);
    for (uint32_t t : targets) callees[caller].push_back(t);
  }
  for (const auto& [call, closures] : f_.closuresHandedTo_)
    for (uint32_t t : closures) callees[functionOf(m_.expr(call).stmt)].push_back(t);
  bottomUp_.clear();
  bool recursive = false;  // a call back into a function whose callees are still being visited
  std::vector<uint8_t> state(nf, 0);
  for (uint32_t root = 0; root < nf; ++root) {
    if (state[root]) continue;
    std::vector<std::pair<uint32_t, size_t>> stack{{root, 0}};
    state[root] = 1;
    while (!stack.empty()) {
      auto& [fn, next] = stack.back();
      if (next < callees[fn].size()) {
        uint32_t t = callees[fn][next++];
        if (!state[t]) {
          state[t] = 1;
          stack.push_back({t, 0});
        } else if (state[t] == 1) {
          recursive = true;
        }
        continue;
      }
      state[fn] = 2;
      bottomUp_.push_back(fn);
      stack.pop_back();
    }
  }

  f_.events_.assign(nf, {});
  // Callees come first; a recursive group needs a second round to see its own events.
  for (int round = 0; round < (recursive ? 2 : 1); ++round) {
    for (uint32_t fn : bottomUp_) {
      std::vector<StepEvent> evs;
      Summary& sum = f_.summaries_[fn];
      uint8_t bits = 0;
      std::vector<uint8_t> order;
      for (NodeId s : f_.fnStmts_[fn]) {
        if (clearsGradByAssignment(m_, m_.stmt(s))) {
          evs.push_back({event::kZeroGrad, kNone, s});
          bits |= event::kZeroGrad;
          appendOrder(order, event::kZeroGrad);
        }
        for (NodeId c : f_.stmtCalls_[s]) {
          // `optimizer.step(closure)` runs the closure's events, then its own.
          if (auto handed = f_.closuresHandedTo_.find(c); handed != f_.closuresHandedTo_.end())
            for (uint32_t t : handed->second) {
              for (uint8_t kind : f_.summaries_[t].eventOrder) {
                evs.push_back({kind, c, s});
                appendOrder(order, kind);
              }
              bits |= f_.summaries_[t].events;
            }
          uint8_t k = directEvent(f_, m_, c);
          if (k) {
            evs.push_back({k, c, s});
            bits |= k;
            appendOrder(order, k);
            continue;
          }
          if (f_.gradMode_[s] == GradMode::Disabled) continue;  // a helper run under no_grad trains nothing here
          std::span<const uint32_t> targets = f_.callTargets(c);
          if (targets.empty()) {
            // A function of another module of the project: its summary's events.
            const ImportedFunction* imp = f_.importedCallee(c);
            if (!imp) continue;
            for (uint8_t kind : imp->summary->eventOrder) {
              evs.push_back({kind, c, s});
              appendOrder(order, kind);
            }
            bits |= imp->summary->events;
            continue;
          }
          // The callee's events, in its order (the first target's; the others only add bits).
          for (uint8_t kind : f_.summaries_[targets.front()].eventOrder) {
            evs.push_back({kind, c, s});
            appendOrder(order, kind);
          }
          for (uint32_t t : targets) bits |= f_.summaries_[t].events;
        }
      }
      sum.events = bits;
      sum.eventOrder = std::move(order);
      f_.events_[fn] = std::move(evs);
    }
  }
  // Per function, the innermost loops of its backward and step events, once: a notebook's module
  // level holds every cell's events and many call sites, and asking each site about each event
  // was quadratic.
  f_.updateLoops_.assign(nf, {});
  for (uint32_t fn = 0; fn < nf; ++fn) {
    std::vector<NodeId>& loops = f_.updateLoops_[fn];
    for (const StepEvent& e : f_.events_[fn])
      if (f_.loopOf_[e.stmt] != kNone && (f_.eventKinds(e) & (event::kBackward | event::kStep))) loops.push_back(f_.loopOf_[e.stmt]);
    std::sort(loops.begin(), loops.end());
    loops.erase(std::unique(loops.begin(), loops.end()), loops.end());
  }
  f_.subtreeEvents_.assign(m_.stmts.size(), 0);
  for (uint32_t fn = 0; fn < nf; ++fn)
    for (const StepEvent& e : f_.events_[fn]) f_.subtreeEvents_[e.stmt] |= f_.eventKinds(e);
  for (NodeId s = static_cast<NodeId>(m_.stmts.size()); s-- > 0;) {
    NodeId p = m_.stmt(s).parent;
    if (p != kNone) f_.subtreeEvents_[p] |= f_.subtreeEvents_[s];
  }

  // Called on a training path: a call site in the iteration of a loop that updates, or followed by
  // an update in its caller (a step function), with grad enabled there. Carried down to callees.
  f_.calledBetweenSteps_.assign(nf, false);
  for (uint32_t fn = 0; fn < nf; ++fn) {
    for (NodeId call : callSites_[fn]) {
      NodeId site = m_.expr(call).stmt;
      if (f_.gradMode_[site] == GradMode::Disabled) continue;
      uint32_t caller = functionOf(site);
      for (NodeId l = f_.loopOf_[site]; l != kNone && !f_.calledBetweenSteps_[fn]; l = f_.loopOf_[l])
        if (f_.subtreeEvents_[l] & (event::kBackward | event::kStep)) f_.calledBetweenSteps_[fn] = true;
      // Once one call site puts `fn` on a training path, the others cannot take it off.
      if (f_.summaries_[fn].calledOnTrainingPath) continue;
      bool training = f_.updateInIterationOf(site);
      for (const StepEvent& e : f_.events_[caller]) {
        if (training) break;
        if ((e.kind & (event::kBackward | event::kStep)) && (e.stmt == site ? e.call != call : f_.mayPrecede(site, e.stmt)))
          training = true;
      }
      if (training) f_.summaries_[fn].calledOnTrainingPath = true;
    }
  }
  // Called on a training path by a caller in another module (a loss helper of losses.py).
  if (f_.project_)
    for (uint32_t fn = 1; fn < nf; ++fn) {
      std::string q = f_.qualifiedName(fn);
      const CallerContext* callers = q.empty() ? nullptr : f_.project_->callers(q);
      if (callers && callers->onTrainingPath) f_.summaries_[fn].calledOnTrainingPath = true;
    }
  for (auto it = bottomUp_.rbegin(); it != bottomUp_.rend(); ++it)
    for (uint32_t t : callees[*it]) {
      if (f_.summaries_[*it].calledOnTrainingPath) f_.summaries_[t].calledOnTrainingPath = true;
      if (f_.calledBetweenSteps_[*it] || f_.summaries_[*it].calledOnTrainingPath) f_.calledBetweenSteps_[t] = true;
    }
}

uint8_t Facts::eventKinds(const StepEvent& e) const {
  uint8_t k = e.kind;
  if (e.call != kNone && !callTargets(e.call).empty())
    for (uint32_t t : callTargets(e.call)) k |= summaries_[t].events;
  else if (const ImportedFunction* imp = e.call != kNone ? importedCallee(e.call) : nullptr)
    k |= imp->summary->events;
  return k;
}

bool Facts::updateInIterationOf(NodeId site) const {
  if (loopOf_[site] == kNone) return false;
  // The loops holding `site` are itself (when a loop) and its chain of enclosing loops.
  const std::vector<NodeId>& loops = updateLoops_[m_.stmt(site).function];
  auto updates = [&](NodeId l) { return std::binary_search(loops.begin(), loops.end(), l); };
  if (loops.empty()) return false;
  if (updates(site)) return true;
  for (NodeId l = loopOf_[site]; l != kNone; l = loopOf_[l])
    if (updates(l)) return true;
  return false;
}

}  // namespace oomlint
