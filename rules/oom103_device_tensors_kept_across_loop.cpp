// OOM103 device-tensors-kept-across-loop
#include "rules/estimates.h"
#include "rules/registry.h"
#include "rules/store_common.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM103",
    "device-tensors-kept-across-loop",
    Severity::Warning,
    true,
    true,
    FixKind::Unsafe,
    true,
    true,
    "GPU tensors are collected across a data loop",
    R"doc(## What it does
Flags outputs, predictions or targets collected across a data loop while they still live on the GPU,
even when they carry no autograd history (detached, or computed under `torch.no_grad()`):
`preds.append(out)`, `preds.extend(out)`, `preds += [out]`, `all_logits = torch.cat([all_logits, logits])`,
and a call of a function that appends one argument to another (`gather(preds, out)`).
A data loop iterates a data loader (or batches; an instance of a class whose `__iter__` walks a
loader is one), or runs an evaluation forward on every iteration:
over files, dataset indices, an iterator drained with `next()`. A loop over a literal handful of
values (`for flip in (False, True)`) is not one, nor is a loop over pieces of one input along a
dimension past the batch (`for start in range(0, x.size(1), chunk)`, `while start < x.size(2)`,
`x.split(n, dim=-1)`), whose kept outputs are that input's result in parts, and a tensor grown with `torch.cat` that the loop
feeds back into the model (a generation loop's context) is its input, not a collection.
A tensor moved with `.to(device)` or `.cuda()` under `no_grad` carries no history, whatever it was
before: `batch = {k: v.to(device) for k, v in batch.items()}` then `labels.append(batch["labels"])`.
What lives on the GPU: what `.cuda()` or `.to(device)` moved there, and what a module on the GPU
returns (its attributes too: `out.logits` of a forward under `no_grad`). What a function of the
project returns lives where its arguments do when it computes the result from them (`def
run(model, x): return model(x).softmax(-1)` given `x.cuda()`; a batch mover `[t.to(self.device)
for t in next(it)]`); `self.forward(*batch)` of a base class whose `forward` only raises runs the
subclasses' override. A launcher places what it
prepares in the same function (Accelerate's `accelerator.prepare(model, loader)`, Fabric's `setup`
and `setup_dataloaders`; not with `Accelerator(cpu=True)` or `device_placement=False`): the
module's outputs and the loader's batches are on the GPU, and so is what it gathers
(`accelerator.gather(x)`, `gather_for_metrics`). A device variable (`device`,
`self.device`; not a tensor's own `x.device`) is the GPU when the program is written for one: this
file, a file it imports or a file that imports it names CUDA, as engine.py's `evaluate(model, loader, device)` is
when main.py builds `device = torch.device("cuda" if torch.cuda.is_available() else "cpu")`.
Where nothing else says, a function that copies the whole collection to the host after the loop
(`torch.cat(preds).cpu()`) expects device tensors in it: what the loop computed into it counts as
on the GPU (not the loader's batches themselves, which stay on the host until moved), under
`no_grad` even when oomlint could not follow how it was computed.

## Why is this bad?
Each batch's tensor stays in GPU memory until the loop ends: memory grows linearly over the epoch
(`N × bytes per batch`), competing with activations for the same device memory. Evaluation over a
large validation set is where this turns into an out-of-memory error.

## Example
```python
preds = []
with torch.no_grad():
    for x, _ in val_loader:
        preds.append(model(x.to(device)))
```

## Use instead
```python
        preds.append(model(x.to(device)).detach().cpu())
```
or reduce on the device as you go (running sums, confusion-matrix counts).

## Fix safety
Unsafe: the collected tensors move to host memory; code that expects them on the GPU afterwards
needs a `.to(device)` when it uses them. A list, tuple or dict of tensors has no `.cpu()`: its fix is
display-only, a host copy of each element.

## Estimated cost
When the kept tensor is a forward's output (or a view or detached copy of it) and the file states
the model's layers and the input's shape, the message ends with the growth per batch: `rows × output
width × bytes per element`.
Validated against the H200 probe: bench/estimates/ states the probe's workload, and a test holds the
estimate within 10% of the measurement.

## Measured cost
Measured (H200, LibTorch 2.11, bf16, width 4096, depth 4, batch 32, seq 2048
(runtime_check/results/h200.json)): `preds.push_back(out)` peaks at 2.5 MiB vs 512.0 KiB for
`preds.push_back(out.cpu())`; growth 256.0 KiB/step vs 0.0 B/step; retained after the run 2.2 MiB vs
0.0 B. Reproduce with `oomlint-probe OOM103`.

## References
- PyTorch docs, CUDA semantics / memory management: https://pytorch.org/docs/stable/notes/cuda.html
)doc",
};

/// A loop over a literal (`(False, True)`, `[0.5, 1.0]`) or `range(3)`: a handful of iterations.
bool fixedLength(const Module& m, NodeId loop) {
  const Stmt& l = m.stmt(loop);
  if (l.kind != StmtKind::For || l.value == kNone) return false;
  const Expr& it = m.expr(l.value);
  if (it.kind == ExprKind::Container) return !shape::isComprehension(it.shape);
  if (it.kind != ExprKind::Call || m.expr(it.lhs).kind != ExprKind::Name || m.expr(it.lhs).text != "range") return false;
  for (const Arg& a : argsOf(m, it))
    if (m.expr(a.value).kind != ExprKind::Number) return false;
  return true;
}

/// A loop over pieces of one sample along a dimension past the batch (`for start in range(0,
/// x.size(1), chunk)`, `while start < x.size(2)`, `for piece in x.split(n, dim=-1)`): what it
/// collects is that sample's output in parts, no more than the result it is joined into, not a
/// growing set of batches.
bool piecesOfOneSample(const Facts& f, NodeId loop) {
  const Module& m = f.module();
  const Stmt& l = m.stmt(loop);
  if (l.value == kNone) return false;
  auto pastBatch = [&](NodeId d) {
    if (d == kNone) return false;
    const Expr& x = m.expr(d);
    if (x.kind == ExprKind::UnaryOp && x.text == "-") return true;  // -1: the last dimension
    return x.kind == ExprKind::Number && x.text != "0";
  };
  // `x.size(2)`, `x.shape[-1]`, or a name bound once to one.
  auto sizePastBatch = [&](NodeId e) {
    if (e != kNone && m.expr(e).kind == ExprKind::Name) e = f.onlyBindingValue(l.function, m.expr(e).text);
    if (e == kNone) return false;
    const Expr& x = m.expr(e);
    if (x.kind == ExprKind::Call && methodName(m, e) == "size" && m.canonical(e).empty()) return pastBatch(positionalArg(m, e, 0));
    return x.kind == ExprKind::Subscript && m.expr(x.lhs).kind == ExprKind::Attribute && m.expr(x.lhs).text == "shape" && pastBatch(x.rhs);
  };
  NodeId it = l.value;
  if (l.kind == StmtKind::While) {
    const Expr& test = m.expr(it);
    if (test.kind != ExprKind::Compare || test.argCount != 2 || (test.text != "<" && test.text != "<=")) return false;
    return sizePastBatch(m.args[test.firstArg + 1].value);
  }
  if (l.kind != StmtKind::For || m.expr(it).kind != ExprKind::Call) return false;
  std::string_view meth = methodName(m, it);
  if ((meth == "split" || meth == "chunk") && m.canonical(it).empty() && receiverOf(m, it) != kNone) {
    NodeId dim = keywordArg(m, it, "dim");
    return pastBatch(dim != kNone ? dim : positionalArg(m, it, 1));
  }
  if (m.expr(m.expr(it).lhs).kind != ExprKind::Name || m.expr(m.expr(it).lhs).text != "range") return false;
  return sizePastBatch(m.expr(it).argCount >= 2 ? positionalArg(m, it, 1) : positionalArg(m, it, 0));
}

/// `e` is what the loop iterates, or a part of it (`x, y = batch`, `batch[0]`, `batch["image"]`):
/// a loader's batch, on the host unless the loop moves it.
bool loopItem(const Facts& f, NodeId e, NodeId loop, int depth) {
  const Module& m = f.module();
  if (e == kNone || depth < 0) return false;
  const Expr& x = m.expr(e);
  if (x.kind == ExprKind::Subscript || x.kind == ExprKind::Attribute) return loopItem(f, x.lhs, loop, depth - 1);
  if (x.kind != ExprKind::Name) return false;
  if (f.bindingSite(e) == loop) return true;  // bound by the loop itself (`for x, y in loader`)
  std::vector<NodeId> defs;
  f.definitionsOf(e, defs);
  for (NodeId d : defs) {
    if (d == loop) return true;
    const Stmt& st = m.stmt(d);
    if (st.kind == StmtKind::Assign && st.value != kNone && loopItem(f, st.value, loop, depth - 1)) return true;
  }
  return false;
}

class Oom103 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }

  void onStatement(Context& ctx, NodeId s) const override {
    const Facts& f = ctx.facts();
    const Module& m = ctx.module();
    Store st;
    if (!recognizeStore(f, s, st)) return;
    if (st.attribute || st.replaces) return;  // one tensor replaced each time: no growth
    // `losses.append(loss.detach())`: a loss a backward runs on is a scalar; keeping those is the
    // recommended form (OOM102), not growth worth a finding.
    NodeId root = st.value;
    while (m.expr(root).kind == ExprKind::Call && receiverOf(m, root) != kNone && m.canonical(root).empty()) root = receiverOf(m, root);
    if (m.expr(root).kind == ExprKind::Name && f.flowsToBackward(m.stmt(s).function, m.expr(root).text)) return;
    const ValueFact& v = f.value(st.value);
    // With history, the graph is what grows (OOM102's finding). Under no_grad nothing new records
    // one, whatever oomlint could not follow.
    bool historyFree = v.history == Tri::No || (v.history == Tri::Unknown && f.gradMode(s) == GradMode::Disabled);
    if (!historyFree || v.device == Tri::No) return;
    // Of unknown device, only a collection copied to the host after this store can tell (asked
    // first: what follows walks the loop).
    bool unknownDevice = v.device != Tri::Yes;
    uint32_t fn = m.stmt(s).function;
    if (unknownDevice && (m.expr(st.container).kind != ExprKind::Name ||
                          f.hostCopyAfter(fn, m.stmt(s).span.end, m.expr(st.container).text) == kNone))
      return;
    NodeId loop = storeOutlivesLoop(f, st, false);
    // A framework step's outputs kept on `self` are the framework's documented pattern (cleared at
    // the epoch's end): only data loops the code runs itself are judged.
    if (loop != kNone && m.stmt(loop).kind == StmtKind::FunctionDef) return;
    if (loop == kNone) return;
    // Where nothing says which device it is on: a value the loop computed (not the loader's
    // batch itself, which is on the host until moved) into a collection the function copies to
    // the host afterwards, as one does with device tensors.
    NodeId hostCopy = kNone;
    if (unknownDevice) {
      if (loopItem(f, st.value, loop, 4)) return;
      hostCopy = f.hostCopyAfter(fn, m.stmt(loop).span.end, m.expr(st.container).text);
      if (hostCopy == kNone) return;
    }
    // A data loop, or a loop that runs an evaluation forward each iteration (over paths, indices).
    if (!(f.loopRole(loop) & (loop_role::kData | loop_role::kEval))) return;
    if (!(f.loopRole(loop) & loop_role::kData) && fixedLength(m, loop)) return;  // `for flip in (False, True)`
    if (piecesOfOneSample(f, loop)) return;  // chunks of one input, joined into its output
    // `input = torch.cat([input, token])` read back by the model: generation's context, not a collection.
    if ((st.concat || st.listConcat) && forwardReading(f, loop, f.pathKey(st.container)) != kNone) return;
    NodeId box = st.container;
    while (m.expr(box).kind == ExprKind::Subscript) box = m.expr(box).lhs;
    Span where = st.reportAt != kNone ? m.expr(st.reportAt).span : m.stmt(s).span;
    Finding& finding = ctx.report(kInfo, where,
                                  ticked(brief(m, st.value, 30)) + " lives on the GPU and is kept in `" + brief(m, box, 30) +
                                      "` across the data loop, so device memory grows with every batch");
    finding.withEstimate(outputOf(f, st.value));
    noteOutside(finding, f, st.container);
    noteLoop(finding, f, loop);
    if (hostCopy != kNone) finding.note(m.expr(hostCopy).span, "copied to the host only here, after the loop");
    // `acc = torch.cat([acc, v])` mixes devices if only `v` moves: advice only.
    // A list of tensors has no `.cpu()`: each element needs its own copy.
    if (v.collection) {
      finding.withFix(Applicability::DisplayOnly, "Keep host copies of its tensors: `[t.detach().cpu() for t in ...]`");
      return;
    }
    if (st.concat || st.listConcat || st.viaMethod) {
      finding.withFix(Applicability::DisplayOnly, "Keep host copies: `.detach().cpu()` (or reduce on the device as you go)");
      return;
    }
    // `out.detach()` only needs the move.
    const Expr& ve = m.expr(st.value);
    bool detached = ve.kind == ExprKind::Call && methodName(m, st.value) == "detach" && ve.argCount == 0;
    std::string repl = detached ? withMethod(m, st.value, ".cpu()", ".cpu()") : withMethod(m, st.value, ".detach().cpu()", ".detach().cpu()");
    finding.withFix(Applicability::Unsafe, "Move it to the host: `" + (repl.size() > 40 ? repl.substr(0, 37) + "..." : repl) + "`",
                    {replaceExpr(m, st.value, repl)});
  }
};

}  // namespace

const Rule& oom103() {
  static const Oom103 rule;
  return rule;
}

}  // namespace oomlint::rules
