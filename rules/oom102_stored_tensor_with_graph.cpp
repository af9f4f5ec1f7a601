// OOM102 stored-tensor-with-graph
#include "rules/estimates.h"
#include "rules/registry.h"
#include "rules/store_common.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM102",
    "stored-tensor-with-graph",
    Severity::Error,
    true,
    true,
    FixKind::Unsafe,
    true,
    true,
    "A tensor that carries autograd history is stored in a container or attribute that outlives the iteration",
    R"doc(## What it does
Flags a tensor that carries autograd history stored where it outlives the loop iteration:
`losses.append(loss)`, `outputs.extend(out)`, `losses += [loss]`, `history[k] = out`, `self.last = out`, `v.push_back(loss)` in C++, and a
method of the file that stores its argument in its object (`recorder.log(loss)` appending to
`self.history`, `self.remember(loss)`), or a function that appends one argument to another the caller
passes (`keep(loss, losses)` where `keep` does `into.append(value)`, also through a second helper and
into a dict of lists: `out.setdefault(k, []).append(v)`). A step a training framework runs once per batch counts as an iteration:
Lightning's `training_step` and a Hugging Face Trainer's `compute_loss` storing the loss on `self`
(`self.train_losses.append(loss)`) keep every step's graph. `self.log(...)` detaches what it logs;
`validation_step`, `test_step` and `predict_step` run under Lightning's `no_grad`.

What a framework keeps of a step's return value is a store too. Lightning 1.x collects every
`training_step` return value of the epoch for a module that overrides `training_epoch_end`
(in the class, a base or a subclass of the file), and from 1.6 on detaches only the `loss` entry
of a returned dict: `return {"loss": loss, "l1": l1}` keeps every step's `l1` graph until the epoch
ends. The finding is on the `return`. (Lightning 1.5 and older detached every entry, and 2.0
removed the hook.)

So does a step function that a training, evaluation or data loop of the file calls on every
iteration (`for batch in loader: self.train_step(batch)`), and the helpers it calls: what it appends
to `self` or to a list of the module grows per step, and an attribute it replaces with a tensor
that carries history (`self.batch_loss = loss`) keeps a step's graph until the next call. An element
it replaces (`self.stats["loss"] = loss`) is not judged, and neither is a store that another method
of the class, or a caller, backpropagates (`self.fake = G(z)` read by `backward_G`): that is an
accumulation for one backward. A call under `if step % 100 == 0:` runs now and
then, a function that runs a loop of its own (an epoch, a whole training run) is no step, and an
object made afresh each iteration takes what it keeps with it.

A dict that a backward proves to carry history through one entry only (`out =
module.training_step(batch)`, `out["loss"].backward()`) is no longer known to once that entry is
replaced by a detached copy (`out["loss"] = out["loss"].detach()`) before the store: what its other
entries hold is unknown.

A list that a loop appends losses to carries their history, as a sum of them does: a helper's
`return torch.stack(step_losses).mean()` keeps every step's graph, and so does the caller that
stores what it returns (`curve.append(train_one_epoch(...))`).

A nested function that an iteration defines and runs, called there or handed to a call there
(`optimizer.step(closure)`), is part of that iteration: what it stores into the enclosing
function's variables outlives the iteration as a store in the loop body would. A slot emptied again
later in the same iteration, on every path (`state["out"] = None`, `del state["out"]`, C++
`state["out"] = torch::Tensor()`), keeps nothing past it.

A module's `forward` that no loop of the file runs (the loop that trains it is in another file) is
a step too: whatever trains the module calls `forward` once per step. There only an append or insert
into a list on `self` counts (`self.features.append(h)`), and only when no statement of the file
outside `__init__` rebinds, clears, pops or deletes an attribute of that name on any object
(`self.features = []` at the top of `forward`, a `pop_features()` method, `model.features.clear()`
in an extraction helper): the file shows how the list is emptied, and the rule cannot see how often.

## Why is this bad?
A stored tensor keeps its `grad_fn`, and through it the graph that produced it. Storing a loss per
step keeps every step's graph nodes (and, before backward, the saved activations) alive: memory grows
with the number of iterations. Storing a model output keeps the whole forward's activations alive
until the next store replaces it, raising the peak by one forward.

