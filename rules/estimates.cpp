// The static cost estimates (estimates.h): each rule's formula over the sizes the file states.
#include "rules/estimates.h"

#include <algorithm>
#include <cmath>

#include "facts/sizes.h"
#include "facts/torch_api.h"
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

EstimatedCost gradientsThroughForwardOf(const Facts& f, NodeId forwardCall) {
  if (forwardCall == kNone) return {};
  auto fwd = f.sizes().forwardOf(forwardCall);
  if (!fwd || fwd->backwardRise < 0 || fwd->peakGrad < 2 * fwd->parameters) return {};
  const double g = fwd->parameters;  // one gradient like each parameter
  const double end = fwd->saved + (fwd->outputSaved ? 0 : fwd->output);
  // The step's peak is the forward's (where last step's gradients add to it) or the backward's
  // (after zero_grad freed them): what they add is the difference of the two maxima.
  auto added = [&](double forwardPeak, double backwardRise) {
    return std::max(forwardPeak + g, end + backwardRise) - std::max(forwardPeak, end + backwardRise);
  };
  const double bytes = added(fwd->peakGrad, fwd->backwardRise);
  // The loss is not part of the network: its forward and backward make tensors like the output,
  // in float32 where the loss upcasts it. Where up to two of them in the forward and four in the
  // backward would move the estimate by more than a tenth, the loss decides it: no estimate.
  const double lossCopy = fwd->output / fwd->elementBytes * 4;
  const double lossHeavy = added(std::max(fwd->peakGrad, end + 2 * lossCopy), std::max(fwd->backwardRise, 4 * lossCopy));
  if (std::abs(bytes - lossHeavy) > 0.1 * std::max(bytes, lossHeavy)) return {};
  return make(bytes, "peak",
              "G = " + humanBytes(g) + " of last step's gradients kept through a forward that peaks at " + humanBytes(fwd->peakGrad) +
                  " and ends at " + humanBytes(end) + "; the backward, without them, rises " + humanBytes(fwd->backwardRise) +
                  " above that end: max(forward peak + G, backward peak) - max(forward peak, backward peak)",
              fwd->basis);
}

EstimatedCost frozenOptimizerStateOf(const Facts& f, const std::vector<NodeId>& frozenModules, std::string_view optimizer) {
  if (frozenModules.empty()) return {};
  double bytes = 0;
  std::string parts, basis;
  for (NodeId module : frozenModules) {
    auto p = f.sizes().parametersOf(module);
    if (!p) return {};
    bytes += p->bytes;
    parts += std::string(parts.empty() ? "" : ", ") + "`" + std::string(f.module().textOf(module)) + "` " + humanBytes(p->bytes);
    basis += (basis.empty() ? "" : "; ") + p->basis;
  }
  return make(bytes, "retained",
              "P·bytes of the frozen parameters (" + parts + "): " + std::string(optimizer) +
                  " allocates a state tensor like each parameter it is given when it is built, gradient or not",
              basis);
}

EstimatedCost summedGraphsOf(const Facts& f, NodeId summand, NodeId loop) {
  auto g = graphBehind(f, summand);
  auto k = f.sizes().tripCount(loop);
  if (!g || !k || *k < 2) return {};
  double graph = g->fwd.saved + g->loss;
  double graphs = static_cast<double>(*k - 1) * graph;
  // Below 2·P the backward's transients (gradient buffers, each gradient's temporaries) set the
  // peak, not the graphs. Measured on the H200: 37.5 MB for 7.1 MB of graphs at 32 rows (P 134 MB).
  if (graphs < 2 * g->fwd.parameters) return {};
  // The fix's backwards of micro-batches 2..k run with the gradient buffers (P) already
  // allocated; the summed loss's one backward starts without them.
  return make(graphs - g->fwd.parameters, "peak",
              "(k−1)·(" + graphFormula(*g) + ") with k = " + std::to_string(*k) +
                  " micro-batches, less P = " + humanBytes(g->fwd.parameters) +
                  " of gradient buffers a backward per micro-batch holds from the second one on",
              g->fwd.basis);
}

