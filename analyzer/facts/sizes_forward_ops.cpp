// A forward's functional ops and reshapes as layers (`F.max_pool2d(x, 2)`, `torch.flatten(x, 1)`,
// `x.view(x.size(0), -1)`), and the integer tuples and pooling windows layer arguments give (see
// sizes.h; sizes_layers.cpp reads the layer constructors).
#include <algorithm>

#include "facts/facts.h"
#include "facts/names.h"
#include "facts/sizes.h"
#include "facts/torch_api.h"

namespace oomlint {

using torch_api::startsWith;

namespace {

/// An elementwise activation by its function's name (`gelu`), as the torch.nn layer it is.
bool activationLayer(std::string_view fn, LayerSize& layer) {
  auto saves = elementwiseSaves(fn);
  if (!saves) return false;
  static const std::pair<std::string_view, std::string_view> classes[] = {
      {"relu", "ReLU"}, {"gelu", "GELU"}, {"silu", "SiLU"}, {"tanh", "Tanh"}, {"sigmoid", "Sigmoid"},
      {"leaky_relu", "LeakyReLU"}, {"elu", "ELU"}, {"mish", "Mish"}};
  for (const auto& [function, cls] : classes)
    if (fn == function) layer.kind = std::string(cls);
  layer.saves = *saves;
  layer.name = std::string(fn) + "()";
  return true;
}

}  // namespace

std::vector<int64_t> Sizes::intsIn(NodeId e, const Bindings* env, size_t n) const {
  if (e == kNone) return {};
  const Expr& x = m_.expr(e);
  std::vector<int64_t> out;
  if (x.kind == ExprKind::Container && (x.shape == shape::kTuple || x.shape == shape::kList)) {
    if (x.argCount != n) return {};
    for (const Arg& a : argsOf(m_, x)) {
      auto v = intIn(a.value, env, 0);
      if (!v) return {};
      out.push_back(*v);
    }
    return out;
  }
  auto v = intIn(e, env, 0);
  if (!v) return {};
  return std::vector<int64_t>(n, *v);
}

bool Sizes::poolWindow(LayerSize& layer, std::string_view base, int spatial, NodeId kernel, NodeId stride, NodeId padding,
                       NodeId dilation, const Bindings* env) const {
  size_t n = static_cast<size_t>(spatial);
  layer.kind = std::string(base) + std::to_string(spatial) + "d";
  layer.kernel = intsIn(kernel, env, n);
  bool noStride = stride == kNone || m_.expr(stride).kind == ExprKind::NoneLit;
  layer.stride = noStride ? layer.kernel : intsIn(stride, env, n);
  layer.padding = padding == kNone ? std::vector<int64_t>(n, 0) : intsIn(padding, env, n);
  layer.dilation = dilation == kNone ? std::vector<int64_t>(n, 1) : intsIn(dilation, env, n);
  if (layer.kernel.empty() || layer.stride.empty() || layer.padding.empty() || layer.dilation.empty()) return false;
  for (size_t d = 0; d < n; ++d)
    if (layer.kernel[d] <= 0 || layer.stride[d] <= 0 || layer.dilation[d] <= 0 || layer.padding[d] < 0 ||
        2 * layer.padding[d] > layer.kernel[d])
      return false;
  layer.spatial = spatial;
  layer.saves = LayerSize::Saves::Input;
  if (base == "MaxPool") layer.indexBytesPerElement = 8;  // where each maximum came from, int64
  layer.name = layer.kind + "(" + std::to_string(layer.kernel[0]) + ")";
  return true;
}

bool Sizes::functionalLayer(NodeId e, LayerSize& layer, NodeId& value) const {
  const Expr& x = m_.expr(e);
  if (x.kind != ExprKind::Call) return false;
  const std::string& canon = m_.canonical(e);
  std::string_view meth = methodName(m_, e);
  auto onlyArgs = [&](std::initializer_list<std::string_view> keywords, uint32_t positional) {
    uint32_t count = 0;
    for (const Arg& a : argsOf(m_, x)) {
      if (a.keyword.empty()) {
        if (++count > positional) return false;
      } else if (std::find(keywords.begin(), keywords.end(), a.keyword) == keywords.end()) {
        return false;
      }
    }
    return true;
  };
  // `flatten(start_dim=0, end_dim=-1)` with its arguments from `first` on: a method's 0, torch.flatten's 1.
  auto flatten = [&](uint32_t first) {
    NodeId s = argumentOf(m_, e, "start_dim", first), en = argumentOf(m_, e, "end_dim", first + 1);
    auto start = s == kNone ? std::optional<int64_t>(0) : intValue(s), end = en == kNone ? std::optional<int64_t>(-1) : intValue(en);
    if (!start || !end) return false;
    layer.kind = "Flatten";
    layer.startDim = *start;
    layer.endDim = *end;
    layer.aliasesInput = true;
    layer.name = "flatten()";
    return true;
  };
  if (!meth.empty() && canon.empty()) {
    // Reshapes of the value: `x.flatten(1)`, `x.view(x.size(0), -1)`, `x.reshape(-1, 400)`.
    value = receiverOf(m_, e);
    if (meth == "flatten") return onlyArgs({"start_dim", "end_dim"}, 2) && flatten(0);
    if (meth != "view" && meth != "reshape") return false;
    std::vector<NodeId> dims;
    for (const Arg& a : argsOf(m_, x)) {
      if (!a.keyword.empty()) return false;
      dims.push_back(a.value);
    }
    if (dims.size() == 1 && m_.expr(dims[0]).kind == ExprKind::Container) {
      const Expr& c = m_.expr(dims[0]);
      dims.clear();
      for (const Arg& a : argsOf(m_, c)) dims.push_back(a.value);
    }
    if (dims.empty()) return false;
    for (NodeId d : dims) {
      // `x.size(0)` / `x.shape[0]` of the value itself: that dimension of the input.
      const Expr& dx = m_.expr(d);
      NodeId of = kNone, index = kNone;
      if (dx.kind == ExprKind::Call && methodName(m_, d) == "size" && dx.argCount == 1) of = receiverOf(m_, d), index = positionalArg(m_, d, 0);
      if (dx.kind == ExprKind::Subscript && m_.expr(dx.lhs).kind == ExprKind::Attribute && m_.expr(dx.lhs).text == "shape")
        of = m_.expr(dx.lhs).lhs, index = dx.rhs;
      if (of != kNone) {
        auto k = intValue(index);
        if (!k || m_.expr(of).kind != ExprKind::Name || m_.expr(value).kind != ExprKind::Name || m_.expr(of).text != m_.expr(value).text)
          return false;
        layer.view.push_back(LayerSize::kKeepDim + *k);
        continue;
      }
      auto v = intValue(d);
      if (!v || (*v <= 0 && *v != -1)) return false;
      layer.view.push_back(*v);
    }
    layer.kind = "View";
    layer.aliasesInput = true;  // a contiguous input: a view, no copy (reshape too)
    layer.name = std::string(meth) + "()";
    return true;
  }
  if (!startsWith(canon, "torch.")) return false;
  std::string_view fn = names::lastComponent(canon);
  value = positionalArg(m_, e, 0);
  if (value == kNone) return false;
  if (canon == "torch.flatten") return onlyArgs({"start_dim", "end_dim"}, 3) && flatten(1);
  if (!startsWith(canon, "torch.nn.functional.")) {
    if (x.argCount != 1) return false;
  }
  if (fn == "softmax" || fn == "log_softmax") {
    if (!onlyArgs({"dim"}, 2) || argumentOf(m_, e, "dim", 1) == kNone) return false;
    layer.kind = fn == "softmax" ? "Softmax" : "LogSoftmax";
    layer.saves = LayerSize::Saves::Output;
    layer.name = std::string(fn) + "()";
    return true;
  }
  for (int spatial = 1; spatial <= 2; ++spatial) {
    std::string d = std::to_string(spatial) + "d";
    if (fn == "max_pool" + d || fn == "avg_pool" + d) {
      if (!onlyArgs({"kernel_size", "stride", "padding"}, 4)) return false;
      return poolWindow(layer, fn[0] == 'm' ? "MaxPool" : "AvgPool", spatial, argumentOf(m_, e, "kernel_size", 1),
                        argumentOf(m_, e, "stride", 2), argumentOf(m_, e, "padding", 3), kNone, nullptr);
    }
    if (fn == "adaptive_avg_pool" + d) {
      if (!onlyArgs({"output_size"}, 2)) return false;
      layer.view = intsIn(argumentOf(m_, e, "output_size", 1), nullptr, static_cast<size_t>(spatial));
      if (layer.view.empty()) return false;
      for (int64_t v : layer.view)
        if (v <= 0) return false;
      layer.kind = "AdaptiveAvgPool" + d;
      layer.spatial = spatial;
      layer.saves = LayerSize::Saves::Input;
      layer.name = std::string(fn) + "()";
      return true;
    }
  }
  // An elementwise activation of the value alone: `F.relu(x)`, `torch.tanh(x)`.
  if (x.argCount != 1 || !m_.args[x.firstArg].keyword.empty()) return false;
  return activationLayer(fn, layer);
}

bool Sizes::selectionLayer(NodeId subscript, LayerSize& layer, NodeId& value) const {
  const Expr& x = m_.expr(subscript);
  if (x.kind != ExprKind::Subscript || x.rhs == kNone) return false;
  const Expr& index = m_.expr(x.rhs);
  if (index.kind != ExprKind::Container || index.shape != shape::kTuple) return false;  // `x[0]` is not read as a selection
  // Full slices, one integer, full slices: `x[:, -1]`, `x[:, 0, :]`.
  std::optional<int64_t> picked;
  int64_t dim = 0;
  for (const Arg& a : argsOf(m_, index)) {
    const Expr& e = m_.expr(a.value);
    bool fullSlice = e.kind == ExprKind::Other && e.argCount == 0 && m_.textOf(a.value) == ":";
    if (fullSlice) {
      if (!picked) ++dim;
      continue;
    }
    if (picked) return false;
    picked = intValue(a.value);
    if (!picked) return false;
  }
  if (!picked) return false;
  layer.kind = "Select";
  layer.startDim = dim;
  layer.selectIndex = *picked;
  layer.aliasesInput = true;
  layer.name = "select()";
  value = x.lhs;
  return true;
}

bool Sizes::checkpointedFunction(NodeId fn, LayerSize& layer) const {
  // A function handed to checkpoint by name: `F.gelu`, `torch.relu` (not a call: nothing else is passed).
  const std::string& canon = m_.canonical(fn);
  if (m_.expr(fn).kind == ExprKind::Call || !startsWith(canon, "torch.")) return false;
  std::string_view module = std::string_view(canon).substr(0, canon.size() - names::lastComponent(canon).size());
  if (module != "torch." && module != "torch.nn.functional.") return false;
  return activationLayer(names::lastComponent(canon), layer);
}

}  // namespace oomlint
