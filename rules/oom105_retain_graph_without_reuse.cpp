// OOM105 retain-graph-without-reuse
#include <set>

#include "rules/common.h"
#include "rules/estimates.h"
#include "rules/registry.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM105",
    "retain-graph-without-reuse",
    Severity::Error,
    true,
    true,
    FixKind::Unsafe,
    true,
    true,
    "backward(retain_graph=True) on a graph that gets no second backward",
    R"doc(## What it does
Flags `loss.backward(retain_graph=True)` and `torch.autograd.grad(..., retain_graph=True)` inside a
loop when the graph was built in the same iteration and nothing runs a second backward over it
before the iteration ends. A step that a loop of the file (or a training framework) runs once per
batch counts as an iteration (`def train_step(self, x, y): ... loss.backward(retain_graph=True)`),
when the step builds the graph itself and neither it nor its caller backpropagates again
afterwards. A method that no code of the file calls (a loss object's `gen_loss(self, fake_out)`,
run by a training loop in another file) counts too, when another class of the file implements the
same method with a plain `backward()` over the same parameter's graph: code written for either
object lets that graph go after the call. It must keep nothing with history past its return.

Silent when part of the graph comes from before the iteration, since the next backward runs
through that part again: a trunk computed outside a loop over task heads, state carried from the
previous iteration (`out, h = rnn(x, h)`, which is OOM107's finding), a generator's output handed
to a discriminator step, or a tensor another method kept on `self`.

A later backward in the same iteration counts as reuse only when its graph may share nodes with
the retained one. Graphs built apart are told by the calls each loss is computed from in the
iteration: a generator step on a fresh forward after a critic step on a detached fake does not
need the critic's graph (modules, optimizers and imported names are no graph nodes; a value from
before the iteration or held on `self` may be any graph, so it counts as shared).

## Why is this bad?
`retain_graph=True` tells autograd to keep the graph's saved tensors after the backward. When no
second backward uses them, they stay alive until the graph is garbage: at least one extra forward's
activations at the peak, and linear growth when graphs chain across iterations (for example through
a running total or a carried hidden state).

## Example
```python
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward(retain_graph=True)
    optimizer.step()
```

## Use instead
```python
    loss.backward()
```
Keep `retain_graph=True` only when a second backward over the same graph follows (several losses
sharing one forward, higher-order gradients).

## Fix safety
Unsafe: if some code oomlint cannot see runs another backward over this graph, it will fail with
"Trying to backward through the graph a second time".

## Estimated cost
When the file states the model's layers and the input's shape, the message ends with what the
retained graph keeps while the loss is referenced: `A_fwd + loss` (as for OOM101).
Validated against the H200 probe: bench/estimates/ states the probe's workload, and a test holds the
estimate within 10% of the measurement.

## Measured cost
Measured (H200, LibTorch 2.11, bf16, width 4096, depth 4, batch 32, seq 2048
(runtime_check/results/h200.json)): `loss.backward(retain_graph=true)` peaks at 164.5 MiB vs 160.0
MiB for `loss.backward()`; retained after the run 130.3 MiB vs 128.0 MiB. Reproduce with
`oomlint-probe OOM105`.

## References
- `torch.Tensor.backward`: https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html
)doc",
};

