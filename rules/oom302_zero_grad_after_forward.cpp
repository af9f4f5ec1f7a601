// OOM302 zero-grad-after-forward
#include <functional>

#include "rules/common.h"
#include "rules/estimates.h"
#include "rules/registry.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM302",
    "zero-grad-after-forward",
    Severity::Warning,
    true,
    true,
    FixKind::DisplayOnly,
    true,
    true,
    "zero_grad() runs after the forward, so last step's gradients are alive at the forward peak",
    R"doc(## What it does
Flags `zero_grad()` sequenced after the forward pass and before `backward()` in the same training
step: an iteration of a training loop, or a step function (called on a training path of the file,
or stepping an optimizer outside the program's `main`). Branches count: a `zero_grad()` on another
branch does not clear the gradients of this one; one on every path before the forward does, unless
both are optimizers' and the optimizers differ (a GAN's `opt_d.zero_grad()` does not clear the
generator's gradients that `opt_g.zero_grad()` clears after the generator's forward).
Calls of functions of the file count with the events they run. A forward whose graph a
`torch.autograd.grad` without `create_graph`/`retain_graph` consumes before the `zero_grad()`
(Langevin sampling, an adversarial attack) is not flagged: that graph is freed, not
back-propagated after the `zero_grad()`.

## Why is this bad?
Memory peaks during the forward (activations saved for backward). If the previous step's gradients
are only released after the forward, every `.grad` buffer is alive at that peak too: `+P·bytes`
for nothing, since the gradients are about to be discarded anyway.

## Example
```python
out = model(x)
loss = criterion(out, y)
optimizer.zero_grad()
loss.backward()
optimizer.step()
```

## Use instead
```python
optimizer.zero_grad()
out = model(x)
loss = criterion(out, y)
loss.backward()
optimizer.step()
```

## Fix safety
Display only: moving a statement across the forward is left to you (a forward hook or a custom
module may read gradients).

## Estimated cost
When the file states the network's layers and the input's size (and the loop trains it, without
checkpoints), the message ends with what the gradients add to the step's peak. The step peaks in
the forward, where last step's gradients `G = P·bytes` are alive, or in the backward, after
`zero_grad()` freed them: the estimate is `max(F + G, E + R) - max(F, E + R)`, with `F` the
forward's peak, `E` what is allocated when it ends and `R` how far the backward rises above `E`.
`R` comes from a walk of the backward from the last layer: each layer's backward holds the
gradient it receives, the one it makes for its input and its parameters' gradients; what it frees
is counted free one layer later (the CUDA allocator keeps a block until the kernels that read it
have run). Only where the forward peaks at `2·P` or more, and where the loss (up to two copies of
the output in float32 in its forward, four in its backward) cannot move the estimate by a tenth;
where the backward is the peak anyway, the cost is 0 and no estimate is shown. On the H200 the
estimate is within 0.2% of `--verify` for two deep MLPs (151.9 vs 152.2 MiB and 672.1 vs
672.4 MiB, runtime_check/results/h200-oom302-verify.json).

## Measured cost
Measured (H200, LibTorch 2.11, bf16, width 4096, depth 4, batch 32, seq 2048
(runtime_check/results/h200.json)): `forward; zero_grad(); backward` peaks at 8.5 GiB vs 8.5 GiB for
`zero_grad(); forward; backward`; the same peak: on this workload the step peaks at the start of
backward, after zero_grad has run, so the cost appears only when the forward peak is the higher one.
Reproduce with `oomlint-probe OOM302`. A deep MLP with a small head (bench/estimates/oom302_deep.py,
47 Linear(1024, 1024)+ReLU, 4096 rows, float32) peaks at 956.2 MiB vs 804.1 MiB with the fix:
+152.2 MiB of its 188.2 MiB of gradients.

## References
- PyTorch performance tuning guide: https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html
)doc",
};

/// A backward ran earlier in the function: its gradients exist when `s` runs.
bool backwardBefore(const Facts& f, uint32_t fn, NodeId s) {
  for (const StepEvent& e : f.events(fn))
    if (e.kind == event::kBackward && f.mayPrecede(e.stmt, s)) return true;
  return false;
}

/// An `autograd.grad` call that leaves its graph for a later backward: `create_graph` or
/// `retain_graph` set (a gradient penalty adds the gradients to the loss), or flags passed by
/// position.
bool keepsGraph(const Facts& f, const Module& m, NodeId call) {
  if (f.flagArg(call, "create_graph") != Tri::No || f.flagArg(call, "retain_graph") != Tri::No) return true;
  return positionalArg(m, call, 3) != kNone;
}

/// The forward `fw` feeds `e`: its call is inside `e`, or a name `e` reads was assigned from it,
/// a few assignments back (`energy = net(x).sum()`, then `torch.autograd.grad(energy, x)`).
bool feeds(const Facts& f, const Module& m, const StepEvent& fw, NodeId e, int depth = 0) {
  if (e == kNone || depth > 3) return false;
  bool found = false;
  f.forSubtree(e, [&](NodeId x) {
    if (found) return;
    if (x == fw.call) {
      found = true;
      return;
    }
    if (m.expr(x).kind != ExprKind::Name) return;
    std::vector<NodeId> defs;
    f.definitionsOf(x, defs);
    for (NodeId d : defs)
      if (d == fw.stmt || feeds(f, m, fw, m.stmt(d).value, depth + 1)) {
        found = true;
        return;
      }
  });
  return found;
}

