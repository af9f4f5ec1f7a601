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

std::optional<LayerSize::Saves> activationSaves(std::string_view cls) {
  for (std::string_view s : {"GELU", "SiLU", "LeakyReLU", "ELU", "Mish", "Softplus", "Hardswish"})
    if (cls == s) return LayerSize::Saves::Input;
  for (std::string_view s : {"ReLU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax"})
    if (cls == s) return LayerSize::Saves::Output;
  return std::nullopt;
}

std::optional<LayerSize::Saves> functionalSaves(const std::string& canonical) {
  if (!startsWith(canonical, "torch.")) return std::nullopt;
  return elementwiseSaves(names::lastComponent(canonical));
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
    int32_t c = -1;
    for (size_t i = 0; i < m_.classes.size(); ++i)
      if (m_.classes[i].name == calleeName(m_, ctor) && m_.canonical(ctor).empty()) c = static_cast<int32_t>(i);
    if (c < 0 || !f_.isModuleClass(c)) return false;
    auto inner = classNetwork(c, ctor, depth + 1);
    if (!inner) return false;
    net.layers.insert(net.layers.end(), inner->layers.begin(), inner->layers.end());
    return true;
  }
  if (cls == "Sequential") {
    auto inner = buildNetwork(ctor, env, depth + 1);
    if (!inner) return false;
    net.layers.insert(net.layers.end(), inner->layers.begin(), inner->layers.end());
    return true;
  }
  LayerSize layer;
  layer.name = std::string(cls) + "()";
  layer.kind = std::string(cls);
  if (keywordArg(m_, ctor, "dtype") != kNone || keywordArg(m_, ctor, "device") != kNone) return false;
  if (cls == "Linear") {
    NodeId inArg = keywordArg(m_, ctor, "in_features"), outArg = keywordArg(m_, ctor, "out_features");
    if (inArg == kNone) inArg = positionalArg(m_, ctor, 0);
    if (outArg == kNone) outArg = positionalArg(m_, ctor, 1);
    auto in = intIn(inArg, env, 0), out = intIn(outArg, env, 0);
    if (!in || !out || *in <= 0 || *out <= 0) return false;
    NodeId bias = keywordArg(m_, ctor, "bias");
    if (bias == kNone) bias = positionalArg(m_, ctor, 2);
    if (bias != kNone && !isTrueLiteral(m_, bias) && !isFalseLiteral(m_, bias)) return false;
    layer.inFeatures = *in;
    layer.outFeatures = *out;
    layer.parameters = *in * *out + (isFalseLiteral(m_, bias) ? 0 : *out);
    layer.bias = !isFalseLiteral(m_, bias);
    layer.saves = LayerSize::Saves::Input;
    layer.name = "Linear(" + std::to_string(*in) + ", " + std::to_string(*out) + ")";
  } else if (cls == "Embedding") {
    // A lookup table: it saves the indices it is given (which exist anyway), not its output.
    NodeId numArg = keywordArg(m_, ctor, "num_embeddings"), dimArg = keywordArg(m_, ctor, "embedding_dim");
    if (numArg == kNone) numArg = positionalArg(m_, ctor, 0);
    if (dimArg == kNone) dimArg = positionalArg(m_, ctor, 1);
    auto num = intIn(numArg, env, 0), dim = intIn(dimArg, env, 0);
    if (!num || !dim || *num <= 0 || *dim <= 0) return false;
    // max_norm renormalises rows in place, sparse makes sparse gradients: not this plain lookup.
    for (std::string_view k : {"max_norm", "sparse", "_weight"})
      if (keywordArg(m_, ctor, k) != kNone) return false;
    if (positionalArg(m_, ctor, 3) != kNone) return false;  // max_norm and later, positionally
    layer.vocabulary = *num;
    layer.outFeatures = *dim;
    layer.parameters = *num * *dim;
    layer.name = "Embedding(" + std::to_string(*num) + ", " + std::to_string(*dim) + ")";
  } else if (cls == "LayerNorm") {
    auto n = intIn(positionalArg(m_, ctor, 0), env, 0);
    if (!n || *n <= 0) return false;
    layer.parameters = 2 * *n;
    layer.inFeatures = *n;  // normalizes a last dimension of n: the widths must chain through it
    layer.savedBytesPerRow = 8;
    layer.saves = LayerSize::Saves::Input;
    layer.name = "LayerNorm(" + std::to_string(*n) + ")";
  } else if (cls == "Dropout") {
    layer.extraBytesPerElement = 1;  // the boolean mask, in training
    layer.identityInEval = true;
    NodeId p = keywordArg(m_, ctor, "p");
    if (p == kNone) p = positionalArg(m_, ctor, 0);
    if (p != kNone && m_.expr(p).kind != ExprKind::Number) return false;
    if (p != kNone) layer.dropout = std::strtod(std::string(m_.expr(p).text).c_str(), nullptr);
  } else if (auto saves = activationSaves(cls)) {
    layer.saves = *saves;
  } else {
    return false;  // a layer this file cannot size (convolutions need spatial sizes)
  }
  net.layers.push_back(std::move(layer));
  return true;
}