## Example
```python
losses = []
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss)
```

## Use instead
```python
    losses.append(loss.detach())        # scalars
    outputs.append(out.detach().cpu())  # tensors: also leave the GPU
```

## Fix safety
Unsafe: the stored value no longer carries gradients. Code that later differentiates through the
stored tensors must keep them (then the growth is the price of that design).

## Estimated cost
When the file states the model's layers and the input's shape and the loop runs no backward, the
message ends with the growth per iteration: `A_fwd + loss` (as for OOM101), less the stored output
itself when the graph saves it (a detached copy keeps it too). When a backward in the iteration
differentiates the stored forward output, it frees the graph's saved activations and what stays on
the GPU is the output itself: the estimate is one batch of outputs, which `.detach().cpu()` moves
off the device (`oomlint trace` measured it exactly on fixtures/trace/oom102_history.py).
Validated against the H200 probe: bench/estimates/ states the probe's workload, and a test holds the
estimate within 10% of the measurement.

## Measured cost
Measured (H200, LibTorch 2.11, bf16, width 4096, depth 4, batch 32, seq 2048
(runtime_check/results/h200.json)): `outputs.push_back(out)` peaks at 18.0 MiB vs 4.0 MiB for
`outputs.push_back(out.detach())`; growth 2.0 MiB/step vs 256.0 KiB/step; retained after the run
18.0 MiB vs 2.2 MiB. Reproduce with `oomlint-probe OOM102`.

## References
- PyTorch FAQ, "Don't accumulate history across your training loop": https://pytorch.org/docs/stable/notes/faq.html
)doc",
};