EstimatedCost carriedStepOf(const Facts& f, NodeId stmt, NodeId loop, std::string_view name) {
  const Module& m = f.module();
  const Stmt& st = m.stmt(stmt);
  // The state as this iteration reads it: its one binding before the loop says its shape.
  NodeId read = kNone;
  f.forSubtree(st.value, [&](NodeId x) {
    if (read == kNone && m.expr(x).kind == ExprKind::Name && m.expr(x).text == name) read = x;
  });
  if (read == kNone) return {};
  std::vector<NodeId> defs;
  f.definitionsOf(read, defs);
  NodeId initial = kNone;
  for (NodeId d : defs) {
    if (f.within(d, loop)) continue;
    if (initial != kNone) return {};
    initial = d;
  }
  if (initial == kNone) return {};
  const Stmt& init = m.stmt(initial);
  if (init.kind != StmtKind::Assign || init.targets.count != 1 || m.expr(init.target).kind != ExprKind::Name) return {};
  auto state = f.sizes().shapeOf(init.value);
  if (!state) return {};
  auto step = f.sizes().expressionCost(st.value, ShapeBindings{{name, *state}});
  // The update must give the state back in its own shape, or the next iteration is not this one.
  if (!step || step->shape.dims != state->dims || step->shape.elementBytes != state->elementBytes || step->saved <= 0) return {};
  return make(step->saved, "growth",
              "what one iteration's update of `" + std::string(name) + "` saves for backward, " + humanBytes(step->saved) +
                  ", linked to every later iteration's graph",
              step->basis);
}

namespace {

/// A statement of the loop zeroes gradients in place by hand: `p.grad.zero_()`,
/// `p.grad.data.zero_()` (C++ `p.grad().zero_()`).
bool zeroesGradsByHand(const Facts& f, NodeId loop) {
  const Module& m = f.module();
  for (NodeId s : f.statementsWithin(loop))
    for (NodeId c : f.callsOf(s)) {
      if (methodName(m, c) != "zero_") continue;
      NodeId recv = receiverOf(m, c);
      if (recv == kNone) continue;
      std::string_view meth = m.expr(recv).kind == ExprKind::Call ? methodName(m, recv) : std::string_view{};
      if (meth == "grad" || meth == "mutable_grad" || f.pathKey(recv).find("grad") != std::string_view::npos) return true;
    }
  return false;
}

}  // namespace

EstimatedCost createGraphOf(const Facts& f, NodeId backwardCall) {
  const Module& m = f.module();
  auto g = graphBehind(f, f.backwardSubject(backwardCall));
  if (!g) return {};
  double bytes = 2 * (g->fwd.saved + g->loss);
  std::string formula = "2·(" + graphFormula(*g) + "): the forward's graph and the gradient graph built over it";
  NodeId loop = f.enclosingLoop(m.expr(backwardCall).stmt);
  if (loop == kNone) return make(bytes, "retained", formula + ", kept through `.grad`", g->fwd.basis);
  // OOM106 is reported in a loop only when no zero_grad() or `p.grad = None` clears the
  // gradients each iteration: zeroed by hand in place, or never, each step's graph stays chained
  // to `.grad`. A helper that clears them does not say how: no estimate.
  for (const StepEvent& ev : f.eventsWithin(loop))
    if (ev.kind == event::kZeroGrad && f.within(ev.stmt, loop) && ev.call != kNone && !f.isZeroGradCall(ev.call)) return {};
  if (!zeroesGradsByHand(f, loop) && f.clearsGradients()) return {};  // cleared some other way
  return make(bytes, "growth", formula + ", chained to the gradients that are never set to None", g->fwd.basis);
}

