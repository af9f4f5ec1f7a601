// The probes. Each function builds its workload, runs the anti-pattern and the fix through
// measure(), and says in `note` what the numbers mean. Written against LibTorch 1.13 (Debian,
// CPU) and 2.x (CUDA): where an API exists only in 2.x the probe says so instead of faking it.
#include <torch/torch.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "probe.h"
#include "stated_network.h"

namespace oomlint::probe {

double slope(const std::vector<int64_t>& y) {
  size_t n = y.size();
  if (n < 2) return 0;
  double mx = (static_cast<double>(n) - 1) / 2, my = 0;
  for (int64_t v : y) my += static_cast<double>(v);
  my /= static_cast<double>(n);
  double num = 0, den = 0;
  for (size_t i = 0; i < n; ++i) {
    double dx = static_cast<double>(i) - mx;
    num += dx * (static_cast<double>(y[i]) - my);
    den += dx * dx;
  }
  return den == 0 ? 0 : num / den;
}

VariantResult measure(ProbeContext& c, const std::string& name, const std::function<void(int64_t)>& step, int64_t steps) {
  if (steps < 0) steps = c.w.steps;
  VariantResult r;
  r.name = name;
  if (c.reset) c.reset();
  c.device.synchronize();
  c.device.releaseCache();
  MemorySample base = c.device.sample();
  MemorySample hostBase = c.host.sample();
  step(-1);  // warm-up: the variant's steady state counts, its first-time allocations do not skew time
  c.device.synchronize();
  c.device.resetPeak();
  c.host.resetPeak();
  auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < steps; ++i) {
    step(i);
    c.device.synchronize();
    r.allocated.push_back(c.device.sample().allocated - base.allocated);
  }
  auto t1 = std::chrono::steady_clock::now();
  MemorySample end = c.device.sample();
  r.peak = end.peak - base.allocated;
  r.retained = end.allocated - base.allocated;
  r.segments = end.segments - base.segments;
  r.reserved = end.reserved;
  r.driverUsed = end.driverUsed;
  r.hostPeak = c.host.sample().peak - hostBase.allocated;
  r.msPerStep = std::chrono::duration<double, std::milli>(t1 - t0).count() / static_cast<double>(std::max<int64_t>(1, steps));
  r.slope = slope(r.allocated);
  return r;
}

