// Networks the code spells out (an nn.Sequential of sized layers, a module class whose forward
// chains sized submodules) and what one forward of them costs (see sizes.h).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include "facts/facts.h"
#include "facts/names.h"
#include "facts/sizes.h"
#include "facts/torch_api.h"

namespace oomlint {

namespace {

constexpr int kMaxDepth = 6;

using torch_api::startsWith;

std::string_view nnClass(const std::string& canonical) {
  if (!startsWith(canonical, "torch.nn.")) return {};
  return names::lastComponent(canonical);
}

/// Attention and recurrent layers return (output, weights or state), an LSTM cell its (h, c): a
/// Sequential cannot chain them. GRU and RNN cells return their new state alone.
bool returnsPair(std::string_view cls) {
  return cls == "MultiheadAttention" || cls == "LSTM" || cls == "GRU" || cls == "RNN" || cls == "LSTMCell";
}

std::string humanCount(int64_t n) {
  char buf[32];
  if (n >= 1000000) std::snprintf(buf, sizeof buf, "%.1fM", static_cast<double>(n) / 1e6);
  else if (n >= 1000) std::snprintf(buf, sizeof buf, "%.1fk", static_cast<double>(n) / 1e3);
  else std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(n));
  return buf;
}

std::string_view dtypeWord(int bytes) {
  if (bytes == 2) return "16-bit";
  if (bytes == 8) return "float64";
  return "float32";
}

/// Appends `inner`'s layers to `net`.
void appendLayers(KnownNetwork& net, std::vector<LayerSize> inner) {
  // Checkpoint segments and block instances are numbered per network: the inner ones move past
  // the outer network's, so two instances of one class stay two.
  uint32_t segments = 0, instances = 0;
  for (const LayerSize& l : net.layers) {
    segments = std::max(segments, l.checkpointSegment);
    for (const LayerSize::Block& b : l.blocks) instances = std::max(instances, b.instance);
  }
  for (LayerSize& l : inner) {
    if (l.checkpointSegment) l.checkpointSegment += segments;
    for (LayerSize::Block& b : l.blocks) b.instance += instances;
    net.layers.push_back(std::move(l));
  }
}

}  // namespace

std::optional<LayerSize::Saves> elementwiseSaves(std::string_view name) {
  for (std::string_view s : {"gelu", "silu", "leaky_relu", "elu", "mish"})
    if (name == s) return LayerSize::Saves::Input;
  for (std::string_view s : {"relu", "tanh", "sigmoid"})
    if (name == s) return LayerSize::Saves::Output;
  return std::nullopt;
}

bool Sizes::appendLayer(NodeId ctor, const Bindings* env, int depth, KnownNetwork& net) const {
  if (ctor == kNone || depth > kMaxDepth || m_.expr(ctor).kind != ExprKind::Call) return false;
  const std::string& canon = m_.canonical(ctor);
  std::string_view cls = nnClass(canon);
  if (cls.empty()) {
    // A module class of this file used as a layer (`self.block = Block(width)`).
    int32_t c = fileClassOf(ctor);
    if (c < 0) return false;
    auto inner = classNetwork(c, ctor, depth + 1);
    if (!inner) return false;
    appendLayers(net, std::move(inner->layers));
    return true;
  }
  if (cls == "Sequential") {
    auto inner = buildNetwork(ctor, env, depth + 1);
    if (!inner) return false;
    appendLayers(net, std::move(inner->layers));
    return true;
  }
  LayerSize layer;
  layer.name = std::string(cls) + "()";
  layer.kind = std::string(cls);
  if (keywordArg(m_, ctor, "dtype") != kNone || keywordArg(m_, ctor, "device") != kNone) return false;
  if (!readLayer(ctor, cls, env, layer)) return false;  // a layer this file cannot size
  net.layers.push_back(std::move(layer));
  return true;
}