std::optional<KnownNetwork> Sizes::buildNetwork(NodeId ctor, const Bindings* env, int depth) const {
  KnownNetwork net;
  if (nnClass(m_.canonical(ctor)) == "Sequential") {
    for (const Arg& a : argsOf(m_, m_.expr(ctor))) {
      if (!a.keyword.empty()) return std::nullopt;  // `*layers`, OrderedDict: not read
      NodeId layer = m_.expr(a.value).kind == ExprKind::Call ? a.value : f_.constructorOf(a.value);
      if (!appendLayer(layer, env, depth, net)) return std::nullopt;
    }
  } else if (!appendLayer(ctor, env, depth, net)) {
    return std::nullopt;
  }
  if (net.layers.empty()) return std::nullopt;
  return net;
}

std::optional<KnownNetwork> Sizes::classNetwork(int32_t cls, NodeId ctor, int depth) const {
  if (depth > kMaxDepth) return std::nullopt;
  uint32_t init = UINT32_MAX, forward = UINT32_MAX;
  for (uint32_t i = 0; i < m_.functions.size(); ++i) {
    if (m_.functions[i].cls != cls) continue;
    if (m_.functions[i].name == "__init__") init = i;
    if (m_.functions[i].name == "forward") forward = i;
  }
  if (init == UINT32_MAX || forward == UINT32_MAX) return std::nullopt;
  // The constructor's arguments, else the parameters' defaults.
  Bindings env;
  const Function& fi = m_.functions[init];
  uint32_t positional = 0;
  for (uint32_t i = 1; i < fi.paramCount; ++i) {
    const Param& p = m_.params[fi.firstParam + i];
    NodeId v = keywordArg(m_, ctor, p.name);
    if (v == kNone) v = positionalArg(m_, ctor, positional);
    ++positional;
    if (v == kNone) v = p.defaultValue;
    if (v != kNone) env[p.name] = v;
  }
  std::unordered_map<std::string_view, NodeId> submodules;  // `self.fc1 = nn.Linear(...)`
  for (NodeId s : f_.statementsOf(init)) {
    const Stmt& st = m_.stmt(s);
    if (st.kind != StmtKind::Assign || st.targets.count != 1) continue;
    const Expr& t = m_.expr(st.target);
    if (t.kind != ExprKind::Attribute || m_.expr(t.lhs).kind != ExprKind::Name || m_.expr(t.lhs).text != "self") continue;
    if (submodules.count(t.text)) submodules[t.text] = kNone;  // assigned twice: not read
    else submodules[t.text] = m_.expr(st.value).kind == ExprKind::Call ? st.value : kNone;
  }
  // The forward must be one chain through one variable: `x = self.fc1(x)`, `x = F.relu(x)`,
  // `return self.fc2(x)`. Any other statement or call leaves the network unknown.
  const Function& ff = m_.functions[forward];
  if (ff.paramCount != 2) return std::nullopt;
  std::string_view var = m_.params[ff.firstParam + 1].name;
  KnownNetwork net;
  bool returned = false;
  // The layers one expression applies to `var`, innermost first.
  std::function<bool(NodeId)> chain = [&](NodeId e) -> bool {
    const Expr& x = m_.expr(e);
    if (x.kind == ExprKind::Name) return x.text == var;
    if (x.kind != ExprKind::Call || x.argCount != 1 || !m_.args[x.firstArg].keyword.empty()) return false;
    if (!chain(m_.args[x.firstArg].value)) return false;
    const Expr& callee = m_.expr(x.lhs);
    if (callee.kind == ExprKind::Attribute && isSelfName(m_, callee.lhs)) {
      auto it = submodules.find(callee.text);
      if (it == submodules.end() || it->second == kNone) return false;
      KnownNetwork part;
      if (!appendLayer(it->second, &env, depth + 1, part)) return false;
      net.layers.insert(net.layers.end(), part.layers.begin(), part.layers.end());
      return true;
    }
    auto saves = functionalSaves(m_.canonical(e));
    if (!saves) return false;
    LayerSize act;
    std::string_view fn = names::lastComponent(m_.canonical(e));
    act.name = std::string(fn) + "()";
    act.kind = fn == "relu" ? "ReLU" : fn == "gelu" ? "GELU" : fn == "silu" ? "SiLU" : fn == "tanh" ? "Tanh" : fn == "sigmoid" ? "Sigmoid" : "";
    act.saves = *saves;
    net.layers.push_back(act);
    return true;
  };
  for (NodeId s : f_.statementsOf(forward)) {
    const Stmt& st = m_.stmt(s);
    if (returned) return std::nullopt;
    if (st.kind == StmtKind::Return) {
      if (!chain(st.value)) return std::nullopt;
      returned = true;
    } else if (st.kind == StmtKind::Assign && st.targets.count == 1 && m_.expr(st.target).kind == ExprKind::Name &&
               m_.expr(st.target).text == var) {
      if (!chain(st.value)) return std::nullopt;
    } else {
      return std::nullopt;
    }
  }
  if (!returned || net.layers.empty()) return std::nullopt;
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
  if (!net) return std::nullopt;
  int bytes = moduleDtype(moduleExpr, net->elementBytes);
  if (!bytes) return std::nullopt;
  return KnownParameters{static_cast<double>(net->parameters()) * bytes, net->source + ", " + std::string(dtypeWord(bytes))};
}