class Oom105 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }

  void onCall(Context& ctx, NodeId call) const override {
    const Facts& f = ctx.facts();
    const Module& m = ctx.module();
    bool grad = f.isAutogradGradCall(call);
    if (!f.isBackwardCall(call) && !grad) return;
    // A flag that is not a literal may be False on every call that matters: stay silent.
    if (f.flagArg(call, "retain_graph") != Tri::Yes) return;
    NodeId s = m.expr(call).stmt;
    // A loop of this function, or a step a loop of the file (or a framework) runs per batch.
    NodeId loop = f.enclosingLoop(s);
    if (loop == kNone) loop = f.stepIterationOf(s);
    // Or a step that another file runs (a loss object's method): only when its callers let go of
    // the graph it retains, as another implementation of the same method shows.
    uint32_t fn = m.stmt(s).function;
    bool external = loop == kNone && (loop = f.externalStepOf(fn)) != kNone;
    if (loop == kNone) return;
    // The graph must be built in this iteration: a graph built before the loop is legitimately
    // reused by each iteration's backward.
    NodeId subject = f.backwardSubject(call);
    if (subject == kNone || !builtInIteration(f, subject, loop)) return;
    // Part of the graph was built before this iteration (`feats = model(x)` outside a loop over
    // task heads): the next iteration's backward runs through it again.
    int budget = 64;
    if (readsOlderGraph(f, subject, loop, budget)) return;
    // The other implementation that lets the graph go (the evidence of an external step).
    NodeId letGoAt = kNone;
    if (external && !callersLetGo(f, fn, subject, letGoAt)) return;
    // A later backward of the same iteration (here, in a function called here, or after the call
    // of the step) may reuse it.
    if (laterBackward(f, call, loop)) return;
    Finding& finding = ctx.report(kInfo, m.expr(call).span,
                                  std::string(m.lang == Lang::Python ? "`retain_graph=True`" : "`retain_graph` = true") +
                                      " keeps this iteration's graph and its saved tensors alive, but no second backward uses them");
    finding.withEstimate(graphOf(f, subject, "retained"));
    noteHistory(finding, f, subject);
    noteLoop(finding, f, loop);
    if (external) noteOtherImplementation(finding, f, letGoAt);
    Edit edit;
    // C++ arguments are positional: only the last written one can go without shifting the others.
    const Expr& ce = m.expr(call);
    bool removable = m.lang == Lang::Python || (ce.argCount > 0 && m.args[ce.firstArg + ce.argCount - 1].keyword == "retain_graph");
    if (removable && removeKeywordArg(m, call, "retain_graph", edit))
      finding.withFix(Applicability::Unsafe, m.lang == Lang::Python ? "Remove `retain_graph=True`" : "Remove the `retain_graph` argument",
                      {edit});
  }

 private:
  static bool isStep(const Facts& f, NodeId iteration) { return f.module().stmt(iteration).kind == StmtKind::FunctionDef; }

  /// In a step no code of the file calls: the retained graph is built here from parameters whose
  /// graphs the callers let go after the call (another implementation shows it), and from
  /// nothing else that may carry history; the step keeps nothing with history.
  static bool callersLetGo(const Facts& f, uint32_t fn, NodeId subject, NodeId& evidence) {
    Facts::LetGo letGo = f.graphsLetGoByCallers(fn);
    evidence = letGo.evidence;
    uint32_t from = 0;
    if (letGo.evidence == kNone || !f.graphInputs(subject, from)) return false;
    return (from & ~letGo.params) == 0 && !f.keepsHistoryPastCall(fn);
  }

  /// Why the callers of a step no code of the file runs let its arguments' graphs go.
  static void noteOtherImplementation(Finding& finding, const Facts& f, NodeId evidence) {
    const Module& m = f.module();
    if (evidence == kNone) return;
    const Function& other = m.functions[m.stmt(m.expr(evidence).stmt).function];
    std::string name(m.classes[static_cast<size_t>(other.cls)].name);
    name += '.';
    name += other.name;
    finding.note(m.expr(evidence).span,
                 ticked(name) + " frees the graph of the same argument here: code that calls either one backpropagates through it once");
  }

  /// A backward or autograd.grad that may run after `call` in the same iteration.
  static bool laterBackward(const Facts& f, NodeId call, NodeId loop) {
    const Module& m = f.module();
    NodeId s = m.expr(call).stmt;
    bool step = isStep(f, loop);
    std::set<NodeId> retained;
    int budget = 256;
    bool retainedKnown = !step && graphSources(f, f.backwardSubject(call), loop, retained, budget);
    for (const StepEvent& e : f.events(m.stmt(s).function)) {
      if (!(e.kind & (event::kBackward | event::kAutogradGrad)) || (!step && !f.within(e.stmt, loop))) continue;
      bool later = e.stmt == s ? (e.call != call && m.expr(e.call).span.begin > m.expr(call).span.begin) : f.mayPrecede(s, e.stmt);
      if (!later) continue;
      // A later backward over a graph built apart from this one (the generator's step after the
      // discriminator's, on a fresh forward and a detached fake) does not need it retained.
      std::set<NodeId> other;
      if (retainedKnown && graphSources(f, f.backwardSubject(e.call), loop, other, budget) && disjoint(retained, other)) continue;
      return true;
    }
    if (!step) return false;
    // The loop that calls the step: a backward after the call, in the same iteration.
    NodeId site = f.stepCallOf(m.stmt(loop).def);
    if (site == kNone) return false;
    NodeId siteStmt = m.expr(site).stmt;
    NodeId outer = f.stepIterationOf(siteStmt);
    for (const StepEvent& e : f.events(m.stmt(siteStmt).function)) {
      if (!(e.kind & (event::kBackward | event::kAutogradGrad)) || e.call == site) continue;
      if (outer != kNone && !isStep(f, outer) && !f.within(e.stmt, outer)) continue;
      if (e.stmt == siteStmt ? m.expr(e.call).span.begin > m.expr(site).span.begin : f.mayPrecede(siteStmt, e.stmt)) return true;
    }
    return false;
  }

  /// The calls of this iteration whose results a value is built from, followed through the
  /// iteration's assignments: the nodes of its graph that the iteration made. False when part of
  /// it may come from elsewhere (bound before the iteration or carried into it, held on an object,
  /// of unknown history): then it may share any graph. Values without history add nothing.
  static bool graphSources(const Facts& f, NodeId e, NodeId loop, std::set<NodeId>& out, int& budget) {
    const Module& m = f.module();
    if (e == kNone) return false;
    if (--budget < 0) return false;
    if (f.value(e).history == Tri::No || holdsNoGraph(f.kindOf(e))) return true;
    const Expr& x = m.expr(e);
    switch (x.kind) {
      case ExprKind::Name: {
        if (!m.canonical(e).empty()) return true;  // an imported name: `torch`, `Tensor`
        NodeId b = f.bindingLoop(e);
        if (b == kBoundAmbiguous || carried(f, e, loop)) return false;
        if (b == kBoundOutsideLoops || !f.within(b, loop)) return fixedBefore(f, e, 8);
        std::vector<NodeId> defs;
        f.definitionsOf(e, defs);
        if (defs.empty()) return false;
        for (NodeId d : defs) {
          const Stmt& st = m.stmt(d);
          // A batch of a data loop is fresh input: no graph of the iteration's making.
          if (st.kind == StmtKind::For && (f.loopRole(d) & loop_role::kData)) continue;
          if (st.kind != StmtKind::Assign || !graphSources(f, st.value, loop, out, budget)) return false;
        }
        return true;
      }
      case ExprKind::Call: {
        out.insert(e);
        // `torch.mean(x)`: the receiver is a module of imports, not a value.
        NodeId recv = m.canonical(e).empty() ? receiverOf(m, e) : kNone;
        if (recv != kNone && !graphSources(f, recv, loop, out, budget)) return false;
        for (const Arg& a : argsOf(m, x))
          if (!graphSources(f, a.value, loop, out, budget)) return false;
        return true;
      }
      case ExprKind::Attribute:  // `model.fc`, `out.logits`: what its object is made of
        if (f.kindOf(x.lhs) == Kind::Module) return true;
        return x.lhs != kNone && !isSelfName(m, x.lhs) && graphSources(f, x.lhs, loop, out, budget);
      case ExprKind::Subscript:
        return graphSources(f, x.lhs, loop, out, budget) && (x.rhs == kNone || graphSources(f, x.rhs, loop, out, budget));
      case ExprKind::BinOp:
        return graphSources(f, x.lhs, loop, out, budget) && graphSources(f, x.rhs, loop, out, budget);
      case ExprKind::UnaryOp: return graphSources(f, x.lhs, loop, out, budget);
      case ExprKind::Container:
      case ExprKind::Conditional:
        for (const Arg& a : argsOf(m, x))
          if (!graphSources(f, a.value, loop, out, budget)) return false;
        return true;
      case ExprKind::Number:
      case ExprKind::String:
      case ExprKind::Bool:
      case ExprKind::NoneLit: return true;
      default: return false;
    }
  }

  /// What these kinds denote is no graph node: a module's parameters are leaves that any number
  /// of graphs share without retaining each other.
  static bool holdsNoGraph(Kind k) {
    switch (k) {
      case Kind::Module:
      case Kind::ModuleCollection:
      case Kind::LossFn:
      case Kind::Optimizer:
      case Kind::Scheduler:
      case Kind::Scaler:
      case Kind::Tokenizer:
      case Kind::Loader:
      case Kind::Class:
      case Kind::Function:
      case Kind::Device:
      case Kind::Value: return true;
      default: return false;
    }
  }

  /// A name bound before the iteration to something that is no graph: a literal, an imported
  /// name or attribute (`Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor`), or a
  /// choice or collection of those. A parameter or anything computed may be a graph.
  static bool fixedBefore(const Facts& f, NodeId e, int depth) {
    const Module& m = f.module();
    if (e == kNone || depth < 0) return false;
    const Expr& x = m.expr(e);
    if (!m.canonical(e).empty()) return x.kind == ExprKind::Name || x.kind == ExprKind::Attribute;
    switch (x.kind) {
      case ExprKind::Number:
      case ExprKind::String:
      case ExprKind::Bool:
      case ExprKind::NoneLit: return true;
      case ExprKind::Name: {
        std::vector<NodeId> defs;
        f.definitionsOf(e, defs);
        if (defs.empty()) return false;
        for (NodeId d : defs)
          if (m.stmt(d).kind != StmtKind::Assign || !fixedBefore(f, m.stmt(d).value, depth - 1)) return false;
        return true;
      }
      case ExprKind::Conditional: {  // {body, cond, else}: the test is no part of the value
        auto parts = argsOf(m, x);
        size_t i = 0;
        for (const Arg& a : parts)
          if (i++ != 1 && !fixedBefore(f, a.value, depth - 1)) return false;
        return true;
      }
      case ExprKind::Container:
        for (const Arg& a : argsOf(m, x))
          if (!fixedBefore(f, a.value, depth - 1)) return false;
        return true;
      default: return false;
    }
  }

  static bool disjoint(const std::set<NodeId>& a, const std::set<NodeId>& b) {
    for (NodeId x : a)
      if (b.count(x)) return false;
    return true;
  }

  /// In a step: parameter `name` receives a value with history at the call that runs the step.
  static bool passedWithHistory(const Facts& f, NodeId step, std::string_view name) {
    const Module& m = f.module();
    NodeId site = f.stepCallOf(m.stmt(step).def);
    if (site == kNone) return false;
    Facts::Callee callee = f.calleeOf(site);
    for (uint32_t i = 0; i < callee.params.size(); ++i)
      if (callee.params[i] == name) {
        NodeId arg = callee.argFor(m, site, i);
        return arg != kNone && f.value(arg).history == Tri::Yes;
      }
    return false;
  }

  /// The value reads, directly or through this iteration's assignments, a name with history that
  /// was bound before the iteration began.
  static bool readsOlderGraph(const Facts& f, NodeId e, NodeId loop, int& budget) {
    const Module& m = f.module();
    if (e == kNone || --budget < 0) return false;
    // `model.forward(x)`: a module (an optimizer, a loss function) is no graph, though its
    // parameters make what it computes carry history.
    if (holdsNoGraph(f.kindOf(e))) return false;
    const Expr& x = m.expr(e);
    if (isStep(f, loop)) {
      // A step's parameters come from its caller; what lives on `self` was set by another call.
      if (x.kind == ExprKind::Name && f.bindingSite(e) == kNone)
        return !isSelfName(m, e) && passedWithHistory(f, loop, x.text);
      if (x.kind == ExprKind::Attribute && isSelfName(m, x.lhs))
        return f.kindOf(e) != Kind::Module && f.value(e).history != Tri::No;
    }
    if (x.kind == ExprKind::Name) {
      // Bound before the iteration, or carried from the previous one (`h` in `out, h = rnn(x, h)`).
      NodeId b = f.bindingLoop(e);
      if (b == kBoundAmbiguous || carried(f, e, loop)) return f.value(e).history != Tri::No;
      if (!isStep(f, loop) && (b == kBoundOutsideLoops || !f.within(b, loop))) return f.value(e).history == Tri::Yes;
      std::vector<NodeId> defs;
      f.definitionsOf(e, defs);
      for (NodeId d : defs)
        if (d != m.expr(e).stmt && readsOlderGraph(f, m.stmt(d).value, loop, budget)) return true;
      return false;
    }
    // `self.hidden` read here and rebound later in the loop: the previous iteration's state.
    if (x.kind == ExprKind::Attribute && !isStep(f, loop) && rebindsInLoop(f, x.text, loop))
      return f.value(e).history != Tri::No;
    if (x.kind == ExprKind::Lambda) return false;
    if (x.lhs != kNone && x.kind != ExprKind::Call && readsOlderGraph(f, x.lhs, loop, budget)) return true;
    if (x.rhs != kNone && readsOlderGraph(f, x.rhs, loop, budget)) return true;
    if (x.kind == ExprKind::Call) {
      NodeId recv = receiverOf(m, e);
      if (recv != kNone && readsOlderGraph(f, recv, loop, budget)) return true;
    }
    for (const Arg& a : argsOf(m, x))
      if (readsOlderGraph(f, a.value, loop, budget)) return true;
    return false;
  }

  /// `h`, read here, is also rebound in the loop at or after this read: the value of the previous
  /// iteration comes back.
  static bool carried(const Facts& f, NodeId name, NodeId loop) {
    const Module& m = f.module();
    NodeId reader = m.expr(name).stmt;
    // `fake = G(z)` earlier in the same iteration is the only binding that reaches the read: the
    // later `fake = G(z)` is for the rest of this iteration, not the next one.
    NodeId site = f.reachingAssignment(name);
    if (site != kNone && site != reader && f.within(site, loop) && m.stmt(site).span.begin < m.stmt(reader).span.begin) return false;
    for (NodeId a : f.assignmentsOf(m.stmt(reader).function, m.expr(name).text))
      if (f.within(a, loop) && m.stmt(a).span.begin >= m.stmt(reader).span.begin) return true;
    return false;
  }

  /// A statement of the loop rebinds attribute `attr` of some object (`out, self.h = rnn(x,
  /// self.h)`): Facts::attributeWriters lists them for the file.
  static bool rebindsInLoop(const Facts& f, std::string_view attr, NodeId loop) {
    for (NodeId w : f.attributeWriters(attr))
      if (f.within(w, loop)) return true;
    return false;
  }

  /// True when the backpropagated tensor comes from this iteration: a Name bound inside the loop,
  /// or an expression made of such names or of calls evaluated here.
  static bool builtInIteration(const Facts& f, NodeId e, NodeId loop) {
    const Module& m = f.module();
    const Expr& x = m.expr(e);
    switch (x.kind) {
      case ExprKind::Name: {
        if (isStep(f, loop)) return f.bindingSite(e) != kNone;  // a local of the step
        NodeId b = f.bindingLoop(e);
        return b != kBoundOutsideLoops && b != kBoundAmbiguous && f.within(b, loop);
      }
      case ExprKind::Call: {
        // A forward or loss evaluated here builds a new graph; other calls (views, scaler.scale)
        // build on their operands.
        if (f.isForwardCall(e) || f.isLossCall(e)) return f.value(e).history == Tri::Yes;
        NodeId recv = receiverOf(m, e);
        if (recv != kNone && builtInIteration(f, recv, loop)) return true;
        for (const Arg& a : argsOf(m, x))
          if (builtInIteration(f, a.value, loop)) return true;
        return false;
      }
      case ExprKind::Subscript:
      case ExprKind::Attribute: return x.lhs != kNone && builtInIteration(f, x.lhs, loop);
      case ExprKind::BinOp: return builtInIteration(f, x.lhs, loop) || builtInIteration(f, x.rhs, loop);
      case ExprKind::Container:
        for (const Arg& a : argsOf(m, x))
          if (builtInIteration(f, a.value, loop)) return true;
        return false;
      default: return false;
    }
  }
};

}  // namespace

const Rule& oom105() {
  static const Oom105 rule;
  return rule;
}

}  // namespace oomlint::rules