std::optional<KnownNetwork> Sizes::buildNetwork(NodeId ctor, const Bindings* env, int depth) const {
  KnownNetwork net;
  if (nnClass(m_.canonical(ctor)) == "Sequential") {
    for (const Arg& a : argsOf(m_, m_.expr(ctor))) {
      if (!a.keyword.empty()) return std::nullopt;  // `*layers`, OrderedDict: not read
      NodeId layer = m_.expr(a.value).kind == ExprKind::Call ? a.value : f_.constructorOf(a.value);
      if (returnsPair(nnClass(m_.canonical(layer))) || !appendLayer(layer, env, depth, net)) return std::nullopt;
    }
  } else if (!appendLayer(ctor, env, depth, net)) {
    return std::nullopt;
  }
  if (net.layers.empty()) return std::nullopt;
  return net;
}

int32_t Sizes::fileClassOf(NodeId ctor) const {
  if (ctor == kNone || m_.expr(ctor).kind != ExprKind::Call || !m_.canonical(ctor).empty()) return -1;
  int32_t c = -1;
  for (size_t i = 0; i < m_.classes.size(); ++i)
    if (m_.classes[i].name == calleeName(m_, ctor)) c = static_cast<int32_t>(i);
  return c >= 0 && f_.isModuleClass(c) ? c : -1;
}

std::optional<Sizes::ClassInit> Sizes::classInit(int32_t cls, NodeId ctor) const {
  ClassInit ci;
  for (uint32_t i = 0; i < m_.functions.size(); ++i)
    if (m_.functions[i].cls == cls && m_.functions[i].name == "__init__") ci.init = i;
  if (ci.init == UINT32_MAX) return std::nullopt;
  // The constructor's arguments, else the parameters' defaults.
  const Function& fi = m_.functions[ci.init];
  uint32_t positional = 0;
  for (uint32_t i = 1; i < fi.paramCount; ++i) {
    const Param& p = m_.params[fi.firstParam + i];
    NodeId v = keywordArg(m_, ctor, p.name);
    if (v == kNone) v = positionalArg(m_, ctor, positional);
    ++positional;
    if (v == kNone) v = p.defaultValue;
    if (v != kNone) ci.env[p.name] = v;
  }
  for (NodeId s : f_.statementsOf(ci.init)) {
    const Stmt& st = m_.stmt(s);
    if (st.kind != StmtKind::Assign || st.targets.count != 1) continue;
    const Expr& t = m_.expr(st.target);
    if (t.kind != ExprKind::Attribute || m_.expr(t.lhs).kind != ExprKind::Name || m_.expr(t.lhs).text != "self") continue;
    if (ci.submodules.count(t.text)) ci.submodules[t.text] = kNone;  // assigned twice: not read
    else ci.submodules[t.text] = m_.expr(st.value).kind == ExprKind::Call ? st.value : kNone;
  }
  return ci;
}