namespace {

using torch::Tensor;

/// Token rows (batch x sequence) through the MLP: activations dominate, as in a transformer, so the
/// forward peak is the step's peak.
Tensor tokens(const Workload& w) {
  if (!w.layers.empty()) return input(w);  // the stated input's rows are already all of them
  return torch::randn({w.batch * w.seq, w.width}, torch::TensorOptions().device(w.device).dtype(w.dtype));
}

Tensor lossOf(const Tensor& out) { return out.to(torch::kFloat).pow(2).mean(); }

void zeroGrad(const std::vector<Tensor>& params, bool setToNone) {
  for (const Tensor& p : params) {
    Tensor& g = const_cast<Tensor&>(p).mutable_grad();
    if (!g.defined()) continue;
    if (setToNone) g = Tensor();
    else g.zero_();
  }
}

void sgdStep(const std::vector<Tensor>& params, double lr = 1e-4) {
  torch::NoGradGuard ng;
  for (const Tensor& p : params)
    if (p.grad().defined()) const_cast<Tensor&>(p).sub_(p.grad() * lr);
}

ProbeResult probe101(ProbeContext& c) {
  ProbeResult r{"OOM101", "accumulated-tensor-with-graph", true,
                "validation-style loop with autograd on and no backward: the tensor total keeps every step's graph and "
                "saved activations; the float total keeps nothing",
                {}, {}, {}};
  auto model = makeMlp(c.w);
  Tensor x = input(c.w);
  {
    Tensor total = torch::zeros({}, torch::TensorOptions().device(c.w.device));
    r.anti = measure(c, "total = total + loss", [&](int64_t) { total = total + lossOf(model->forward(x)); });
  }
  {
    double total = 0;
    r.fix = measure(c, "total += loss.item()", [&](int64_t) { total += lossOf(model->forward(x)).item<double>(); });
  }
  return r;
}

ProbeResult probe102(ProbeContext& c) {
  ProbeResult r{"OOM102", "stored-tensor-with-graph", true,
                "model outputs stored each step with their graph keep every step's saved activations; detached outputs keep "
                "only themselves",
                {}, {}, {}};
  auto model = makeMlp(c.w);
  Tensor x = input(c.w);
  {
    std::vector<Tensor> kept;
    r.anti = measure(c, "outputs.push_back(out)", [&](int64_t) { kept.push_back(model->forward(x)); });
  }
  {
    std::vector<Tensor> kept;
    r.fix = measure(c, "outputs.push_back(out.detach())", [&](int64_t) { kept.push_back(model->forward(x).detach()); });
  }
  return r;
}

ProbeResult probe103(ProbeContext& c) {
  ProbeResult r{"OOM103", "device-tensors-kept-across-loop", true,
                "predictions collected on the device grow device memory by one batch of outputs per step; host copies do "
                "not (on a CPU run both live in host memory, so the variants match)",
                {}, {}, {}};
  auto model = makeMlp(c.w);
  Tensor x = input(c.w);
  torch::NoGradGuard ng;
  {
    std::vector<Tensor> preds;
    r.anti = measure(c, "preds.push_back(out)", [&](int64_t) { preds.push_back(model->forward(x)); });
  }
  {
    std::vector<Tensor> preds;
    r.fix = measure(c, "preds.push_back(out.cpu())", [&](int64_t) { preds.push_back(model->forward(x).cpu()); });
  }
  return r;
}

ProbeResult probe104(ProbeContext& c) {
  ProbeResult r{"OOM104", "summed-losses-single-backward", true,
                "k micro-batch losses summed then one backward keep k graphs alive at the peak; a backward per micro-batch "
                "keeps one",
                {}, {}, {}};
  auto model = makeMlp(c.w);
  auto params = model->parameters();
  c.reset = [&params] { zeroGrad(params, true); };
  std::vector<Tensor> mbs;
  for (int64_t i = 0; i < c.w.accum; ++i) mbs.push_back(input(c.w));
  r.anti = measure(c, "total += loss_i; total.backward()", [&](int64_t) {
    zeroGrad(params, true);
    Tensor total = torch::zeros({}, torch::TensorOptions().device(c.w.device));
    for (const Tensor& mb : mbs) total = total + lossOf(model->forward(mb));
    total.backward();
    sgdStep(params);
  });
  r.fix = measure(c, "(loss_i / k).backward() per micro-batch", [&](int64_t) {
    zeroGrad(params, true);
    for (const Tensor& mb : mbs) (lossOf(model->forward(mb)) / static_cast<double>(mbs.size())).backward();
    sgdStep(params);
  });
  return r;
}

ProbeResult probe105(ProbeContext& c) {
  ProbeResult r{"OOM105", "retain-graph-without-reuse", true,
                "with retain_graph=true the saved activations survive the backward for as long as the loss is referenced "
                "(here: the last loss, kept for logging); without it they are freed by the backward",
                {}, {}, {}};
  auto model = makeMlp(c.w);
  auto params = model->parameters();
  c.reset = [&params] { zeroGrad(params, true); };
  Tensor x = input(c.w);
  {
    Tensor last;
    r.anti = measure(c, "loss.backward(retain_graph=true)", [&](int64_t) {
      zeroGrad(params, true);
      Tensor l = lossOf(model->forward(x));
      l.backward(Tensor(), /*retain_graph=*/true);
      sgdStep(params);
      last = l;
    });
  }
  {
    Tensor last;
    r.fix = measure(c, "loss.backward()", [&](int64_t) {
      zeroGrad(params, true);
      Tensor l = lossOf(model->forward(x));
      l.backward();
      sgdStep(params);
      last = l;
    });
  }
  return r;
}

ProbeResult probe106(ProbeContext& c) {
  ProbeResult r{"OOM106", "backward-create-graph", true,
                "backward(create_graph=true) leaves gradients that carry their graph in .grad; zeroed in place "
                "(set_to_none=false) each step, every step's graph stays chained to them. autograd::grad(create_graph) "
                "returns the gradients instead and .grad gets a detached copy",
                {}, {}, {}};
  auto model = makeMlp(c.w);
  auto params = model->parameters();
  c.reset = [&params] { zeroGrad(params, true); };
  Tensor x = input(c.w);
  r.anti = measure(c, "backward(create_graph=true); zero_grad(false)", [&](int64_t) {
    zeroGrad(params, false);
    Tensor l = lossOf(model->forward(x));
    l.backward(Tensor(), /*retain_graph=*/false, /*create_graph=*/true);
  });
  r.fix = measure(c, "grad(create_graph=true); .grad = g.detach()", [&](int64_t) {
    zeroGrad(params, false);
    Tensor l = lossOf(model->forward(x));
    auto grads = torch::autograd::grad({l}, params, {}, false, true);
    for (size_t i = 0; i < params.size(); ++i) {
      Tensor& g = const_cast<Tensor&>(params[i]).mutable_grad();
      if (g.defined()) g.add_(grads[i].detach());
      else g = grads[i].detach();
    }
  });
  zeroGrad(params, true);
  return r;
}

ProbeResult probe107(ProbeContext& c) {
  ProbeResult r{"OOM107", "carried-state-not-detached", true,
                "a recurrent state carried without detach chains every iteration's graph (backward needs "
                "retain_graph=true to run at all, and memory grows per step); h.detach() bounds it to one step. No "
                "optimizer step in either variant: with the chain, an in-place update makes the next backward fail",
                {}, {}, {}};
  auto cell = torch::nn::Linear(2 * c.w.width, c.w.width);
  cell->to(c.w.device, c.w.dtype);
  auto params = cell->parameters();
  Tensor x = input(c.w);
  {
    Tensor h = torch::zeros({c.w.batch, c.w.width}, x.options());
    r.anti = measure(c, "h = cell(x, h) (no detach)", [&](int64_t) {
      zeroGrad(params, true);
      h = torch::tanh(cell->forward(torch::cat({x, h}, 1)));
      lossOf(h).backward(Tensor(), /*retain_graph=*/true);
    });
  }
  {
    Tensor h = torch::zeros({c.w.batch, c.w.width}, x.options());
    r.fix = measure(c, "h = h.detach(); h = cell(x, h)", [&](int64_t) {
      zeroGrad(params, true);
      h = h.detach();
      h = torch::tanh(cell->forward(torch::cat({x, h}, 1)));
      lossOf(h).backward();
    });
  }
  return r;
}

ProbeResult probe201(ProbeContext& c) {
  ProbeResult r{"OOM201", "eval-forward-with-grad", true,
                "an evaluation forward with autograd on saves every layer's activations for a backward that never comes; "
                "under NoGradGuard only the live layer outputs exist",
                {}, {}, {}};
  auto model = makeMlp(c.w);
  model->eval();
  Tensor x = tokens(c.w);
  r.anti = measure(c, "model.eval(); out = model(x)", [&](int64_t) { Tensor out = model->forward(x); });
  r.fix = measure(c, "NoGradGuard; out = model(x)", [&](int64_t) {
    torch::NoGradGuard ng;
    Tensor out = model->forward(x);
  });
  return r;
}

/// One training step with zero_grad placed and configured as asked.
void trainStep(torch::nn::Sequential& model, const std::vector<Tensor>& params, const Tensor& x, bool zeroFirst, bool setToNone) {
  if (zeroFirst) zeroGrad(params, setToNone);
  Tensor l = lossOf(model->forward(x));
  if (!zeroFirst) zeroGrad(params, setToNone);
  l.backward();
  sgdStep(params);
}

ProbeResult probe301(ProbeContext& c) {
  ProbeResult r{"OOM301", "zero-grad-keeps-buffers", true,
                "zero_grad(set_to_none=false) keeps every .grad buffer through the next forward peak (+P bytes)", {}, {}, {}};
  auto model = makeMlp(c.w);
  auto params = model->parameters();
  c.reset = [&params] { zeroGrad(params, true); };
  Tensor x = tokens(c.w);
  trainStep(model, params, x, true, false);  // gradients exist before measuring
  r.anti = measure(c, "zero_grad(set_to_none=false)", [&](int64_t) { trainStep(model, params, x, true, false); });
  r.fix = measure(c, "zero_grad()", [&](int64_t) { trainStep(model, params, x, true, true); });
  zeroGrad(params, true);
  return r;
}

ProbeResult probe302(ProbeContext& c) {
  ProbeResult r{"OOM302", "zero-grad-after-forward", true,
                "zero_grad after the forward keeps last step's gradients alive through the forward (+P bytes there); the "
                "step's overall peak moves only when the forward peak is above the backward peak",
                {}, {}, {}};
  auto model = makeMlp(c.w);
  auto params = model->parameters();
  c.reset = [&params] { zeroGrad(params, true); };
  Tensor x = tokens(c.w);
  trainStep(model, params, x, true, true);
  r.anti = measure(c, "forward; zero_grad(); backward", [&](int64_t) { trainStep(model, params, x, false, true); });
  trainStep(model, params, x, true, true);
  r.fix = measure(c, "zero_grad(); forward; backward", [&](int64_t) { trainStep(model, params, x, true, true); });
  zeroGrad(params, true);
  return r;
}

ProbeResult probe303(ProbeContext& c) {
  ProbeResult r{"OOM303", "accumulation-loss-not-scaled", true,
                "the unscaled accumulation changes the gradient scale, not memory: both variants peak alike", {}, {}, {}};
  auto model = makeMlp(c.w);
  auto params = model->parameters();
  c.reset = [&params] { zeroGrad(params, true); };
  std::vector<Tensor> mbs;
  for (int64_t i = 0; i < c.w.accum; ++i) mbs.push_back(input(c.w));
  auto run = [&](bool scaled) {
    return [&, scaled](int64_t) {
      zeroGrad(params, true);
      for (const Tensor& mb : mbs) {
        Tensor l = lossOf(model->forward(mb));
        (scaled ? l / static_cast<double>(mbs.size()) : l).backward();
      }
      sgdStep(params);
    };
  };
  r.anti = measure(c, "loss.backward() x k (unscaled)", run(false));
  r.fix = measure(c, "(loss / k).backward() x k", run(true));
  zeroGrad(params, true);
  return r;
}

/// Half of the MLP's parameters frozen, the optimizer `Opt` built over all of them (anti) or over
/// the trainable half (fix): what giving an optimizer frozen parameters keeps.
template <typename Opt, typename Options>
ProbeResult frozenHalf(ProbeContext& c, ProbeResult r, const std::string& name) {
  auto model = makeMlp(c.w);
  auto params = model->parameters();
  c.reset = [&params] { zeroGrad(params, true); };
  std::vector<Tensor> trainable;
  for (size_t i = 0; i < params.size(); ++i) {
    if (i < params.size() / 2) params[i].set_requires_grad(false);
    else trainable.push_back(params[i]);
  }
  Tensor x = input(c.w);
  // Built in the first (warm-up) step, after the baseline: an optimizer that allocates its state
  // when it is built (Adagrad) shows it; one that allocates it in step() (Adam) too.
  auto run = [&](std::vector<Tensor> given) {
    auto opt = std::make_shared<std::unique_ptr<Opt>>();
    return [&, given, opt](int64_t) {
      if (!*opt) *opt = std::make_unique<Opt>(given, Options(1e-4));
      zeroGrad(params, true);
      lossOf(model->forward(x)).backward();
      (*opt)->step();
    };
  };
  r.anti = measure(c, name + "(model.parameters())", run(params));
  r.fix = measure(c, name + "(trainable parameters)", run(trainable));
  return r;
}

ProbeResult probe305(ProbeContext& c) {
  return frozenHalf<torch::optim::Adam, torch::optim::AdamOptions>(
      c,
      {"OOM305", "frozen-params-in-optimizer", true,
       "Adam over all parameters with half of them frozen vs over the trainable half only: Adam makes no state "
       "for parameters without gradients, so the retained state is the same",
       {}, {}, {}},
      "Adam");
}

/// OOM305 where the optimizer is Adagrad, which allocates its `sum` for every parameter it is
/// given when it is built, gradient or not: the frozen half's parameter bytes, kept.
ProbeResult probe305Adagrad(ProbeContext& c) {
  return frozenHalf<torch::optim::Adagrad, torch::optim::AdagradOptions>(
      c,
      {"OOM305-adagrad", "frozen-params-in-optimizer (Adagrad)", true,
       "Adagrad over all parameters with half of them frozen vs over the trainable half only: Adagrad allocates "
       "its sum for every parameter when it is built, so the frozen half's bytes are kept",
       {}, {}, {}},
      "Adagrad");
}

/// A pre-norm transformer block (attention + 4x MLP) whose attention kernel is a parameter.
struct Block {
  torch::nn::LayerNorm ln1{nullptr}, ln2{nullptr};
  torch::nn::Linear qkv{nullptr}, proj{nullptr}, fc1{nullptr}, fc2{nullptr};
  int64_t heads;
  Block(const Workload& w) : heads(w.heads) {
    ln1 = torch::nn::LayerNorm(torch::nn::LayerNormOptions({w.width}));
    ln2 = torch::nn::LayerNorm(torch::nn::LayerNormOptions({w.width}));
    qkv = torch::nn::Linear(w.width, 3 * w.width);
    proj = torch::nn::Linear(w.width, w.width);
    fc1 = torch::nn::Linear(w.width, 4 * w.width);
    fc2 = torch::nn::Linear(4 * w.width, w.width);
    for (torch::nn::Module* m : std::initializer_list<torch::nn::Module*>{ln1.get(), ln2.get(), qkv.get(), proj.get(), fc1.get(), fc2.get()})
      m->to(w.device, w.dtype);
  }
  Tensor forward(const Tensor& x, const std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)>& attention) {
    int64_t b = x.size(0), t = x.size(1), d = x.size(2);
    auto parts = qkv->forward(ln1->forward(x)).view({b, t, 3, heads, d / heads}).unbind(2);
    Tensor a = attention(parts[0].transpose(1, 2), parts[1].transpose(1, 2), parts[2].transpose(1, 2));
    Tensor h = x + proj->forward(a.transpose(1, 2).reshape({b, t, d}));
    return h + fc2->forward(torch::gelu(fc1->forward(ln2->forward(h))));
  }
  std::vector<Tensor> parameters() {
    std::vector<Tensor> out;
    for (torch::nn::Module* m : std::initializer_list<torch::nn::Module*>{ln1.get(), ln2.get(), qkv.get(), proj.get(), fc1.get(), fc2.get()})
      for (auto& p : m->parameters()) out.push_back(p);
    return out;
  }
};