NodeId Sizes::moduleCalled(NodeId call) const {
  NodeId callee = m_.expr(call).lhs;
  if (m_.expr(callee).kind == ExprKind::Attribute && m_.expr(callee).text == "forward") callee = m_.expr(callee).lhs;
  return callee;
}

std::optional<StatedWorkload> Sizes::workloadOf(NodeId call) const {
  if (!forwardOf(call)) return std::nullopt;  // every size known and chaining
  NodeId callee = moduleCalled(call);
  const KnownNetwork* net = networkOf(callee);
  auto input = shapeOf(positionalArg(m_, call, 0));
  StatedWorkload w;
  w.layers = net->layers;
  w.rows = input->rows() * (!net->layers.empty() && net->layers.front().vocabulary > 0 ? input->dims.back() : 1);
  std::string_view dtype;
  w.elementBytes = moduleDtype(callee, net->elementBytes, &dtype);
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

std::optional<ForwardSizes> Sizes::forwardOn(const KnownNetwork& net, int bytes, const KnownShape& input, bool eval,
                                             bool inputFresh) const {
  // An embedding first looks up every index of its integer input: all of its dimensions are rows.
  bool embedded = !net.layers.empty() && net.layers.front().vocabulary > 0;
  for (size_t i = 1; i < net.layers.size(); ++i)
    if (net.layers[i].vocabulary > 0) return std::nullopt;  // a lookup of floats: not a network this sizes
  if (embedded && (input.dims.empty() || input.elementBytes != 8)) return std::nullopt;
  if (!embedded && (input.dims.size() < 2 || input.dims.back() != net.inFeatures())) return std::nullopt;
  // Layer outputs t_1..t_n over the input t_0 (which exists anyway unless it is made for this
  // forward): which of them autograd keeps.
  double rows = static_cast<double>(embedded ? input.rows() * input.dims.back() : input.rows());
  std::vector<double> tensor{embedded ? rows * 8 : rows * static_cast<double>(input.dims.back()) * bytes};
  std::vector<bool> saved{false};
  std::vector<double> mask{0};  // what layer i saves beside the tensors (dropout's mask)
  int64_t width = embedded ? 0 : input.dims.back();
  size_t firstCounted = inputFresh ? 2 : 3;  // saved.size() once layer 1's output is pushed
  for (const LayerSize& l : net.layers) {
    if (l.inFeatures && l.inFeatures != width) return std::nullopt;  // the stated widths do not chain
    if (eval && l.identityInEval) continue;
    if (l.outFeatures) width = l.outFeatures;
    tensor.push_back(rows * static_cast<double>(width) * bytes);
    saved.push_back(l.saves == LayerSize::Saves::Output);
    if (l.saves == LayerSize::Saves::Input && saved.size() >= firstCounted) saved[saved.size() - 2] = true;
    mask.push_back((eval ? 0 : rows * static_cast<double>(width) * l.extraBytesPerElement) + rows * static_cast<double>(l.savedBytesPerRow));
  }
  ForwardSizes out;
  out.elementBytes = bytes;
  // Layer i runs with its input t_{i-1} live and everything saved before it kept: the forward's
  // peak is the largest such moment, with autograd on and off.
  double kept = saved[0] ? tensor[0] : 0;
  for (size_t i = 1; i < tensor.size(); ++i) {
    double in = i >= 2 && !saved[i - 1] ? tensor[i - 1] : 0;
    out.peakGrad = std::max(out.peakGrad, kept + in + tensor[i] + mask[i]);
    out.peakNoGrad = std::max(out.peakNoGrad, tensor[i] + (i >= 2 ? tensor[i - 1] : 0));
    kept += mask[i] + (saved[i] ? tensor[i] : 0);
  }
  out.saved = kept;
  out.output = tensor.back();
  out.outputSaved = saved.back();
  out.outFeatures = width;
  out.parameters = static_cast<double>(net.parameters()) * bytes;
  out.basis = net.source + ", " + std::string(dtypeWord(bytes)) + "; input " + input.source;
  return out;
}

}  // namespace oomlint