std::optional<KnownNetwork> Sizes::classNetwork(int32_t cls, NodeId ctor, int depth) const {
  if (depth > kMaxDepth) return std::nullopt;
  uint32_t forward = UINT32_MAX;
  for (uint32_t i = 0; i < m_.functions.size(); ++i)
    if (m_.functions[i].cls == cls && m_.functions[i].name == "forward") forward = i;
  if (forward == UINT32_MAX) return std::nullopt;
  auto ci = classInit(cls, ctor);
  if (!ci) return std::nullopt;
  Bindings& env = ci->env;
  const std::unordered_map<std::string_view, NodeId>& submodules = ci->submodules;
  // The forward must be one chain through one variable: `x = self.fc1(x)`, `x = F.relu(x)`,
  // `out, _ = self.lstm(x)`, `return self.fc2(out)`. Any other statement or call leaves the
  // network unknown.
  const Function& ff = m_.functions[forward];
  if (ff.paramCount != 2) return std::nullopt;
  std::string_view var = m_.params[ff.firstParam + 1].name;
  KnownNetwork net;
  bool returned = false;
  auto isVar = [&](NodeId e) { return m_.expr(e).kind == ExprKind::Name && m_.expr(e).text == var; };
  std::function<bool(NodeId, bool)> chain;
  // The layers of submodule `self.<attribute>` (one `__init__` assigns), and its torch.nn class name.
  auto submodule = [&](std::string_view attribute, KnownNetwork& part, std::string_view& cls) {
    auto it = submodules.find(attribute);
    if (it == submodules.end() || it->second == kNone) return false;
    if (!appendLayer(it->second, &env, depth + 1, part)) return false;
    cls = nnClass(m_.canonical(it->second));
    return true;
  };
  // `self.fc1(...)` of a submodule; `pair`: the call's value is unpacked or indexed as (output,
  // state), which only attention and recurrent layers return.
  auto submoduleCall = [&](NodeId e, bool pair) -> bool {
    const Expr& x = m_.expr(e);
    KnownNetwork part;
    std::string_view cls;
    if (!submodule(m_.expr(x.lhs).text, part, cls)) return false;
    if (returnsPair(cls) != pair) return false;
    if (cls == "MultiheadAttention") {
      // Self-attention: `attn(x, x, x)`, the chained value three times and nothing else.
      if (x.argCount != 3 || positionalArg(m_, e, 2) == kNone) return false;
      for (uint32_t i = 0; i < 3; ++i)
        if (!isVar(positionalArg(m_, e, i))) return false;
    } else if (x.argCount != 1 || !m_.args[x.firstArg].keyword.empty() || !chain(m_.args[x.firstArg].value, false)) {
      return false;
    }
    appendLayers(net, std::move(part.layers));
    return true;
  };
  // `checkpoint(self.block, x, use_reentrant=False)`, `checkpoint(F.gelu, x)`: the function's
  // layers on the chained value, as one checkpointed segment.
  auto checkpointCall = [&](NodeId e) -> bool {
    const Expr& x = m_.expr(e);
    NodeId fn = positionalArg(m_, e, 0), value = positionalArg(m_, e, 1);
    if (fn == kNone || value == kNone || positionalArg(m_, e, 2) != kNone) return false;
    for (const Arg& a : argsOf(m_, x))
      if (!a.keyword.empty() && a.keyword != "use_reentrant" && a.keyword != "preserve_rng_state") return false;
    KnownNetwork part;
    const Expr& f = m_.expr(fn);
    if (f.kind == ExprKind::Attribute && isSelfName(m_, f.lhs)) {
      std::string_view cls;
      if (!submodule(f.text, part, cls) || returnsPair(cls)) return false;
    } else {
      LayerSize layer;
      if (!checkpointedFunction(fn, layer)) return false;
      part.layers.push_back(std::move(layer));
    }
    if (!chain(value, false)) return false;
    uint32_t segment = 1;
    for (const LayerSize& l : net.layers) segment = std::max(segment, l.checkpointSegment + 1);
    size_t first = net.layers.size();
    appendLayers(net, std::move(part.layers));
    // One segment, the outer checkpoint's: a checkpoint inside it runs under its no_grad forward.
    for (size_t i = first; i < net.layers.size(); ++i) net.layers[i].checkpointSegment = segment;
    return true;
  };
  chain = [&](NodeId e, bool pair) -> bool {
    const Expr& x = m_.expr(e);
    if (x.kind == ExprKind::Name) return !pair && x.text == var;
    // `self.lstm(x)[0]`: the output of an (output, state) pair.
    if (x.kind == ExprKind::Subscript) {
      if (!pair && intValue(x.rhs) == std::optional<int64_t>(0)) return chain(x.lhs, true);
      // `out[:, -1]`: one step of the chained value, a view.
      LayerSize layer;
      NodeId value = kNone;
      if (pair || !selectionLayer(e, layer, value) || !chain(value, false)) return false;
      net.layers.push_back(layer);
      return true;
    }
    if (x.kind != ExprKind::Call) return false;
    const Expr& callee = m_.expr(x.lhs);
    if (callee.kind == ExprKind::Attribute && isSelfName(m_, callee.lhs)) return submoduleCall(e, pair);
    if (m_.canonical(e) == "torch.utils.checkpoint.checkpoint") return !pair && checkpointCall(e);
    LayerSize layer;
    NodeId value = kNone;
    if (pair || !functionalLayer(e, layer, value) || !chain(value, false)) return false;
    net.layers.push_back(layer);
    return true;
  };
  for (NodeId s : f_.statementsOf(forward)) {
    const Stmt& st = m_.stmt(s);
    if (returned) return std::nullopt;
    if (st.kind == StmtKind::Return) {
      if (!chain(st.value, false)) return std::nullopt;
      returned = true;
      continue;
    }
    if (st.kind != StmtKind::Assign || st.targets.count != 1) return std::nullopt;
    const Expr& t = m_.expr(st.target);
    // `out = ...`: the chain goes on through the new name. `out, _ = self.lstm(x)`: through the
    // pair's first element.
    bool pair = t.kind == ExprKind::Container && t.argCount == 2 && m_.expr(m_.args[t.firstArg].value).kind == ExprKind::Name;
    NodeId name = pair ? m_.args[t.firstArg].value : st.target;
    if (m_.expr(name).kind != ExprKind::Name || !chain(st.value, pair)) return std::nullopt;
    var = m_.expr(name).text;
  }
  if (!returned || net.layers.empty()) return std::nullopt;
  // Every layer runs inside this class's forward: its block, one instance of it.
  for (LayerSize& l : net.layers) l.blocks.push_back({cls, 1});
  return net;
}