Tensor manualAttention(const Tensor& q, const Tensor& k, const Tensor& v) {
  Tensor scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(q.size(-1)));
  return torch::matmul(torch::softmax(scores, -1), v);
}

ProbeResult probe401(ProbeContext& c) {
  ProbeResult r{"OOM401", "materialized-attention", true,
                "a transformer block (pre-norm attention + 4x MLP) trained with hand-written attention saves the B·H·L·L "
                "scores and probabilities for backward; fused scaled_dot_product_attention saves O(B·H·L)",
                {}, {}, {}};
  Block block(c.w);
  auto params = block.parameters();
  c.reset = [&params] { zeroGrad(params, true); };
  Tensor x = torch::randn({c.w.batch, c.w.seq, c.w.width}, torch::TensorOptions().device(c.w.device).dtype(c.w.dtype));
  r.anti = measure(c, "block with softmax(q @ k^T) @ v", [&](int64_t) {
    zeroGrad(params, true);
    lossOf(block.forward(x, manualAttention)).backward();
  });
#if TORCH_VERSION_MAJOR >= 2
  r.fix = measure(c, "block with scaled_dot_product_attention", [&](int64_t) {
    zeroGrad(params, true);
    lossOf(block.forward(x, [](const Tensor& q, const Tensor& k, const Tensor& v) {
      return at::scaled_dot_product_attention(q, k, v);
    })).backward();
  });
#else
  r.available = false;
  r.note = "scaled_dot_product_attention needs LibTorch >= 2.0 (this build: " TORCH_VERSION "); anti-pattern measured only";
#endif
  return r;
}