namespace {

/// `t.view(-1, V)`, `t.reshape(...)`, `t.float()` peeled to the tensor `t` they start from.
NodeId peeled(const Module& m, NodeId e, bool* converted) {
  for (int hop = 0; hop < 4 && m.expr(e).kind == ExprKind::Call && m.canonical(e).empty(); ++hop) {
    std::string_view meth = methodName(m, e);
    bool toFloat = (meth == "float" && m.expr(e).argCount == 0) ||
                   (meth == "to" && m.canonical(positionalArg(m, e, 0)) == "torch.float32");
    if (!isView(meth) && !toFloat) break;
    if (toFloat && converted) *converted = true;
    e = receiverOf(m, e);
  }
  return e;
}

bool isLogSoftmaxLoss(const std::string& canonical) {
  return canonical == "torch.nn.functional.cross_entropy" || canonical == "torch.nn.functional.log_softmax";
}

}  // namespace

EstimatedCost fp32LossOf(const Facts& f, NodeId call) {
  const Module& m = f.module();
  // The loss the finding feeds: the call itself, or the loss of the statement whose first
  // argument is this `.float()` (through views).
  NodeId loss = isLogSoftmaxLoss(m.canonical(call)) ? call : kNone;
  if (loss == kNone) {
    f.forSubtree(m.stmt(m.expr(call).stmt).value, [&](NodeId x) {
      if (loss != kNone || m.expr(x).kind != ExprKind::Call || !isLogSoftmaxLoss(m.canonical(x))) return;
      NodeId arg = positionalArg(m, x, 0);
      for (int hop = 0; hop < 3 && arg != call && m.expr(arg).kind == ExprKind::Call && isView(methodName(m, arg)); ++hop)
        arg = receiverOf(m, arg);
      if (arg == call) loss = x;
    });
  }
  if (loss == kNone) return {};
  NodeId logits = peeled(m, positionalArg(m, loss, 0), nullptr);
  auto shape = f.sizes().shapeOf(logits);
  if (!shape || shape->elementBytes != 2) return {};  // low-precision logits upcast, or none of this
  double n = 1;
  for (int64_t d : shape->dims) n *= static_cast<double>(d);
  double bytes = 3 * n * 4;
  return make(bytes, "peak",
              "3·N·4 = " + humanBytes(bytes) + " for N = " + std::to_string(static_cast<int64_t>(n)) +
                  " logits: fp32 log-probabilities kept for backward, their gradient and the logits' fp32 gradient, live "
                  "together at the log-softmax's backward",
              shape->source);
}

namespace {

/// A number that is not a tensor: a literal, a stated integer, `math.sqrt(d)`, arithmetic on those.
bool isPlainNumber(const Facts& f, NodeId e) {
  const Module& m = f.module();
  const Expr& x = m.expr(e);
  if (x.kind == ExprKind::Number || f.sizes().intValue(e)) return true;
  if (x.kind == ExprKind::Call) return torch_api::startsWith(m.canonical(e), "math.");
  if (x.kind == ExprKind::BinOp) return isPlainNumber(f, x.lhs) && isPlainNumber(f, x.rhs);
  return false;
}

/// The operands of a matrix product: `a @ b`, `torch.matmul(a, b)`, `a.matmul(b)`.
bool productOperands(const Module& m, NodeId e, NodeId& a, NodeId& b) {
  const Expr& x = m.expr(e);
  if (x.kind == ExprKind::BinOp && x.text == "@") {
    a = x.lhs;
    b = x.rhs;
  } else if (x.kind == ExprKind::Call && m.canonical(e) == "torch.matmul") {
    a = positionalArg(m, e, 0);
    b = positionalArg(m, e, 1);
  } else if (x.kind == ExprKind::Call && m.canonical(e).empty() && methodName(m, e) == "matmul") {
    a = receiverOf(m, e);
    b = positionalArg(m, e, 0);
  } else {
    return false;
  }
  return a != kNone && b != kNone;
}

/// `k.transpose(-2, -1)`, `k.transpose(2, 3)` of a rank-4 k, `k.mT`: the k it transposes, else kNone.
NodeId transposedLastTwo(const Facts& f, NodeId e, size_t rank) {
  const Module& m = f.module();
  const Expr& x = m.expr(e);
  if (x.kind == ExprKind::Attribute && x.text == "mT") return x.lhs;
  if (x.kind != ExprKind::Call || methodName(m, e) != "transpose" || x.argCount != 2 || !m.canonical(e).empty()) return kNone;
  auto axis = [&](uint32_t i) -> std::optional<int64_t> {
    auto n = f.sizes().intValue(positionalArg(m, e, i));
    if (!n) return std::nullopt;
    return *n < 0 ? *n + static_cast<int64_t>(rank) : *n;
  };
  auto a0 = axis(0), a1 = axis(1);
  int64_t last = static_cast<int64_t>(rank) - 1;
  if (!a0 || !a1 || std::min(*a0, *a1) != last - 1 || std::max(*a0, *a1) != last) return kNone;
  return receiverOf(m, e);
}

}  // namespace