int Sizes::moduleDtype(NodeId moduleExpr, int elementBytes, std::string_view* name) const {
  // Conversions on the module's path anywhere in the file (`model.bfloat16()`,
  // `model = Net().to(device, dtype=torch.float16)`): one dtype, or unknown (0).
  std::string_view key = f_.pathKey(moduleExpr);
  if (name) *name = elementBytes == 4 ? "f32" : "";
  if (key.empty()) return elementBytes;
  int found = 0;
  std::string_view foundName;
  for (NodeId e = 0; e < m_.exprs.size(); ++e) {
    const Expr& x = m_.expr(e);
    if (x.kind != ExprKind::Call) continue;
    std::string_view meth = methodName(m_, e);
    if (meth.empty()) continue;
    NodeId recv = receiverOf(m_, e);
    // The receiver is the module's path, or the chain that constructs it on an assignment to it.
    bool onModule = f_.pathKey(recv) == key;
    if (!onModule && x.stmt != kNone && m_.stmt(x.stmt).kind == StmtKind::Assign && f_.pathKey(m_.stmt(x.stmt).target) == key) {
      for (NodeId r = recv; r != kNone && m_.expr(r).kind == ExprKind::Call; r = receiverOf(m_, r))
        if (f_.constructorOf(moduleExpr) == r) onModule = true;
      if (f_.constructorOf(moduleExpr) == recv) onModule = true;
    }
    if (!onModule) continue;
    int bytes = conversionBytes(meth);
    std::string_view named = floatName(meth);
    if (meth == "to") {
      NodeId dtype = keywordArg(m_, e, "dtype");
      for (uint32_t i = 0; !dtypeBytes(dtype) && i < 2; ++i) dtype = positionalArg(m_, e, i);
      bytes = dtypeBytes(dtype);
      named = dtype == kNone ? std::string_view() : floatName(names::lastComponent(m_.canonical(dtype)));
    }
    if (!bytes) continue;
    if (found && (found != bytes || foundName != named)) return 0;  // bf16 and f16 are two dtypes
    found = bytes;
    foundName = named;
  }
  if (!found) return elementBytes;
  if (name) *name = foundName;
  return found;
}

const KnownNetwork* Sizes::networkOf(NodeId moduleExpr) const {
  NodeId ctor = f_.constructorOf(moduleExpr);
  if (ctor == kNone) return nullptr;
  auto it = networks_.find(ctor);
  if (it == networks_.end()) {
    auto net = buildNetwork(ctor, nullptr, 0);
    if (net) {
      char buf[96];
      std::snprintf(buf, sizeof buf, " (%zu layers, %s parameters)", net->layers.size(), humanCount(net->parameters()).c_str());
      net->source = at(ctor) + buf;
    }
    it = networks_.emplace(ctor, std::move(net)).first;
  }
  return it->second ? &*it->second : nullptr;
}