/// Activation checkpointing for C++ (LibTorch has no checkpoint API): run `fn` without saving
/// activations, keep only the input, and recompute `fn` with grad enabled in backward.
struct Checkpoint : public torch::autograd::Function<Checkpoint> {
  static Tensor forward(torch::autograd::AutogradContext* ctx, Tensor x, int64_t fnAddress) {
    ctx->saved_data["fn"] = fnAddress;
    ctx->save_for_backward({x});
    torch::NoGradGuard ng;
    return (*reinterpret_cast<std::function<Tensor(const Tensor&)>*>(fnAddress))(x);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx, torch::autograd::variable_list grads) {
    auto* fn = reinterpret_cast<std::function<Tensor(const Tensor&)>*>(ctx->saved_data["fn"].toInt());
    Tensor x = ctx->get_saved_variables()[0].detach().requires_grad_(true);
    Tensor y;
    {
      torch::AutoGradMode on(true);
      y = (*fn)(x);
    }
    y.backward(grads[0]);
    return {x.grad(), Tensor()};
  }
};

Tensor checkpointed(std::function<Tensor(const Tensor&)>& fn, const Tensor& x) {
  return Checkpoint::apply(x, reinterpret_cast<int64_t>(&fn));
}

ProbeResult probe402Impl(ProbeContext& c, VariantResult* none) {
  ProbeResult r{"OOM402", "fine-grained-checkpoint", true,
                "checkpointing every single op (each GELU) saves nothing and recomputes; checkpointing whole blocks "
                "(Linear+GELU+Linear) saves the block's internals",
                {}, {}, {}};
  std::vector<torch::nn::Linear> layers;
  for (int64_t i = 0; i < 2 * c.w.depth; ++i) {
    layers.emplace_back(c.w.width, c.w.width);
    layers.back()->to(c.w.device, c.w.dtype);
  }
  Tensor x = tokens(c.w).requires_grad_(true);
  std::function<Tensor(const Tensor&)> gelu = [](const Tensor& t) { return torch::gelu(t); };
  std::vector<std::function<Tensor(const Tensor&)>> blocks;
  for (int64_t b = 0; b < c.w.depth; ++b)
    blocks.emplace_back([&, b](const Tensor& t) { return layers[2 * b + 1]->forward(torch::gelu(layers[2 * b]->forward(t))); });
  auto clear = [&] {
    for (auto& l : layers)
      for (auto& p : l->parameters()) p.mutable_grad() = Tensor();
    x.mutable_grad() = Tensor();
  };
  r.anti = measure(c, "checkpoint(gelu) per op", [&](int64_t) {
    Tensor h = x;
    for (int64_t b = 0; b < c.w.depth; ++b) h = layers[2 * b + 1]->forward(checkpointed(gelu, layers[2 * b]->forward(h)));
    lossOf(h).backward();
    clear();
  });
  r.fix = measure(c, "checkpoint(block) per block", [&](int64_t) {
    Tensor h = x;
    for (int64_t b = 0; b < c.w.depth; ++b) h = checkpointed(blocks[static_cast<size_t>(b)], h);
    lossOf(h).backward();
    clear();
  });
  if (none)
    *none = measure(c, "no checkpointing", [&](int64_t) {
      Tensor h = x;
      for (int64_t b = 0; b < c.w.depth; ++b) h = blocks[static_cast<size_t>(b)](h);
      lossOf(h).backward();
      clear();
    });
  return r;
}

