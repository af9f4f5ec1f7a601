// The static cost estimates (estimates.h): each rule's formula over the sizes the file states.
#include "rules/estimates.h"

#include <algorithm>

#include "facts/sizes.h"
#include "util/bytes.h"

namespace oomlint::rules {

namespace {

/// `value` read through the names bound to it, to the expression that made it.
NodeId resolve(const Facts& f, NodeId e) {
  const Module& m = f.module();
  for (int hop = 0; hop < 8 && m.expr(e).kind == ExprKind::Name && m.expr(e).stmt != kNone; ++hop) {
    NodeId site = f.reachingAssignment(e);
    if (site == kNone) return e;
    const Stmt& s = m.stmt(site);
    if (s.kind != StmtKind::Assign || s.targets.count != 1 || m.expr(s.target).kind != ExprKind::Name) return e;
    e = s.value;
  }
  return e;
}

bool isView(std::string_view method) {
  return method == "view" || method == "reshape" || method == "flatten" || method == "squeeze" || method == "contiguous";
}

struct Graph {
  ForwardSizes fwd;
  double loss = 0;     // what the loss between the forward and the value saves
  bool isOutput = false;  // the value is the forward's output (or a view of it)
};

/// The forward behind `value` (its history's origin) and the loss between them, when both are
/// known: `value` is the output itself, or a loss of it (`criterion(out, y)`,
/// `F.mse_loss(out.float(), y)`), or a reduction of such a loss (`loss.mean()`).
std::optional<Graph> graphBehind(const Facts& f, NodeId value) {
  const Module& m = f.module();
  NodeId origin = f.value(value).origin;
  if (origin == kNone || !f.isForwardCall(origin)) return std::nullopt;
  auto fwd = f.sizes().forwardOf(origin);
  if (!fwd) return std::nullopt;
  Graph g{*fwd, 0, false};
  NodeId e = resolve(f, value);
  for (int hop = 0; hop < 4; ++hop) {
    std::string_view meth = methodName(m, e);
    if (e == origin || (isView(meth) && resolve(f, receiverOf(m, e)) == origin)) {
      g.isOutput = true;
      return g;
    }
    if (f.isLossCall(e)) {
      // A loss saves one output-sized tensor (its input, or its log-probabilities), in the dtype
      // it computes in: float32 after `.float()`.
      NodeId input = resolve(f, positionalArg(m, e, 0));
      int bytes = fwd->elementBytes;
      std::string_view inMeth = methodName(m, input);
      if (inMeth == "float" && resolve(f, receiverOf(m, input)) == origin) bytes = 4;
      else if (input != origin) return std::nullopt;
      g.loss = fwd->output / fwd->elementBytes * bytes;
      return g;
    }
    // A reduction of a loss (`loss.mean()`, `loss.sum()`) saves nothing more.
    if ((meth == "mean" || meth == "sum") && f.value(receiverOf(m, e)).scalarLoss) {
      e = resolve(f, receiverOf(m, e));
      continue;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

EstimatedCost make(double bytes, std::string measure, std::string formula, std::string basis) {
  EstimatedCost c;
  c.present = true;
  c.bytes = bytes;
  c.measure = std::move(measure);
  c.formula = std::move(formula);
  c.basis = std::move(basis);
  return c;
}

std::string graphFormula(const Graph& g) {
  std::string s = "A_fwd " + humanBytes(g.fwd.saved) + " (activations the forward saves for backward)";
  if (g.loss > 0) s += " + " + humanBytes(g.loss) + " (what the loss saves)";
  return s;
}

}  // namespace

EstimatedCost graphOf(const Facts& f, NodeId value, std::string measure) {
  auto g = graphBehind(f, value);
  if (!g) return {};
  return make(g->fwd.saved + g->loss, std::move(measure), graphFormula(*g), g->fwd.basis);
}

EstimatedCost storedGraphOf(const Facts& f, NodeId value) {
  auto g = graphBehind(f, value);
  if (!g) return {};
  double bytes = g->fwd.saved + g->loss - (g->isOutput && g->fwd.outputSaved ? g->fwd.output : 0);
  std::string formula = graphFormula(*g);
  if (g->isOutput && g->fwd.outputSaved) formula += " - the stored output, which the detached copy keeps too";
  return make(bytes, "growth", formula, g->fwd.basis);
}

EstimatedCost outputOf(const Facts& f, NodeId value) {
  const Module& m = f.module();
  NodeId e = resolve(f, value);
  // `out`, `out.detach()`, `out.argmax(-1)` is not a forward's output size: only the output or a view.
  for (int hop = 0; hop < 3 && m.expr(e).kind == ExprKind::Call && !f.isForwardCall(e); ++hop) {
    std::string_view meth = methodName(m, e);
    if (meth != "detach" && !isView(meth)) return {};
    e = resolve(f, receiverOf(m, e));
  }
  if (!f.isForwardCall(e)) return {};
  auto fwd = f.sizes().forwardOf(e);
  if (!fwd) return {};
  return make(fwd->output, "growth", "one batch of outputs, " + humanBytes(fwd->output), fwd->basis);
}

EstimatedCost gradForwardOf(const Facts& f, NodeId forwardCall) {
  auto fwd = f.sizes().forwardOf(forwardCall);
  if (!fwd) return {};
  if (fwd->peakGrad <= fwd->peakNoGrad) return {};
  return make(fwd->peakGrad - fwd->peakNoGrad, "peak",
              "the forward's peak with autograd on, " + humanBytes(fwd->peakGrad) +
                  " (activations saved so far + the live layer), less its peak under no_grad, " + humanBytes(fwd->peakNoGrad) +
                  " (two consecutive activations)",
              fwd->basis);
}

EstimatedCost gradientBuffersOf(const Facts& f, NodeId zeroGradCall) {
  const Module& m = f.module();
  NodeId recv = receiverOf(m, zeroGradCall);
  NodeId module = kNone;
  if (f.kindOf(recv) == Kind::Module) {
    module = recv;
  } else if (f.kindOf(recv) == Kind::Optimizer) {
    // `torch.optim.AdamW(model.parameters(), ...)`: the module the optimizer updates.
    NodeId ctor = f.constructorOf(recv);
    NodeId params = keywordArg(m, ctor, "params");
    if (params == kNone) params = positionalArg(m, ctor, 0);
    if (methodName(m, params) == "parameters" && m.expr(params).argCount == 0) module = receiverOf(m, params);
  }
  if (module == kNone) return {};
  auto p = f.sizes().parametersOf(module);
  if (!p) return {};
  // The buffers raise the step's peak by P only when the forward is the step's peak: activations
  // of at least 2·P, so neither the backward's nor the optimizer's transients (up to about P
  // more) pass it. Measured on the H200: P exactly for the probe (activations 30x P); 22% of P
  // for examples/sized_mlp.py at a batch where activations were 0.4x P. Else no estimate.
  double forwardPeak = 0;
  std::string_view key = f.pathKey(module);
  for (NodeId e = 0; e < m.exprs.size() && !key.empty(); ++e) {
    if (m.expr(e).kind != ExprKind::Call || !f.isForwardCall(e) || f.pathKey(m.expr(e).lhs) != key) continue;
    if (auto fwd = f.sizes().forwardOf(e)) forwardPeak = std::max(forwardPeak, fwd->peakGrad);
  }
  if (forwardPeak < 2 * p->bytes) return {};
  return make(p->bytes, "peak",
              "P·bytes = " + humanBytes(p->bytes) + " of gradient buffers, kept through a forward that peaks at " +
                  humanBytes(forwardPeak) + " of activations",
              p->basis);
}

}  // namespace oomlint::rules