std::optional<KnownParameters> Sizes::parametersOf(NodeId moduleExpr) const {
  const KnownNetwork* net = networkOf(moduleExpr);
  if (!net) return submoduleParameters(moduleExpr);
  int bytes = moduleDtype(moduleExpr, net->elementBytes);
  if (!bytes) return std::nullopt;
  return KnownParameters{static_cast<double>(net->parameters()) * bytes, net->source + ", " + std::string(dtypeWord(bytes))};
}

std::optional<KnownParameters> Sizes::submoduleParameters(NodeId attribute) const {
  // `model.backbone` where `model = Net(...)` and Net's `__init__` assigns `self.backbone` once.
  const Expr& a = m_.expr(attribute);
  if (a.kind != ExprKind::Attribute) return std::nullopt;
  NodeId ctor = f_.constructorOf(a.lhs);
  int32_t cls = fileClassOf(ctor);
  if (cls < 0) return std::nullopt;
  auto ci = classInit(cls, ctor);
  if (!ci) return std::nullopt;
  auto it = ci->submodules.find(a.text);
  if (it == ci->submodules.end() || it->second == kNone) return std::nullopt;
  KnownNetwork part;
  if (!appendLayer(it->second, &ci->env, 1, part) || part.layers.empty()) return std::nullopt;
  int bytes = moduleDtype(a.lhs, part.elementBytes);
  if (!bytes) return std::nullopt;
  char buf[64];
  std::snprintf(buf, sizeof buf, " (%s parameters)", humanCount(part.parameters()).c_str());
  return KnownParameters{static_cast<double>(part.parameters()) * bytes,
                         "`self." + std::string(a.text) + "` " + at(it->second) + buf + ", " + std::string(dtypeWord(bytes))};
}

NodeId Sizes::moduleCalled(NodeId call) const {
  NodeId callee = m_.expr(call).lhs;
  if (m_.expr(callee).kind == ExprKind::Attribute && m_.expr(callee).text == "forward") callee = m_.expr(callee).lhs;
  return callee;
}

std::optional<std::vector<std::vector<int64_t>>> Sizes::chainShapes(const KnownNetwork& net, const KnownShape& input) const {
  // An embedding first looks up every index of its integer input; any other network maps float
  // features, at least (rows, width).
  bool embedded = !net.layers.empty() && net.layers.front().vocabulary > 0;
  if (embedded ? input.dims.empty() || input.elementBytes != 8 : input.dims.size() < 2) return std::nullopt;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<int64_t> shape = input.dims;
  for (size_t i = 0; i < net.layers.size(); ++i) {
    const LayerSize& l = net.layers[i];
    if (i == 0 && embedded) {
      shape.push_back(l.outFeatures);
    } else {
      auto out = layerOutput(l, shape);  // an Embedding past the first layer: a lookup of floats, refused
      if (!out) return std::nullopt;     // the stated sizes do not chain
      shape = std::move(*out);
    }
    shapes.push_back(shape);
  }
  return shapes;
}

std::optional<StatedWorkload> Sizes::workloadOf(NodeId call) const {
  NodeId callee = moduleCalled(call);
  const KnownNetwork* net = networkOf(callee);
  if (!net || m_.expr(call).argCount != 1) return std::nullopt;
  auto input = shapeOf(positionalArg(m_, call, 0));
  if (!input) return std::nullopt;
  auto shapes = chainShapes(*net, *input);
  if (!shapes) return std::nullopt;
  StatedWorkload w;
  w.layers = net->layers;
  w.shapes = std::move(*shapes);
  w.input = input->dims;
  w.rows = input->rows() * (net->layers.front().vocabulary > 0 ? input->dims.back() : 1);
  std::string_view dtype;
  w.elementBytes = moduleDtype(callee, net->elementBytes, &dtype);
  if (!w.elementBytes) return std::nullopt;
  w.dtype = std::string(dtype);
  w.basis = net->source + ", input " + input->source;
  return w;
}