ProbeResult probe402(ProbeContext& c) { return probe402Impl(c, nullptr); }

ProbeResult probe404(ProbeContext& c) {
  ProbeResult r{"OOM404", "fp32-logits-under-autocast", true,
                "a full-precision copy of B·T·V low-precision logits for the loss vs a loss computed over sequence "
                "chunks, each upcast on its own",
                {}, {}, {}};
  torch::Dtype up = c.w.dtype == torch::kFloat ? torch::kDouble : torch::kFloat;
  auto opts = torch::TensorOptions().device(c.w.device).dtype(c.w.dtype);
  Tensor logits = torch::randn({c.w.batch, c.w.seq, c.w.vocab}, opts).requires_grad_(true);
  Tensor target = torch::randint(0, c.w.vocab, {c.w.batch, c.w.seq}, torch::TensorOptions().device(c.w.device).dtype(torch::kLong));
  r.anti = measure(c, "cross_entropy(logits.float())", [&](int64_t) {
    Tensor lp = torch::log_softmax(logits.to(up), -1);
    torch::nll_loss(lp.view({-1, c.w.vocab}), target.view({-1})).backward();
    logits.mutable_grad() = Tensor();
  });
  int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(8, c.w.seq));
  r.fix = measure(c, "chunked cross_entropy over T", [&](int64_t) {
    auto parts = logits.chunk(chunks, 1);
    auto tparts = target.chunk(chunks, 1);
    for (size_t i = 0; i < parts.size(); ++i) {
      Tensor lp = torch::log_softmax(parts[i].to(up), -1);
      (torch::nll_loss(lp.reshape({-1, c.w.vocab}), tparts[i].reshape({-1})) / static_cast<double>(parts.size())).backward();
    }
    logits.mutable_grad() = Tensor();
  });
  return r;
}

