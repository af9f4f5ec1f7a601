// OOM101 accumulated-tensor-with-graph
#include "rules/common.h"
#include "rules/estimates.h"
#include "rules/registry.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM101",
    "accumulated-tensor-with-graph",
    Severity::Error,
    true,
    true,
    FixKind::Unsafe,
    true,
    true,
    "A tensor that carries autograd history is accumulated across loop iterations",
    R"doc(## What it does
Flags a tensor that carries autograd history (a model output, a loss, or arithmetic on them)
accumulated into a variable or object that outlives the loop iteration: `total += loss`,
`total = total + loss`, `total.add_(loss)`, `meter.update(loss)`, `running[k] += loss` (or `running[k] =
running[k] + loss`, the same entry read and written), an exponential moving average
(`avg = 0.98 * avg + 0.02 * loss`, also as `loss if avg is None else ...`), a sum of several terms
(`total = total + rec + beta * kld`, with a display-only fix: each term may carry history) and a
loss added on some steps only (`total = total + (loss if step >= warmup else 0)`). A list grown
with `+= [loss]` is a store, OOM102's.

History also passes through helpers: what a function returns computed from a parameter (`return
loss * k`) carries the history of the argument each caller gives it, and a helper whose backward
runs on a parameter proves its caller's argument.

History is known from evidence: the output of a module's forward or a loss, what a function of the
file or of another module of the project returns (per element of a returned tuple), and any tensor
a backward runs on (`loss.backward()`, `accelerator.backward(loss)`, `torch.autograd.grad(loss, ...)`), with what it
was computed from: both terms of `loss = rec + kl`, the losses gathered by `sum(losses.values())` or
`torch.stack(parts)`, both branches of a conditional, and the tensor side of a product with a
number (of `weight * kl` with both unknown, neither), and the dict or object the subject was
taken from (`out["loss"]`). A Python local bound only inside a loop, a branch or a `try` holds,
wherever a read of it succeeds, what one of those bindings made: `aux` of the last inner update,
read after the inner loop, carries that update's history. Of `loss, rewards = loss_fn(...)` the
backward on `loss` proves `loss` only: DPO-style losses return detached rewards beside the loss. `meter.update(loss)` is an accumulation when the meter's
class sums its argument into the instance (`self.sum += val * n`, also through a differentiable
torch function or a Horovod collective: `self.sum += hvd.allreduce(val)`), unless the
method rebinds the argument first to something without its history (`val = val.item()`, perhaps
under an `isinstance` test), whatever it is called, whether
the class is in this file or another module of the project (inherited methods included); for a
class outside the project, when the receiver is named for a meter (`update`; `add` of a meter
torchnet made). A step a training framework runs once per batch (Lightning's `training_step`, a Hugging Face Trainer's `compute_loss`) is an
iteration: `self.epoch_loss += loss` there keeps every step's graph. So is a step function a loop
of the file calls on every iteration (`self.train_step(batch)` in `for batch in loader:`), unless
another method of its class or a caller backpropagates what it sums. A meter that sums the elements
of what it is given (`for i, v in enumerate(values): self.sums[i] += v`, `for k, v in
parts.items()`) makes `meter.update([ce, reg])` an accumulation of both losses. So does a method that
keeps a moving average of its argument on its object (`self.center = self.center * m +
out.mean(0) * (1 - m)`), also where the call's result is used (`loss = criterion(student(x),
teacher(x))`) or the object itself is called (its `__call__`, a module's `forward` updating running
statistics); the fix there is display-only, and nothing a method computes under `no_grad` counts.

## Why is this bad?
The accumulator becomes part of every iteration's autograd graph. Without a backward on that graph,
each iteration's saved activations stay alive: memory grows by one forward's activations per step
(`N·A_fwd`) until CUDA runs out. After a backward the big buffers are freed, but graph nodes and a
tensor per step still pile up, and the running total is a tensor chained to all of them.

## Example
```python
total = 0
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    total += loss          # keeps every step's graph alive
```

## Use instead
```python
    total += loss.item()   # a Python float: no graph