std::optional<ForwardSizes> Sizes::forwardOf(NodeId call) const {
  NodeId callee = moduleCalled(call);
  const KnownNetwork* net = networkOf(callee);
  if (!net || m_.expr(call).argCount != 1) return std::nullopt;
  int bytes = moduleDtype(callee, net->elementBytes);
  if (!bytes) return std::nullopt;
  auto input = shapeOf(positionalArg(m_, call, 0));
  if (!input) return std::nullopt;
  bool eval = f_.evalOpener(call) != kNone || f_.inEvalContext(m_.expr(call).stmt);
  return forwardOn(*net, bytes, *input, eval, false);
}

namespace {

/// How far the backward of a chain rises above the moment its forward ends (everything saved, the
/// output live), before any parameter gradient exists: layer i runs with the saved tensors of
/// layers 1..i, the parameter gradients of the layers after it, the gradient of its output, and
/// makes the gradient of its input and of its parameters. What a layer's backward frees (its
/// saved tensors, the gradient it received) is counted freed only after the next layer's backward
/// has run: CUDA's caching allocator keeps a block allocated until the kernels that read it have
/// finished, and the engine has queued the next layer's by then (measured on the H200: a Linear
/// after a ReLU peaks at three activation-sized gradients above the forward's end, not two). The
/// gradient reaching the output is one output-sized tensor (what the loss's backward hands on). A
/// view passes its gradient on as a view; the network's input gets none. `freedAfter[j]`: the
/// lowest layer that keeps saved storage j, after whose backward it is freed.
double backwardRise(const std::vector<double>& tensor, const std::vector<size_t>& base, const std::vector<bool>& saved,
                    const std::vector<size_t>& freedAfter, const std::vector<double>& mask, const std::vector<double>& gradient,
                    const std::vector<double>& weights) {
  size_t n = tensor.size() - 1;
  double kept = 0;
  for (size_t j = 0; j <= n; ++j) kept += (saved[j] ? tensor[j] : 0) + mask[j];
  double outputLive = saved[base[n]] ? 0 : tensor[base[n]];
  double forwardEnd = kept + outputLive;
  double made = 0;                // parameter gradients so far
  double arriving = gradient[n];  // the gradient of t_i
  double pending = 0;             // what the previous layer's backward freed, not yet counted free
  double rise = 0;
  for (size_t i = n; i >= 1; --i) {
    bool view = tensor[i] == 0 && base[i] != i;
    double toInput = i == 1 || view ? 0 : gradient[i - 1];
    rise = std::max(rise, kept + outputLive + made + pending + arriving + toInput + weights[i] - forwardEnd);
    made += weights[i];
    double freedSaved = mask[i];
    for (size_t j = 0; j <= n; ++j)
      if (saved[j] && freedAfter[j] == i) freedSaved += tensor[j];
    kept -= freedSaved;
    pending = freedSaved + (view ? 0 : arriving);
    if (!view) arriving = toInput;
  }
  return rise;
}

}  // namespace

