// OOM201 eval-forward-with-grad
#include <unordered_set>

#include "rules/common.h"
#include "rules/estimates.h"
#include "rules/registry.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM201",
    "eval-forward-with-grad",
    Severity::Error,
    true,
    true,
    FixKind::Safe,
    true,
    true,
    "A forward pass on an evaluation path runs with autograd enabled",
    R"doc(## What it does
Flags the first forward call on an evaluation or inference path that runs with gradient tracking
enabled: no enclosing `with torch.no_grad():` / `torch.inference_mode()` (context, decorator,
`ExitStack.enter_context(...)`, a `torch.set_grad_enabled(False)` statement; C++
`torch::NoGradGuard`, `c10::InferenceMode`) and no backward on that path.

A forward is a call of a module, of its `forward`, or of a well-known method that runs it
(`forward_features`, `encode_image`, `get_text_features`, `extract_features`, `predict_step`; not
`encode`, `decode` or `generate`: tokenizers have them, and Whisper and Hugging Face run theirs
under their own `no_grad`), or a method of a module class of the file that runs the module's
layers (`model.encode_query(q)` on a `DualEncoder` in eval mode, the class known from the call
sites that pass the model in too).

An evaluation path is a forward of a module that was put in eval mode (`eval()` belongs to its
receiver: after `teacher.eval()` only the teacher's forwards count, and a module passed to a helper
in eval mode is still in eval mode there; `eval()` inside a chain of methods that return the module
counts too: `model = Net().to(device).eval()`, `net = net.eval()`, `model.cuda().eval()`; a loop
that switches every module of a collection switches the collection, `for key in self.model.keys():
self.model[key].eval()` then `self.model["generator"](z)`, and a name whose entries are switched or
asked for their parameters holds modules; a model
a script's own top-level code puts in eval mode is in eval mode in the functions that read it as a
global: those the script calls, and top-level functions nothing in the file calls, such as a
callback handed to a UI or a server; a plain class, no module and no framework's, whose `__init__`
(or a method it calls at its top, `self._load_model(path)`) puts a module it keeps in eval mode
(and does not turn autograd off for the process with a `torch.set_grad_enabled(False)` statement), `self.model.eval()` or `model.eval()` then `self.mdl = model`,
and that never trains, replaces, freezes or switches it back, is an inference wrapper: each of its
methods runs that module in eval mode, whatever the method is called), or a
forward in a function named for evaluation
(`evaluate`, `validate`, `predict`, `run_inference` ...) that iterates a data loader, returns the
forward's output or is named with the verb first. Across modules of a project the same holds: a
helper of `utils.py` that `train.py` calls only under `no_grad` runs without a graph, and one it
calls with a module in eval mode is on an evaluation path (the fix is then marked unsafe: it is
made in the helper, for callers elsewhere). Lightning's `validation_step`, `test_step` and
`predict_step` and a Hugging Face Trainer's `prediction_step` run under the framework's `no_grad`.
A module's own methods (`inference`, `predict`
of an `nn.Module`) are not entry points: their callers choose the grad mode, unless the module
trains itself (a method of its class steps an optimizer or runs a backward), when its evaluation
methods are evaluations like any other, or the method walks a data loader itself (`def
validate(self, loader): self.eval(); for x, y in loader: self(x)`). An `eval()` under a test of what the object is
(`if hasattr(model, "eval"):`, `if isinstance(model, nn.Module):`) holds on both paths: where the
test fails the object is no module and runs no module's forward. A helper of the file that runs
the forward, called on an evaluation path while its other callers do not all evaluate (a training
step calls it before its backward) or run it under `no_grad` (so the helper has no grad mode of its
own), is reported at the call made with autograd on: the helper itself stays as it is, and the fix,
wrapping the call, is unsafe. In C++, where no test framework names its tests so, `test_model(net,
loader)` and `runTest` are evaluation functions too. A function a training
step of the file also calls (in the iteration of a loop that backpropagates, or before a backward)
is not an evaluation function. One called between steps (`evaluate(model, val_loader)` after the
batch loop, inside the epoch loop) is, when it runs its own batches: a data loop with a forward. `model.generate()`, tokenizers,
pipelines and constructors (`ToyModel().to(rank)`) are not forwards.

Code may train or evaluate as a variable says: a parameter (`def run_epoch(model, loader,
is_train)`, `mode == "train"`) that a call of the file sets to a literal with autograd on
(`run_epoch(model, val_loader, False)`), or a loop over literals (`for phase in ["train",
"val"]:`). Where the value puts a module in eval mode (`model.eval()` under a test of the variable
that the value passes, or `model.train(is_train)` with a false value) and no backward or optimizer
step runs (each sits under `if is_train:` / `if phase == "train":`), the forwards that still run
with autograd on are an evaluation with autograd enabled. Silent when the call is under
`no_grad`, when the forward runs under `torch.set_grad_enabled(is_train)` or only in the training
branch, or when a backward runs whatever the value. The fix is display-only: `with
torch.set_grad_enabled(is_train):` around the forward keeps the training path as it is.