class Oom102 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }

  void onStatement(Context& ctx, NodeId s) const override {
    const Facts& f = ctx.facts();
    const Module& m = ctx.module();
    if (m.stmt(s).kind == StmtKind::Return) {
      keptByFramework(ctx, s);
      return;
    }
    Store st;
    if (!recognizeStore(f, s, st)) return;
    if (st.concat) return;  // `torch.cat` growth with history is OOM101's accumulation shape
    // `self.total = self.total + loss` and a moving average (`self.ema = 0.9 * self.ema + 0.1 *
    // loss`) are accumulations: OOM101 reports them, once (or OOM107, when the loop reads the
    // average back into its graph).
    NodeId added = kNone;
    if (st.attribute && runningUpdateRead(f, st.value, f.pathKey(st.container), added) != kNone) return;
    // `sums["cls"] = sums["cls"] + loss`: a running total kept in an entry, OOM101's too.
    if (const Stmt& a = m.stmt(s); a.kind == StmtKind::Assign && a.target != kNone && m.expr(a.target).kind == ExprKind::Subscript &&
                                   runningUpdateOfTarget(f, a.value, a.target, added) != kNone)
      return;
    const Expr& v = m.expr(st.value);
    if (f.gradMode(s) != GradMode::Enabled) return;
    if (f.value(st.value).history != Tri::Yes) return;
    NodeId loop = storeOutlivesLoop(f, st, true);  // a loop, or a framework step
    if (loop == kNone) return;
    // State the loop feeds back into its forward (`self.hidden = h`, then `self.gru(x,
    // self.hidden)`): carried state, OOM107's finding.
    if (st.attribute && forwardReading(f, loop, f.pathKey(st.container), true) != kNone) return;
    NodeId root = st.container;
    while (m.expr(root).kind == ExprKind::Subscript) root = m.expr(root).lhs;
    Span where = st.reportAt != kNone ? m.expr(st.reportAt).span : m.stmt(s).span;
    Finding& finding = ctx.report(kInfo, where,
                                  ticked(brief(m, st.value, 30)) + " carries autograd history and is stored in `" +
                                      brief(m, root, 30) + "`, which outlives the iteration and keeps its graph alive");
    // A backward in the iteration frees the saved activations the stored graph would keep.
    if (!f.reachesEvent(loop, event::kBackward | event::kAutogradGrad) && m.stmt(loop).kind != StmtKind::FunctionDef)
      finding.withEstimate(storedGraphOf(f, st.value));
    // When that backward differentiates the stored output, the output itself is what stays.
    else if (v.kind == ExprKind::Name && f.backwardComputedFrom(m.stmt(s).function, v.text))
      finding.withEstimate(outputOf(f, st.value));
    noteHistory(finding, f, st.value);
    if (st.storedAt != kNone)
      finding.note(f.headerSpan(st.storedAt),
                   st.intoArgument ? "the function appends its argument to the container passed here" : "the method stores its argument in the object here");
    noteOutside(finding, f, st.container);
    noteLoop(finding, f, loop);
    // A value grown by an accumulator: OOM101's `.item()` there makes it a number, which
    // `.detach()` here would then break. Fixing the accumulation fixes this store too.
    if (f.value(st.value).accumulated) {
      finding.withFix(Applicability::DisplayOnly, "Sum `.item()` where this value is accumulated, or store a detached copy");
      return;
    }
    // The callee stores the elements of a dict or list it is given: the argument itself has no `.detach()`.
    std::string repl = st.elementOfValue ? std::string() : detachedText(f, st.value);
    if (repl.empty()) {
      finding.withFix(Applicability::DisplayOnly, "Store a detached copy (`.detach()`, and `.cpu()` for non-scalars)");
      return;
    }
    finding.withFix(Applicability::Unsafe, "Store `" + (repl.size() > 40 ? repl.substr(0, 37) + "..." : repl) + "`",
                    {replaceExpr(m, st.value, repl)});
  }

 private:
  /// A step's return value that its framework keeps for the whole epoch (Lightning 1.x collects
  /// `training_step`'s dict for `training_epoch_end`, detaching only `loss`): each entry that
  /// carries history keeps its step's graph until the epoch ends.
  static void keptByFramework(Context& ctx, NodeId s) {
    const Facts& f = ctx.facts();
    const Module& m = ctx.module();
    if (f.gradMode(s) != GradMode::Enabled) return;
    std::vector<NodeId> kept;
    for (NodeId v : f.keptStepOutputs(s))
      if (f.value(v).history == Tri::Yes) kept.push_back(v);
    if (kept.empty()) return;
    uint32_t fn = m.stmt(s).function;
    Finding& finding = ctx.report(kInfo, m.stmt(s).span,
                                  ticked(brief(m, kept.front(), 30)) +
                                      (kept.size() > 1 ? " and " + std::to_string(kept.size() - 1) + " more entries carry autograd history and are"
                                                       : " carries autograd history and is") +
                                      " returned from `" + std::string(m.functions[fn].name) + "`, whose outputs " +
                                      std::string(f.frameworkName(fn)) + " keeps for `training_epoch_end`: every step's graph stays alive until the epoch ends");
    noteHistory(finding, f, kept.front());
    // Only the graph goes: the epoch hook may expect the entries on their device.
    std::vector<Edit> edits;
    for (NodeId v : kept) edits.push_back(replaceExpr(m, v, withMethod(m, v, ".detach()", ".detach()")));
    finding.withFix(Applicability::Unsafe, "Return detached copies of the entries other than `loss`", edits);
  }

  /// `loss` -> `loss.detach()`, `out` -> `out.detach().cpu()`, `(loss, out)` -> per element.
  static std::string detachedText(const Facts& f, NodeId v) {
    const Module& m = f.module();
    const Expr& e = m.expr(v);
    if (e.kind == ExprKind::Container) {
      std::string_view t = m.textOf(v);
      if (t.empty() || (t[0] != '(' && t[0] != '[') || shape::isComprehension(e.shape)) return {};
      std::string out(1, t[0]);
      uint32_t i = 0;
      for (const Arg& a : argsOf(m, e)) {
        if (!a.keyword.empty()) return {};
        if (i++) out += ", ";
        std::string inner = f.value(a.value).history == Tri::Yes ? detachedText(f, a.value) : std::string(m.textOf(a.value));
        if (inner.empty()) return {};
        out += inner;
      }
      if (t[0] == '(' && e.argCount == 1) out += ",";
      out += t[0] == '(' ? ')' : ']';
      return out;
    }
    bool scalar = f.value(v).scalarLoss;
    return withMethod(m, v, scalar ? ".detach()" : ".detach().cpu()", scalar ? ".detach()" : ".detach().cpu()");
  }
};

}  // namespace

const Rule& oom102() {
  static const Oom102 rule;
  return rule;
}

}  // namespace oomlint::rules