std::optional<ForwardSizes> Sizes::forwardOn(const KnownNetwork& net, int bytes, const KnownShape& input, bool eval,
                                             bool inputFresh) const {
  for (const LayerSize& l : net.layers)
    if (!l.costKnown) return std::nullopt;  // attention, recurrent layers: their kernels decide what they keep
  auto shapes = chainShapes(net, input);
  if (!shapes) return std::nullopt;
  auto numel = [](const std::vector<int64_t>& s) {
    double n = 1;
    for (int64_t d : s) n *= static_cast<double>(d);
    return n;
  };
  // Layer outputs t_1..t_n over the input t_0 (which exists anyway unless it is made for this
  // forward): the bytes each one allocates (none for a view of its input, which shares its base's
  // storage) and which of them autograd keeps.
  bool embedded = net.layers.front().vocabulary > 0;
  std::vector<double> tensor{numel(input.dims) * (embedded ? 8 : bytes)};
  std::vector<size_t> base{0};  // the tensor whose storage t_i is
  std::vector<bool> saved{false};
  std::vector<double> mask{0};   // what layer i keeps beside the tensors (dropout's mask, pooling's indices)
  std::vector<double> scratch{0};  // what layer i allocates only while it runs under no_grad
  std::vector<double> gradient{0};  // the gradient of t_i the backward makes (none for a view's)
  std::vector<double> weights{0};   // layer i's parameter gradients
  std::vector<size_t> freedAfter{0};  // saved storage i's lowest keeper, whose backward frees it
  size_t firstCounted = inputFresh ? 0 : 1;  // tensors below this index exist anyway
  uint32_t segment = 0;                       // the checkpointed segment of the last layer run
  bool anyCheckpoint = false;
  for (size_t i = 0; i < net.layers.size(); ++i) {
    const LayerSize& l = net.layers[i];
    if (eval && l.identityInEval) continue;
    double n = numel((*shapes)[i]);
    size_t self = tensor.size();
    tensor.push_back(l.aliasesInput ? 0 : n * bytes);
    gradient.push_back(n * bytes);
    weights.push_back(static_cast<double>(l.parameters) * bytes);
    anyCheckpoint = anyCheckpoint || l.checkpointSegment != 0;
    base.push_back(l.aliasesInput ? base.back() : self);
    // A checkpointed segment keeps its input and nothing of what its layers would save: it runs
    // them again in backward.
    bool checkpointed = l.checkpointSegment != 0;
    bool opensSegment = checkpointed && l.checkpointSegment != segment;
    segment = l.checkpointSegment;
    saved.push_back(!checkpointed && l.saves == LayerSize::Saves::Output);
    freedAfter.push_back(saved.back() ? self : 0);
    if ((opensSegment || (!checkpointed && l.saves == LayerSize::Saves::Input)) && base[self - 1] >= firstCounted) {
      saved[base[self - 1]] = true;
      if (freedAfter[base[self - 1]] == 0) freedAfter[base[self - 1]] = self;  // its lowest keeper
    }
    double rows = (*shapes)[i].empty() ? 1 : n / static_cast<double>((*shapes)[i].back());
    double kept = (eval ? 0 : n * l.extraBytesPerElement) + n * l.indexBytesPerElement + rows * static_cast<double>(l.savedBytesPerRow) +
                  static_cast<double>(l.fixedSavedBytes);
    mask.push_back(checkpointed ? 0 : kept);
    scratch.push_back(n * l.indexBytesPerElement);
  }
  ForwardSizes out;
  out.elementBytes = bytes;
  // Layer i runs with its input live and everything saved before it kept: the forward's peak is
  // the largest such moment, with autograd on and off.
  double kept = saved[0] ? tensor[0] : 0;
  for (size_t i = 1; i < tensor.size(); ++i) {
    size_t in = base[i - 1];
    double live = in >= 1 && !saved[in] ? tensor[in] : 0;
    out.peakGrad = std::max(out.peakGrad, kept + live + tensor[i] + mask[i]);
    out.peakNoGrad = std::max(out.peakNoGrad, tensor[i] + (in >= 1 ? tensor[in] : 0) + scratch[i]);
    kept += mask[i] + (saved[i] ? tensor[i] : 0);
  }
  out.saved = kept;
  if (!anyCheckpoint && !eval) out.backwardRise = backwardRise(tensor, base, saved, freedAfter, mask, gradient, weights);
  out.output = tensor[base.back()];
  out.outputSaved = saved[base.back()];
  out.outFeatures = shapes->back().back();
  out.parameters = static_cast<double>(net.parameters()) * bytes;
  out.basis = net.source + ", " + std::string(dtypeWord(bytes)) + "; input " + input.source;
  return out;
}

}  // namespace oomlint