ProbeResult probe501(ProbeContext& c) {
  ProbeResult r{"OOM501", "empty-cache-in-loop", true,
                "emptying the allocator cache every step frees no memory live tensors use; the allocator then cudaMallocs "
                "the same blocks again (segments and time per step)",
                {}, {}, {}};
  auto model = makeMlp(c.w);
  auto params = model->parameters();
  c.reset = [&params] { zeroGrad(params, true); };
  Tensor x = input(c.w);
  r.anti = measure(c, "train step + emptyCache()", [&](int64_t) {
    trainStep(model, params, x, true, true);
    c.device.releaseCache();
  });
  r.fix = measure(c, "train step", [&](int64_t) { trainStep(model, params, x, true, true); });
  if (!c.w.device.is_cuda()) r.note += " (CPU run: there is no cache to empty, so the variants match)";
  return r;
}

ProbeResult probe504(ProbeContext& c) {
  ProbeResult r{"OOM504", "host-tensor-then-device-copy", true,
                "a factory on the host then .to(device) allocates and fills host memory first (hostPeak); device= creates it "
                "in place",
                {}, {}, {}};
  int64_t n = c.w.batch * c.w.width * 64;
  r.anti = measure(c, "torch::zeros(n).to(device)", [&](int64_t) { Tensor t = torch::zeros({n}).to(c.w.device); });
  r.fix = measure(c, "torch::zeros(n, device)", [&](int64_t) { Tensor t = torch::zeros({n}, torch::TensorOptions().device(c.w.device)); });
  if (!c.w.device.is_cuda()) r.note += " (CPU run: host and device are the same memory)";
  return r;
}