EstimatedCost attentionProbabilitiesOf(const Facts& f, NodeId softmaxCall, NodeId scoresProduct, NodeId consumer) {
  const Module& m = f.module();
  // The scores reach the softmax through scaling by plain numbers only: nothing else keeps them.
  NodeId in = resolve(f, f.softmaxInput(softmaxCall));
  for (int hop = 0; hop < 4 && in != scoresProduct; ++hop) {
    const Expr& x = m.expr(in);
    if (x.kind != ExprKind::BinOp || (x.text != "/" && x.text != "*")) return {};
    if (isPlainNumber(f, x.rhs)) in = resolve(f, x.lhs);
    else if (x.text == "*" && isPlainNumber(f, x.lhs)) in = resolve(f, x.rhs);
    else return {};
  }
  if (in != scoresProduct) return {};
  // The probabilities reach the values' matmul as they are (a dropout between keeps its mask and output too).
  NodeId probs = kNone, values = kNone;
  if (!productOperands(m, consumer, probs, values) || resolve(f, probs) != softmaxCall) return {};
  NodeId q = kNone, kt = kNone;
  if (!productOperands(m, scoresProduct, q, kt)) return {};
  auto qs = f.sizes().shapeOf(resolve(f, q));
  if (!qs || qs->dims.size() < 3) return {};
  NodeId k = transposedLastTwo(f, kt, qs->dims.size());
  auto ks = k == kNone ? std::nullopt : f.sizes().shapeOf(resolve(f, k));
  if (!ks || ks->dims.size() != qs->dims.size() || ks->elementBytes != qs->elementBytes) return {};
  size_t rank = qs->dims.size();
  double elements = static_cast<double>(qs->dims[rank - 2]) * static_cast<double>(ks->dims[rank - 2]);
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (qs->dims[i] != ks->dims[i]) return {};
    elements *= static_cast<double>(qs->dims[i]);
  }
  if (qs->dims[rank - 1] != ks->dims[rank - 1]) return {};
  double bytes = elements * qs->elementBytes;
  std::string basis = qs->source;
  if (ks->source != qs->source) basis += "; " + ks->source;
  return make(bytes, "saved",
              "B·H·L·S·bytes = " + humanBytes(bytes) + ": the probabilities the softmax keeps for backward (the matmul with "
                  "the values keeps the same tensor), which the fused kernel never materialises",
              basis);
}

EstimatedCost blockCheckpointOf(const Facts& f, NodeId checkpointCall) {
  const Module& m = f.module();
  const Function& fn = m.functions[m.expr(checkpointCall).owner];
  if (fn.name != "forward" || fn.cls < 0) return {};
  auto gain = f.sizes().blockCheckpointGain(fn.cls);
  if (!gain) return {};
  std::string block(m.classes[static_cast<size_t>(fn.cls)].name);
  return make(gain->asWritten - gain->wholeBlocks, "peak",
              "A_fwd as written " + humanBytes(gain->asWritten) + " (the per-op checkpoints keep what no checkpoint would) - " +
                  humanBytes(gain->wholeBlocks) + " with each of the " + std::to_string(gain->instances) + " `" + block +
                  "` checkpointed whole (each keeps only its input)",
              gain->basis);
}

}  // namespace oomlint::rules
