// OOM101 accumulated-tensor-with-graph
#include "rules/common.h"
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
`total = total + loss`, `meter.update(loss)`, `running[k] += loss`.

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
    NodeId target = kNone, value = kNone, targetUse = kNone;
    if (st.kind == StmtKind::AugAssign && (st.op == "+=" || st.op == "-=")) {
      target = st.target;
      value = st.value;
      targetUse = target;
    } else if (st.kind == StmtKind::Assign && st.targets.count == 1 && st.value != kNone &&
               m.expr(st.value).kind == ExprKind::BinOp && (m.expr(st.value).text == "+" || m.expr(st.value).text == "-")) {
      // `total = total + loss` / `total = loss + total`
      target = st.target;
      std::string_view key = f.pathKey(target);
      const Expr& bin = m.expr(st.value);
      if (key.empty()) return;
      if (f.pathKey(bin.lhs) == key) {
        value = bin.rhs;
        targetUse = bin.lhs;
      } else if (f.pathKey(bin.rhs) == key && bin.text == "+") {
        value = bin.lhs;
        targetUse = bin.rhs;
      } else {
        return;
      }
    } else if (st.kind == StmtKind::Expr && st.value != kNone && methodName(m, st.value) == "update") {
      // `meter.update(loss, n)`: AverageMeter-style objects add the value to a running sum.
      NodeId recv = receiverOf(m, st.value);
      std::string_view key = f.pathKey(recv);
      if (key.empty()) return;
      std::string lower;
      for (char c : key) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (lower.find("meter") == std::string::npos) return;
      target = recv;
      targetUse = recv;
      value = positionalArg(m, st.value, 0);
    } else {
      return;
    }
    if (!isTrackable(m, target) || value == kNone) return;
    check(ctx, s, target, targetUse, value);
  }

 private:
  static void check(Context& ctx, NodeId s, NodeId target, NodeId targetUse, NodeId value) {
    const Module& m = ctx.module();
    const Facts& f = ctx.facts();
    NodeId loop = f.enclosingLoop(s);
    if (loop == kNone) return;
    uint8_t role = f.loopRole(loop);
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
    if (flowsToBackward(f, fn, key)) return;
    bool trainsOrEvaluates = (role & (loop_role::kTraining | loop_role::kEval)) != 0;
    if (!trainsOrEvaluates && isReturned(f, fn, key)) return;
    std::string what = brief(m, value, 30);
    Finding& finding = ctx.report(kInfo, m.stmt(s).span,
                                  ticked(what) + " carries autograd history and is accumulated into `" +
                                      std::string(key) + "` across iterations, keeping every step's graph alive");
    finding.hasFix = true;
    finding.fix.applicability = Applicability::Unsafe;
    std::string repl = withMethod(m, value, ".item()", ".item<double>()");
    finding.fix.message = "Accumulate `" + brief(m, value, 30) + (ctx.lang() == Lang::Python ? ".item()`" : ".item<double>()`");
    finding.fix.edits.push_back(replaceExpr(m, value, repl));
  }
};

}  // namespace

const Rule& oom101() {
  static const Oom101 rule;
  return rule;
}

}  // namespace oomlint::rules