ProbeResult probe506(ProbeContext& c) {
  (void)c;
  ProbeResult r{"OOM506", "oom-retry-in-except", false,
                "not expressible in C++: stack unwinding destroys the failed step's tensors before a catch block runs, "
                "so a retry in `catch` starts clean; the leak is Python's traceback holding frames",
                {}, {}, {}};
  return r;
}

// --- seed claims ---------------------------------------------------------------------------------

ProbeResult seedLambdaLr(ProbeContext& c) {
  ProbeResult r{"SEED-lambda-lr", "LambdaLR keeps all lambda functions and leaks", true,
                "a scheduler that sets the learning rate from a capture-free lambda every step, over many steps", {}, {}, {}};
  auto model = makeMlp(c.w);
  auto params = model->parameters();
  c.reset = [&params] { zeroGrad(params, true); };
  Tensor x = input(c.w);
  torch::optim::SGD opt(params, torch::optim::SGDOptions(0.1));
  std::function<double(int64_t)> lambda = [](int64_t step) { return 1.0 / (1.0 + 0.001 * static_cast<double>(step)); };
  int64_t steps = std::max<int64_t>(c.w.steps, 200);
  r.anti = measure(c, "lr = lambda(step) every step", [&](int64_t i) {
    for (auto& g : opt.param_groups()) static_cast<torch::optim::SGDOptions&>(g.options()).lr(0.1 * lambda(i));
    opt.zero_grad();
    lossOf(model->forward(x)).backward();
    opt.step();
  }, steps);
  r.fix = measure(c, "constant lr", [&](int64_t) {
    opt.zero_grad();
    lossOf(model->forward(x)).backward();
    opt.step();
  }, steps);
  bool grows = r.anti.slope > 1024;
  r.verdict = std::string(grows ? "confirmed" : "refuted") + ": growth " + std::to_string(static_cast<int64_t>(r.anti.slope)) +
              " B/step over " + std::to_string(steps) + " steps (constant lr: " + std::to_string(static_cast<int64_t>(r.fix.slope)) +
              " B/step)";
  return r;
}

ProbeResult seedLogging(ProbeContext& c) {
  ProbeResult r{"SEED-logging", "Frequent logging (add_scalar of loss.item()) accumulates GPU memory", true,
                "reading loss.item() every step (what SummaryWriter.add_scalar does) vs never", {}, {}, {}};
  auto model = makeMlp(c.w);
  auto params = model->parameters();
  c.reset = [&params] { zeroGrad(params, true); };
  Tensor x = input(c.w);
  std::vector<double> logged;
  int64_t steps = std::max<int64_t>(c.w.steps, 200);
  r.anti = measure(c, "log loss.item() every step", [&](int64_t) {
    zeroGrad(params, true);
    Tensor l = lossOf(model->forward(x));
    l.backward();
    sgdStep(params);
    logged.push_back(l.item<double>());
  }, steps);
  r.fix = measure(c, "no logging", [&](int64_t) {
    zeroGrad(params, true);
    lossOf(model->forward(x)).backward();
    sgdStep(params);
  }, steps);
  bool grows = r.anti.slope > 1024;
  r.verdict = std::string(grows ? "confirmed" : "refuted") + ": growth " + std::to_string(static_cast<int64_t>(r.anti.slope)) +
              " B/step; per-step sync costs " + std::to_string(r.anti.msPerStep - r.fix.msPerStep) + " ms/step";
  return r;
}

ProbeResult seedUnscaled(ProbeContext& c) {
  ProbeResult r = probe303(c);
  r.code = "SEED-unscaled-accumulation";
  r.title = "An unscaled gradient-accumulation loss grows memory linearly";
  bool same = std::llabs(r.anti.peak - r.fix.peak) <= std::max<int64_t>(4096, r.fix.peak / 100) && r.anti.slope <= 1024;
  r.verdict = std::string(same ? "refuted" : "confirmed") + ": peak " + std::to_string(r.anti.peak) + " B vs " +
              std::to_string(r.fix.peak) + " B scaled; growth " + std::to_string(static_cast<int64_t>(r.anti.slope)) + " B/step";
  return r;
}