The data flow shows an evaluation too, whatever the function's name and the module's mode: a
forward whose output reaches nothing but uses that drop its history (`.detach()`, `.item()`,
`.tolist()`, `argmax`, a comparison), through views, arithmetic, `softmax` and local names, in a
function that runs no backward (`vectors.append(encoder(ids).detach().cpu().numpy())`, often
written after "Can't call numpy() on Tensor that requires grad"). A forward whose result is only
measured (`.shape`, `.numel()`), one in `__init__`, in a test, or in a module's own method (its
callers choose the grad mode), and one whose output is returned, stored, handed to another call or
read by a closure are not judged this way. Its fix is unsafe: a model may differentiate inside its
own forward.

## Why is this bad?
`model.eval()` switches dropout and batch-norm to inference behaviour; it does **not** turn off
autograd. Every forward still records its graph and saves activations for a backward that never
comes: the evaluation peak is about one whole forward's saved activations instead of a couple of
live layer outputs, and if outputs or losses are kept across batches, memory grows linearly.

## Example
```python
model.eval()
for x, y in val_loader:
    out = model(x)
```

## Use instead
```python
model.eval()
with torch.no_grad():
    for x, y in val_loader:
        out = model(x)
```
or decorate the evaluation function with `@torch.no_grad()` (`@torch.inference_mode()`).

## Fix safety
The fix wraps the statement holding the forward (the evaluation loop) in `with torch.no_grad():`,
re-indented with the file's own indentation (C++: inserts `torch::NoGradGuard no_grad;`). It is
**safe** only when every fact behind it is certain on every path: the module was put in eval mode
explicitly (not guessed from a function's name), the module is known from evidence stronger than
its name, no training path of the file calls the function (nor an updating loop between its
steps: what it computes could reach the next step), no backward or step follows the wrapped
code in the function, and the function returns no tensor that might carry history to its caller.
Otherwise it is **unsafe** (`--unsafe-fixes`): an `infer()` helper that a `train_step` also calls
before `backward()` would stop training if it were wrapped.

## Estimated cost
When the file states the model's layers and the input's shape, the message ends with the extra peak:
`max_i(saved before layer i + its live input + t_i) − max_i(t_{i−1} + t_i)`: the forward's peak
with autograd on (every activation saved so far stays) less its peak under `no_grad` (two
consecutive activations), with dropout the identity in eval mode.
Validated against the H200 probe: bench/estimates/ states the probe's workload, and a test holds the
estimate within 10% of the measurement.

## Measured cost
Measured (H200, LibTorch 2.11, bf16, width 4096, depth 4, batch 32, seq 2048
(runtime_check/results/h200.json)): `model.eval(); out = model(x)` peaks at 4.0 GiB vs 1.0 GiB for
`NoGradGuard; out = model(x)`. Reproduce with `oomlint-probe OOM201`.

## References
- `torch.no_grad`: https://pytorch.org/docs/stable/generated/torch.no_grad.html
- Autograd mechanics, "Evaluation mode (nn.Module.eval())": https://pytorch.org/docs/stable/notes/autograd.html
)doc",
};