```
(C++: `total += loss.item<double>();`)

## Fix safety
Unsafe: `.item()` turns the accumulator into a Python number and synchronises with the device once
per step. Code that later calls tensor methods on the total must be adjusted.

## Estimated cost
When the file states the model's layers and the input's shape, and the loop runs no backward, the
message ends with the growth per iteration: `A_fwd + loss`, where A_fwd is the bytes of the
activations the forward saves for backward (a Linear its input, GELU/SiLU their input,
ReLU/Tanh/Sigmoid their output, Dropout a one-byte mask) and the loss saves one output-sized tensor
in the dtype it computes in. With a backward in the loop the saved activations are freed, and no
estimate is given.
Validated against the H200 probe: bench/estimates/ states the probe's workload, and a test holds the
estimate within 10% of the measurement.

## Measured cost
Measured (H200, LibTorch 2.11, bf16, width 4096, depth 4, batch 32, seq 2048
(runtime_check/results/h200.json)): `total = total + loss` peaks at 22.0 MiB vs 3.0 MiB for `total
+= loss.item()`; growth 2.2 MiB/step vs 0.0 B/step; retained after the run 21.2 MiB vs 0.0 B.
Reproduce with `oomlint-probe OOM101`.

## References
- PyTorch FAQ, "My model reports cuda runtime error(2): out of memory": https://pytorch.org/docs/stable/notes/faq.html
)doc",
};

class Oom101 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }

  void onStatement(Context& ctx, NodeId s) const override {
    const Module& m = ctx.module();
    const Facts& f = ctx.facts();
    const Stmt& st = m.stmt(s);
    if (st.kind == StmtKind::AugAssign && (st.op == "+=" || st.op == "-=")) {
      // `total += loss`; `losses += [loss]` grows a list: a store, OOM102's.
      if (st.value != kNone && m.expr(st.value).kind == ExprKind::Container) return;
      check(ctx, s, st.target, st.target, st.value, kNone);
    } else if (st.kind == StmtKind::Assign && st.targets.count == 1 && st.value != kNone &&
               (m.expr(st.value).kind == ExprKind::BinOp || m.expr(st.value).kind == ExprKind::Conditional)) {
      // `total = total + loss`, `total = loss + total`, `avg = 0.98 * avg + 0.02 * loss`
      NodeId added = kNone;
      bool average = false, several = false;
      NodeId read = runningUpdateOfTarget(f, st.value, st.target, added, &average, &several);
      if (read == kNone) return;
      // A moving average the loop reads back into its graph is carried state: OOM107's.
      NodeId loop = f.enclosingLoop(s);
      if (average && loop != kNone && readWithHistoryElsewhere(f, loop, s, f.pathKey(st.target))) return;
      check(ctx, s, st.target, read, added, kNone, several ? "Accumulate numbers: `.item()` on every tensor the update adds" : nullptr);
    } else if ((st.kind == StmtKind::Expr || (st.kind == StmtKind::Assign && st.targets.count == 1)) && st.value != kNone &&
               m.expr(st.value).kind == ExprKind::Call) {
      // `meter.update(loss)`; `loss = criterion.step(out, target)` whose method also sums an argument.
      checkAccumulatingCall(ctx, s, st.value);
    }
  }

 private:
  /// `meter.update(loss)`, `stats.add(loss)`: a method that sums its argument into the object.
  /// Known from the method's summary when its class is in this project (this file or another
  /// module); from the receiver's name (an `AverageMeter`-style `*meter*.update`) when it is not.
  static void checkAccumulatingCall(Context& ctx, NodeId s, NodeId call) {
    const Module& m = ctx.module();
    const Facts& f = ctx.facts();
    NodeId recv = receiverOf(m, call);
    // `criterion(student_out, teacher_out)`: an object called runs its `__call__` on itself.
    if (recv == kNone && m.expr(call).lhs != kNone && m.expr(m.expr(call).lhs).kind == ExprKind::Name)
      if (Facts::Callee callee = f.calleeOf(call); callee && callee.bound) recv = m.expr(call).lhs;
    if (recv == kNone || f.pathKey(recv).empty()) return;
    std::string_view meth = methodName(m, call);
    // `total.add_(loss)`: a tensor summed in place (the method is torch's alone).
    if ((meth == "add_" || meth == "sub_") && m.canonical(call).empty()) {
      check(ctx, s, recv, recv, positionalArg(m, call, 0), kNone);
      return;
    }
    if (Facts::Callee callee = f.calleeOf(call)) {
      for (uint32_t i = callee.bound ? 1 : 0; i < callee.params.size() && i < 32; ++i) {
        if (!(callee.summary->accumulatesParam & (1u << i))) continue;
        NodeId arg = callee.argFor(m, call, i);
        if (arg == kNone) continue;
        // Where the call's result is used, or the object called is the accumulator itself
        // (`loss = criterion(out, teacher_out)`), the argument feeds a computation too: a number
        // in its place would break it.
        // And `.item()` needs a one-element tensor: a loss is one, an output the method reduces
        // (`self.center = ... + out.mean(0) * (1 - m)`) is not.
        bool computes = m.stmt(s).kind != StmtKind::Expr || recv == m.expr(call).lhs;
        check(ctx, s, recv, recv, arg, callee.summary->accumulateAt,
              computes || !f.value(arg).scalarLoss ? "Keep the object's running state free of history: `.detach()` what the method adds to it"
                                                   : nullptr);
        return;
      }
      return;
    }
    // `loss_meter.update(loss)`; `add` only of a meter torchnet made (`tnt.meter.AverageValueMeter()`):
    // a class of unseen code named Meter may add anything.
    bool torchnet = false;
    std::vector<NodeId> defs;
    f.definitionsOf(recv, defs);
    for (NodeId d : defs)
      if (m.stmt(d).value != kNone && m.canonical(m.stmt(d).value).starts_with("torchnet.meter.")) torchnet = true;
    if (meth != "update" && !(meth == "add" && torchnet)) return;
    std::string lower = names::lower(f.pathKey(recv));
    if (lower.find("meter") == std::string::npos) return;
    check(ctx, s, recv, recv, positionalArg(m, call, 0), kNone);
  }

  /// `loss if warm else 0`: an arm that adds nothing leaves the other arm's history in every step
  /// that takes it, so the arm with history is what the update adds. Any other value as it is.
  static NodeId addedWhenNonzero(const Facts& f, NodeId value) {
    const Module& m = f.module();
    const Expr& c = m.expr(value);
    if (c.kind != ExprKind::Conditional || c.argCount != 3) return value;
    NodeId body = m.args[c.firstArg].value, orelse = m.args[c.firstArg + 2].value;
    auto zero = [&](NodeId e) { return m.expr(e).kind == ExprKind::Number && (m.textOf(e) == "0" || m.textOf(e) == "0.0"); };
    if (zero(orelse) && f.value(body).history == Tri::Yes) return body;
    if (zero(body) && f.value(orelse).history == Tri::Yes) return orelse;
    return value;
  }

  /// `advice`: the fix is display-only, with this message (`value` is one of the terms the update
  /// adds, `total = total + rec + kld`; or the argument of a call that also computes with it).
  static void check(Context& ctx, NodeId s, NodeId target, NodeId targetUse, NodeId value, NodeId accumulateAt,
                    const char* advice = nullptr) {
    const Module& m = ctx.module();
    const Facts& f = ctx.facts();
    if (!isTrackable(m, target) || value == kNone) return;
    value = addedWhenNonzero(f, value);
    NodeId loop = f.stepIterationOf(s);  // a loop, or a framework step run once per batch
    if (loop == kNone) return;
    uint8_t role = f.iterationRole(loop);
    if (role == 0) return;
    if (f.gradMode(s) != GradMode::Enabled) return;
    if (f.value(value).history != Tri::Yes) return;
    if (!f.outlivesIteration(targetUse, loop)) return;
    const Expr& t = m.expr(target);
    NodeId root = t.kind == ExprKind::Subscript ? t.lhs : target;
    std::string_view key = f.pathKey(root);
    if (key.empty()) return;
    uint32_t fn = m.stmt(s).function;
    // Summing losses for one backward is OOM104's business; a helper that builds a loss and returns
    // it is not a running statistic.
    if (f.flowsToBackward(fn, key)) return;
    if (calledPerIteration(f, loop) && f.keptStateReachesBackward(fn, key)) return;
    bool trainsOrEvaluates = (role & (loop_role::kTraining | loop_role::kEval)) != 0;
    if (!trainsOrEvaluates && f.isReturned(fn, key)) return;
    std::string what = brief(m, value, 30);
    Finding& finding = ctx.report(kInfo, m.stmt(s).span,
                                  ticked(what) + " carries autograd history and is accumulated into " + ticked(brief(m, root, 40)) +
                                      " across iterations, keeping every step's graph alive");
    // A backward in the iteration frees the saved activations: what piles up then is graph nodes
    // and a scalar per step, which no stated size measures.
    if (!f.reachesEvent(loop, event::kBackward | event::kAutogradGrad) && m.stmt(loop).kind != StmtKind::FunctionDef)
      finding.withEstimate(graphOf(f, value, "growth"));
    noteHistory(finding, f, value);
    if (accumulateAt != kNone) finding.note(f.headerSpan(accumulateAt), "the method adds its argument to the object here");
    noteOutside(finding, f, targetUse);
    noteLoop(finding, f, loop);
    std::string repl = withMethod(m, value, ".item()", ".item<double>()");
    const Stmt& st = m.stmt(s);
    if (st.kind == StmtKind::Assign && m.expr(st.value).kind == ExprKind::Conditional) {
      // `avg = loss if avg is None else ...`: the other arm stores the tensor itself.
      finding.withFix(Applicability::DisplayOnly, "Accumulate numbers: `.item()` on every tensor the update stores");
      return;
    }
    if (advice) {
      finding.withFix(Applicability::DisplayOnly, advice);
      return;
    }
    finding.withFix(Applicability::Unsafe,
                    "Accumulate `" + brief(m, value, 30) + (ctx.lang() == Lang::Python ? ".item()`" : ".item<double>()`"),
                    {replaceExpr(m, value, repl)});
  }
};

}  // namespace

const Rule& oom101() {
  static const Oom101 rule;
  return rule;
}

}  // namespace oomlint::rules