ProbeResult seedEmptyCache(ProbeContext& c) {
  ProbeResult r = probe501(c);
  r.code = "SEED-empty-cache";
  r.title = "torch.cuda.empty_cache() fixes fragmentation / frees memory";
  bool gains = r.anti.peak < r.fix.peak;
  r.verdict = std::string(gains ? "confirmed" : "refuted") + ": peak allocated " + std::to_string(r.anti.peak) + " B vs " +
              std::to_string(r.fix.peak) + " B without; " + std::to_string(r.anti.segments) + " vs " + std::to_string(r.fix.segments) +
              " segments; " + std::to_string(r.anti.msPerStep) + " vs " + std::to_string(r.fix.msPerStep) + " ms/step";
  return r;
}

ProbeResult seedDenseCheckpoint(ProbeContext& c) {
  VariantResult none;
  ProbeResult r = probe402Impl(c, &none);
  r.code = "SEED-dense-checkpointing";
  r.title = "Activation checkpointing that is too dense hurts";
  // Per-op checkpointing against no checkpointing at all: does it save memory, what does it cost?
  r.fix = none;
  double saved = static_cast<double>(none.peak - r.anti.peak);
  // The claim: checkpointing single ops buys nothing. Confirmed when it saves (almost) no memory;
  // the time it costs is reported as measured.
  bool hurts = saved <= 0.05 * static_cast<double>(std::max<int64_t>(1, none.peak));
  char buf[256];
  std::snprintf(buf, sizeof buf, ": per-op checkpointing saves %lld B of a %lld B peak (%.1f%%) at %+.0f%% time per step",
                static_cast<long long>(none.peak - r.anti.peak), static_cast<long long>(none.peak),
                100.0 * saved / static_cast<double>(std::max<int64_t>(1, none.peak)),
                100.0 * (r.anti.msPerStep - none.msPerStep) / std::max(1e-9, none.msPerStep));
  r.verdict = std::string(hurts ? "confirmed" : "refuted") + buf;
  return r;
}

ProbeResult seedEvalNoGrad(ProbeContext& c) {
  ProbeResult r = probe201(c);
  r.code = "SEED-eval-without-no-grad";
  r.title = "Evaluation without no_grad costs memory";
  bool costs = r.anti.peak > r.fix.peak;
  r.verdict = std::string(costs ? "confirmed" : "refuted") + ": peak " + std::to_string(r.anti.peak) + " B with autograd vs " +
              std::to_string(r.fix.peak) + " B under NoGradGuard";
  return r;
}

}  // namespace

const std::vector<ProbeDef>& allProbes() {
  static const std::vector<ProbeDef> probes = {
      {"OOM101", "accumulated-tensor-with-graph", probe101},
      {"OOM102", "stored-tensor-with-graph", probe102},
      {"OOM103", "device-tensors-kept-across-loop", probe103},
      {"OOM104", "summed-losses-single-backward", probe104},
      {"OOM105", "retain-graph-without-reuse", probe105},
      {"OOM106", "backward-create-graph", probe106},
      {"OOM107", "carried-state-not-detached", probe107},
      {"OOM201", "eval-forward-with-grad", probe201},
      {"OOM301", "zero-grad-keeps-buffers", probe301},
      {"OOM302", "zero-grad-after-forward", probe302},
      {"OOM303", "accumulation-loss-not-scaled", probe303},
      {"OOM305", "frozen-params-in-optimizer", probe305},
      {"OOM305-adagrad", "frozen-params-in-optimizer (Adagrad)", probe305Adagrad},
      {"OOM401", "materialized-attention", probe401},
      {"OOM402", "fine-grained-checkpoint", probe402},
      {"OOM404", "fp32-logits-under-autocast", probe404},
      {"OOM501", "empty-cache-in-loop", probe501},
      {"OOM504", "host-tensor-then-device-copy", probe504},
      {"OOM506", "oom-retry-in-except", probe506},
      {"SEED-lambda-lr", "LambdaLR keeps all lambdas and leaks", seedLambdaLr},
      {"SEED-logging", "Frequent logging accumulates GPU memory", seedLogging},
      {"SEED-unscaled-accumulation", "Unscaled accumulation grows memory", seedUnscaled},
      {"SEED-empty-cache", "empty_cache fixes fragmentation", seedEmptyCache},
      {"SEED-dense-checkpointing", "Too dense checkpointing hurts", seedDenseCheckpoint},
      {"SEED-eval-without-no-grad", "Eval without no_grad costs memory", seedEvalNoGrad},
  };
  return probes;
}

}  // namespace oomlint::probe