class Oom201 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }

  void onFunction(Context& ctx, uint32_t fn) const override {
    const Facts& f = ctx.facts();
    for (NodeId s : f.statementsOf(fn)) {
      if (f.gradMode(s) != GradMode::Enabled) continue;
      // The training loop of a function that evaluates when its flag is false.
      for (NodeId c : f.callsOf(s))
        if (const Facts::FlagEval* why = f.flagEvaluation(c)) {
          reportFlagPath(ctx, c, *why);
          return;
        }
      NodeId loop = f.enclosingLoop(s);
      if (loop != kNone && (f.loopRole(loop) & loop_role::kTraining)) continue;
      for (NodeId c : f.callsOf(s)) {
        bool evaluates = f.evalOpener(c) != kNone && (f.isForwardCall(c) || f.helperForward(c) != kNone);
        if (!evaluates && f.discardedAt(c) == kNone) continue;
        report(ctx, fn, s, c);
        return;  // the first forward of the unguarded path
      }
    }
  }

 private:
  static void report(Context& ctx, uint32_t fn, NodeId s, NodeId call) {
    const Module& m = ctx.module();
    const Facts& f = ctx.facts();
    NodeId opener = f.evalOpener(call);
    if (opener == kNone) {
      reportDiscarded(ctx, s, call);
      return;
    }
    Finding& finding = ctx.report(kInfo, m.expr(call).span,
                                  ticked(brief(m, m.expr(call).lhs, 30) + "(...)") +
                                      " runs on an evaluation path with autograd enabled; `eval()` does not disable gradient "
                                      "tracking, so the forward's activations are kept for a backward that never comes");
    NodeId helperForward = f.helperForward(call);  // the call runs a helper that runs the forward
    finding.withEstimate(gradForwardOf(f, helperForward != kNone ? helperForward : call));
    if (helperForward != kNone && f.sharedByEvalPaths(call))
      finding.note(m.expr(helperForward).span, "the helper runs the forward here; each evaluation path that calls it is reported at its own call");
    else if (helperForward != kNone)
      finding.note(m.expr(helperForward).span, "the helper runs the forward here; its other callers do not all evaluate, so the finding is at this call");
    if (opener == Facts::kEvalByName) {
      finding.note(m.functions[fn].nameSpan, ticked(m.functions[fn].name) + " is an evaluation function: named for it, it runs no backward");
    } else if (opener == Facts::kEvalByCaller) {
      finding.note(m.functions[fn].nameSpan, ticked(m.functions[fn].name) +
                                                 " is called from another module with the module in eval mode, and without `no_grad`");
    } else {
      finding.note(f.headerSpan(opener), "the module is put in eval mode here; that switches dropout and batch norm, not autograd");
    }
    noteLoop(finding, f, f.enclosingLoop(s));
    // Wrap the outermost statement that still belongs to the evaluation path: the evaluation loop.
    NodeId wrap = s;
    for (NodeId p = m.stmt(s).parent; p != kNone; p = m.stmt(p).parent) {
      const Stmt& ps = m.stmt(p);
      if (!f.inEvalContext(p) || ps.kind == StmtKind::ClassDef || ps.kind == StmtKind::FunctionDef) break;
      if (f.gradMode(p) != GradMode::Enabled) break;
      if (ps.kind == StmtKind::With) break;  // keep inside the user's own context managers
      if (ps.kind == StmtKind::Try || ps.kind == StmtKind::If) {
        wrap = p;
        continue;
      }
      if ((ps.kind == StmtKind::For || ps.kind == StmtKind::While) && !(f.loopRole(p) & loop_role::kTraining)) {
        wrap = p;
        continue;
      }
      break;
    }
    Applicability applicability = fixApplicability(f, fn, wrap, opener);
    // What a helper returns after its forward is the caller's to use: never wrapped on our word alone.
    if (helperForward != kNone && applicability == Applicability::Safe) applicability = Applicability::Unsafe;
    if (m.lang == Lang::Cpp) {
      // C++: a RAII guard scoped to the rest of the block that holds the evaluation.
      Edit edit;
      if (!insertStatementBefore(m, wrap, "torch::NoGradGuard no_grad;", edit)) {
        finding.withFix(Applicability::DisplayOnly, "Insert `torch::NoGradGuard no_grad;` at the start of the evaluation scope");
        return;
      }
      finding.withFix(applicability, "Insert `torch::NoGradGuard no_grad;` at the start of the evaluation scope", {edit});
      return;
    }
    std::string ctxName = localName(m, "torch.no_grad");
    Edit edit;
    if (ctxName.empty() || !wrapInWith(m, wrap, ctxName + "()", edit)) {
      finding.withFix(Applicability::DisplayOnly, "Wrap the evaluation in `with torch.no_grad():`");
      return;
    }
    finding.withFix(applicability, "Wrap the evaluation in `with torch.no_grad():`", {edit});
  }

  /// A forward on the path where a flag holds the literal that makes it evaluate: the training
  /// path shares the statement, so only advice that keeps it is given.
  static void reportFlagPath(Context& ctx, NodeId call, const Facts::FlagEval& why) {
    const Module& m = ctx.module();
    const Facts& f = ctx.facts();
    std::string flag(why.var), value(m.textOf(why.value));
    Finding& finding = ctx.report(kInfo, m.expr(call).span,
                                  ticked(brief(m, m.expr(call).lhs, 30) + "(...)") + " runs with autograd enabled where `" + flag +
                                      "` is `" + value +
                                      "`, an evaluation path: the module is in eval mode and no backward follows, so the "
                                      "forward's activations are kept for nothing");
    finding.withEstimate(gradForwardOf(f, call));
    finding.note(f.headerSpan(why.opener), "the module is put in eval mode here when `" + flag + "` is `" + value + "`");
    if (why.byLoop) finding.note(f.headerSpan(why.site), "the loop gives `" + flag + "` the value `" + value + "`");
    else finding.note(m.expr(why.site).span, "called here with `" + flag + "` = `" + value + "` and autograd on");
    if (m.lang == Lang::Cpp) {
      finding.withFix(Applicability::DisplayOnly, "Turn autograd off on that path: `torch::AutoGradMode grad_mode(" + flag + ");`");
      return;
    }
    std::string training = m.expr(why.value).kind == ExprKind::Bool ? flag : flag + " != " + value;
    finding.withFix(Applicability::DisplayOnly, "Run the forward under `with torch.set_grad_enabled(" + training + "):`");
  }

  /// A forward whose output is used only with its history dropped: the graph it records is
  /// thrown away unused. Wrapping the statement changes no value the function computes, but the
  /// module's own forward may need autograd (a model that differentiates inside), so the fix is
  /// unsafe.
  static void reportDiscarded(Context& ctx, NodeId s, NodeId call) {
    const Module& m = ctx.module();
    const Facts& f = ctx.facts();
    NodeId sink = f.discardedAt(call);
    Finding& finding = ctx.report(kInfo, m.expr(call).span,
                                  ticked(brief(m, m.expr(call).lhs, 30) + "(...)") +
                                      " runs with autograd enabled, but its output is only used with its history dropped: the "
                                      "forward's activations are kept for a backward that never comes");
    finding.withEstimate(gradForwardOf(f, call));
    finding.note(m.expr(sink).span, "the output's graph is dropped here; nothing else uses it");
    noteLoop(finding, f, f.enclosingLoop(s));
    // Only the statement that runs the forward is wrapped. A C++ guard would hold to the end of
    // the block, and wrapping a compound statement (`if model(x).argmax() == k:`) would take its
    // body along: both are left to the reader.
    if (m.lang == Lang::Cpp) {
      finding.withFix(Applicability::DisplayOnly, "Run the forward in a scope that holds a `torch::NoGradGuard`");
      return;
    }
    StmtKind kind = m.stmt(s).kind;
    bool simple = kind == StmtKind::Assign || kind == StmtKind::Expr || kind == StmtKind::Return || kind == StmtKind::AugAssign;
    std::string ctxName = localName(m, "torch.no_grad");
    Edit edit;
    if (!simple || ctxName.empty() || !wrapInWith(m, s, ctxName + "()", edit)) {
      finding.withFix(Applicability::DisplayOnly, "Wrap the forward in `with torch.no_grad():`");
      return;
    }
    finding.withFix(Applicability::Unsafe, "Wrap the forward in `with torch.no_grad():`", {edit});
  }

  /// Safe only when every fact behind the finding is certain on every path: the module was put in
  /// eval mode explicitly (not guessed from a name), no training path of this file reaches the
  /// wrapped code (a helper a `train_step` also calls before `backward()`), nothing in the wrapped
  /// statements or after them in the function trains, the function returns no tensor that might
  /// carry history to its caller, and the forward is a module known from evidence stronger than
  /// its name.
  static Applicability fixApplicability(const Facts& f, uint32_t fn, NodeId wrap, NodeId opener) {
    if (opener == Facts::kEvalByName || opener == Facts::kEvalByCaller) return Applicability::Unsafe;
    const Summary& sum = f.summary(fn);
    if (sum.calledOnTrainingPath || f.calledBetweenSteps(fn)) return Applicability::Unsafe;
    // A backward or step after the wrapped code in this function may use what it computes.
    for (const StepEvent& e : f.events(fn))
      if ((e.kind & event::kUpdate) && f.mayPrecede(wrap, e.stmt)) return Applicability::Unsafe;
    // A returned tensor would lose its history: a caller may differentiate through it.
    if (sum.returns.history != Tri::No) return Applicability::Unsafe;
    if (f.reachesEvent(wrap, event::kUpdate)) return Applicability::Unsafe;
    const Module& m = f.module();
    bool weak = false;
    for (NodeId s : f.statementsWithin(wrap)) {
      for (NodeId c : f.callsOf(s))
        if (f.isForwardCall(c) && f.evalOpener(c) != kNone) {
          NodeId callee = m.expr(c).lhs;
          if (m.expr(callee).kind == ExprKind::Attribute && m.expr(callee).text == "forward") callee = m.expr(callee).lhs;
          if (f.kindEvidence(callee) < Evidence::Used) weak = true;
        }
    }
    return weak ? Applicability::Unsafe : Applicability::Safe;
  }
};

}  // namespace

const Rule& oom201() {
  static const Oom201 rule;
  return rule;
}

}  // namespace oomlint::rules