/// Event `e` consumes the graph of forward `fw`. A backward does (as the rule always took it). So
/// does a `torch.autograd.grad` that `fw` feeds and that keeps no graph (Langevin steps, attack
/// refinement): the graph is freed, not back-propagated after the zero_grad. A helper's
/// `autograd.grad` consumes the forwards of the same call, or one handed to it, when each one it
/// runs frees its graph; one run by a function of another module is taken to.
bool consumesGraph(const Facts& f, const Module& m, const StepEvent& fw, const StepEvent& e) {
  if (e.kind == event::kBackward) return true;
  if (e.kind != event::kAutogradGrad || e.call == kNone) return false;
  if (f.isAutogradGradCall(e.call)) return !keepsGraph(f, m, e.call) && feeds(f, m, fw, f.backwardSubject(e.call));
  if (fw.call != e.call && !feeds(f, m, fw, e.call)) return false;
  for (uint32_t callee : f.callTargets(e.call))
    for (const StepEvent& inner : f.events(callee))
      if (inner.kind == event::kAutogradGrad && f.isAutogradGradCall(inner.call) && keepsGraph(f, m, inner.call)) return false;
  return true;
}

class Oom302 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }

  /// Two zero_grad calls on different optimizers (`d_optimizer`, `g_optimizer` of a GAN): each
  /// clears its own parameters' gradients only. A module's and an optimizer's may clear the same.
  static bool otherOptimizer(const Facts& f, NodeId a, NodeId b) {
    const Module& m = f.module();
    if (a == kNone || b == kNone) return false;
    NodeId ra = receiverOf(m, a), rb = receiverOf(m, b);
    if (ra == kNone || rb == kNone || f.kindOf(ra) != Kind::Optimizer || f.kindOf(rb) != Kind::Optimizer) return false;
    std::string_view ka = f.pathKey(ra), kb = f.pathKey(rb);
    return !ka.empty() && !kb.empty() && ka != kb;
  }

  void onCall(Context& ctx, NodeId call) const override {
    const Module& m = ctx.module();
    const Facts& f = ctx.facts();
    if (methodName(m, call) != "zero_grad") return;
    NodeId s = m.expr(call).stmt;
    uint32_t fn = m.stmt(s).function;
    // One training step: the iteration of the training loop holding the call, or a step function
    // (a training path of this file calls it, or it steps the optimizer and is not the program's
    // `main`). One-shot code before its first backward has no gradients to keep alive.
    NodeId loop = f.enclosingLoop(s);
    if (loop != kNone && !(f.loopRole(loop) & loop_role::kTraining)) return;
    if (loop == kNone && !f.summary(fn).calledOnTrainingPath &&
        !((f.summary(fn).events & event::kStep) && fn != 0 && m.functions[fn].name != "main") && !backwardBefore(f, fn, s))
      return;
    auto inStep = [&](NodeId t) { return loop != kNone ? f.within(t, loop) && t != loop : f.enclosingLoop(t) == kNone; };
    auto before = [&](const StepEvent& a, const StepEvent& b) {  // `a` can run before `b` in one pass
      // In one statement calls run inner first: `model(x).sum().backward()` forwards, then backpropagates.
      // Events of one call of a helper (`gen_closure()` forwards, then back-propagates) run in
      // the order its summary lists them: their order in `step`.
      if (a.stmt == b.stmt && a.call == b.call && a.call != kNone) return std::less<const StepEvent*>()(&a, &b);
      if (a.stmt == b.stmt) return a.call != kNone && b.call != kNone && a.call < b.call;
      return f.mayPrecede(a.stmt, b.stmt);
    };
    StepEvent self{event::kZeroGrad, call, s};
    std::vector<StepEvent> step;
    for (const StepEvent& e : loop != kNone ? f.eventsWithin(loop) : std::span<const StepEvent>(f.events(fn)))
      if (inStep(e.stmt)) step.push_back(e);
    // A forward whose graph is back-propagated after this zero_grad (no backward or graph-freeing
    // `autograd.grad` in between), and
    // that no earlier zero_grad on every path to it already cleared the gradients for. A backward
    // on every path to the zero_grad has consumed the forwards of the statements before it.
    size_t from = step.size();
    while (from > 0 && !(step[from - 1].kind == event::kBackward && step[from - 1].stmt != s && f.dominates(step[from - 1].stmt, s))) --from;
    if (from > 0) {
      --from;
      while (from > 0 && step[from - 1].stmt == step[from].stmt) --from;
    }
    for (size_t i = from; i < step.size(); ++i) {
      const StepEvent& fw = step[i];
      if (fw.kind != event::kForward || !before(fw, self)) continue;
      bool backwardBetween = false, backwardAfter = false, cleared = false;
      for (const StepEvent& e : step) {
        if (consumesGraph(f, m, fw, e) && before(fw, e) && before(e, self)) backwardBetween = true;
        if (e.kind == event::kBackward && before(self, e) && !f.exclusive(fw.stmt, e.stmt)) backwardAfter = true;
        if (e.kind == event::kZeroGrad && e.call != call && before(e, fw) && (e.stmt == fw.stmt || f.dominates(e.stmt, fw.stmt)) &&
            !otherOptimizer(f, e.call, call))
          cleared = true;
      }
      if (backwardBetween || !backwardAfter || cleared) continue;
      Finding& finding = ctx.report(kInfo, m.expr(call).span,
                                    "`zero_grad()` runs after the forward, so the previous step's gradients stay allocated through "
                                    "the forward's memory peak");
      if (fw.call != kNone) finding.note(m.expr(fw.call).span, "the forward runs here, before the gradients are cleared");
      noteLoop(finding, f, loop);
      finding.withEstimate(gradientsThroughForwardOf(f, fw.call));
      finding.withFix(Applicability::DisplayOnly, "Move `zero_grad()` before the forward pass");
      return;
    }
  }
};

}  // namespace

const Rule& oom302() {
  static const Oom302 rule;
  return rule;
}

}  // namespace oomlint::rules
