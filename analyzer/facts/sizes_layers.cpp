// One torch.nn layer at a time: its sizes from the constructor call, and the shape it maps an
// input to (see sizes.h). A layer any of whose sizes or options this cannot read is unknown, and
// the network it is in is then unknown too.
#include <algorithm>
#include <cstdlib>

#include "facts/facts.h"
#include "facts/names.h"
#include "facts/sizes.h"
#include "facts/torch_api.h"

namespace oomlint {

namespace {

using torch_api::startsWith;
using Shape = std::vector<int64_t>;

std::optional<LayerSize::Saves> activationSaves(std::string_view cls) {
  for (std::string_view s : {"GELU", "SiLU", "LeakyReLU", "ELU", "Mish", "Softplus", "Hardswish"})
    if (cls == s) return LayerSize::Saves::Input;
  for (std::string_view s : {"ReLU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax"})
    if (cls == s) return LayerSize::Saves::Output;
  return std::nullopt;
}

/// The text of a plain string literal (`"same"`, `'gelu'`), "" for anything else.
std::string_view stringValue(const Module& m, NodeId e) {
  if (e == kNone || m.expr(e).kind != ExprKind::String) return {};
  std::string_view t = m.expr(e).text;
  if (t.size() < 2 || (t.front() != '"' && t.front() != '\'') || t.back() != t.front()) return {};
  return t.substr(1, t.size() - 2);
}

/// An optional boolean option: `fallback` when absent, nullopt when it is not a literal.
std::optional<bool> boolOption(const Module& m, NodeId e, bool fallback) {
  if (e == kNone) return fallback;
  if (isTrueLiteral(m, e)) return true;
  if (isFalseLiteral(m, e)) return false;
  return std::nullopt;
}

int64_t product(const Shape& s, size_t from = 0, size_t to = SIZE_MAX) {
  int64_t n = 1;
  for (size_t i = from; i < s.size() && i < to; ++i) n *= s[i];
  return n;
}

/// A dimension counted from the end (`-1`) as from the start; -1 when out of range.
int64_t axis(int64_t dim, size_t rank) {
  int64_t r = static_cast<int64_t>(rank);
  if (dim < 0) dim += r;
  return dim >= 0 && dim < r ? dim : -1;
}

/// Convolutions and pooling: each of the last `spatial` dimensions through the window.
std::optional<Shape> windowed(const LayerSize& l, Shape s) {
  size_t first = s.size() - static_cast<size_t>(l.spatial);
  for (int d = 0; d < l.spatial; ++d) {
    int64_t& n = s[first + static_cast<size_t>(d)];
    if (l.samePadding) continue;
    int64_t span = n + 2 * l.padding[d] - l.dilation[d] * (l.kernel[d] - 1) - 1;
    if (span < 0) return std::nullopt;
    int64_t out = span / l.stride[d] + 1;
    // ceil_mode: a last window may start in the padding's left half, never past the input.
    if (l.ceilMode && span % l.stride[d] != 0 && (out * l.stride[d]) < n + l.padding[d]) ++out;
    n = out;
  }
  return s;
}

}  // namespace

bool Sizes::readLayer(NodeId ctor, std::string_view cls, const Bindings* env, LayerSize& layer) const {
  auto positive = [&](NodeId e) -> int64_t {
    auto v = intIn(e, env, 0);
    return v && *v > 0 ? *v : 0;
  };
  if (cls == "Linear") {
    int64_t in = positive(argumentOf(m_, ctor, "in_features", 0)), out = positive(argumentOf(m_, ctor, "out_features", 1));
    auto bias = boolOption(m_, argumentOf(m_, ctor, "bias", 2), true);
    if (!in || !out || !bias) return false;
    layer.inFeatures = in;
    layer.outFeatures = out;
    layer.parameters = in * out + (*bias ? out : 0);
    layer.bias = *bias;
    layer.saves = LayerSize::Saves::Input;
    layer.name = "Linear(" + std::to_string(in) + ", " + std::to_string(out) + ")";
    return true;
  }
  if (cls == "Embedding") {
    // A lookup table: it saves the indices it is given (which exist anyway), not its output.
    int64_t num = positive(argumentOf(m_, ctor, "num_embeddings", 0)), dim = positive(argumentOf(m_, ctor, "embedding_dim", 1));
    if (!num || !dim) return false;
    // max_norm renormalises rows in place, sparse makes sparse gradients: not this plain lookup.
    for (std::string_view k : {"max_norm", "sparse", "_weight"})
      if (keywordArg(m_, ctor, k) != kNone) return false;
    if (positionalArg(m_, ctor, 3) != kNone) return false;  // max_norm and later, positionally
    layer.vocabulary = num;
    layer.outFeatures = dim;
    layer.parameters = num * dim;
    layer.name = "Embedding(" + std::to_string(num) + ", " + std::to_string(dim) + ")";
    return true;
  }
  if (cls == "LayerNorm") {
    int64_t n = positive(positionalArg(m_, ctor, 0));
    NodeId eps = keywordArg(m_, ctor, "eps");
    uint32_t args = m_.expr(ctor).argCount - (eps != kNone ? 1 : 0);
    if (!n || args != 1 || (eps != kNone && m_.expr(eps).kind != ExprKind::Number)) return false;  // a shape tuple, elementwise_affine: not read
    layer.parameters = 2 * n;
    layer.inFeatures = n;  // normalizes a last dimension of n: the widths must chain through it
    layer.savedBytesPerRow = 8;
    layer.saves = LayerSize::Saves::Input;
    layer.name = "LayerNorm(" + std::to_string(n) + ")";
    return true;
  }
  if (cls == "Dropout") {
    layer.extraBytesPerElement = 1;  // the boolean mask, in training
    layer.identityInEval = true;
    NodeId p = argumentOf(m_, ctor, "p", 0);
    if (p != kNone && m_.expr(p).kind != ExprKind::Number) return false;
    if (p != kNone) layer.dropout = std::strtod(std::string(m_.expr(p).text).c_str(), nullptr);
    if (keywordArg(m_, ctor, "inplace") != kNone || positionalArg(m_, ctor, 1) != kNone) return false;
    return true;
  }
  if (auto saves = activationSaves(cls)) {
    // In place, the activation overwrites its input: what it keeps is not this model's. Its
    // other options (a slope, a softmax's dim) are numbers that do not change what it keeps.
    for (const Arg& a : argsOf(m_, m_.expr(ctor))) {
      ExprKind kind = m_.expr(a.value).kind;
      if (isTrueLiteral(m_, a.value) || (kind != ExprKind::Number && kind != ExprKind::Bool && kind != ExprKind::UnaryOp))
        return false;
    }
    layer.saves = *saves;
    return true;
  }
  int spatial = cls.size() > 2 && cls.substr(cls.size() - 2) == "1d" ? 1 : cls.size() > 2 && cls.substr(cls.size() - 2) == "2d" ? 2 : 0;
  std::string_view base = spatial ? cls.substr(0, cls.size() - 2) : cls;
  std::string suffix = std::to_string(spatial) + "d";
  if (spatial && base == "Conv") {
    int64_t in = positive(argumentOf(m_, ctor, "in_channels", 0)), out = positive(argumentOf(m_, ctor, "out_channels", 1));
    layer.kernel = intsIn(argumentOf(m_, ctor, "kernel_size", 2), env, static_cast<size_t>(spatial));
    NodeId stride = argumentOf(m_, ctor, "stride", 3), padding = argumentOf(m_, ctor, "padding", 4);
    NodeId dilation = argumentOf(m_, ctor, "dilation", 5), groups = argumentOf(m_, ctor, "groups", 6);
    auto bias = boolOption(m_, argumentOf(m_, ctor, "bias", 7), true);
    if (!in || !out || layer.kernel.empty() || !bias) return false;
    if (argumentOf(m_, ctor, "padding_mode", 8) != kNone && stringValue(m_, argumentOf(m_, ctor, "padding_mode", 8)) != "zeros") return false;
    layer.stride = stride == kNone ? std::vector<int64_t>(spatial, 1) : intsIn(stride, env, static_cast<size_t>(spatial));
    layer.dilation = dilation == kNone ? std::vector<int64_t>(spatial, 1) : intsIn(dilation, env, static_cast<size_t>(spatial));
    std::string_view pad = stringValue(m_, padding);
    layer.samePadding = pad == "same";
    layer.padding = padding == kNone || pad == "valid" || pad == "same" ? std::vector<int64_t>(spatial, 0)
                                                                         : intsIn(padding, env, static_cast<size_t>(spatial));
    layer.groups = groups == kNone ? 1 : positive(groups);
    if (layer.stride.empty() || layer.dilation.empty() || layer.padding.empty() || layer.groups <= 0) return false;
    if (in % layer.groups || out % layer.groups) return false;
    for (int d = 0; d < spatial; ++d)
      if (layer.kernel[d] <= 0 || layer.stride[d] <= 0 || layer.dilation[d] <= 0 || layer.padding[d] < 0) return false;
    if (layer.samePadding)
      for (int64_t s : layer.stride)
        if (s != 1) return false;  // PyTorch refuses padding="same" with strides
    layer.spatial = spatial;
    layer.inFeatures = in;
    layer.outFeatures = out;
    layer.bias = *bias;
    layer.parameters = out * (in / layer.groups) * product(layer.kernel) + (*bias ? out : 0);
    layer.saves = LayerSize::Saves::Input;  // the input (and the weight, a parameter)
    layer.name = "Conv" + suffix + "(" + std::to_string(in) + ", " + std::to_string(out) + ", " + std::to_string(layer.kernel[0]) + ")";
    return true;
  }
  if (spatial && base == "BatchNorm") {
    int64_t c = positive(argumentOf(m_, ctor, "num_features", 0));
    if (!c) return false;
    for (std::string_view k : {"eps", "momentum"})
      if (keywordArg(m_, ctor, k) != kNone && m_.expr(keywordArg(m_, ctor, k)).kind != ExprKind::Number) return false;
    auto affine = boolOption(m_, argumentOf(m_, ctor, "affine", 3), true), track = boolOption(m_, argumentOf(m_, ctor, "track_running_stats", 4), true);
    if (!affine || !track || !*track || positionalArg(m_, ctor, 1) != kNone) return false;
    layer.spatial = spatial;
    layer.inFeatures = c;  // channels: the input's dimension 1
    layer.parameters = *affine ? 2 * c : 0;
    layer.bias = *affine;
    layer.fixedSavedBytes = 2 * c * 4;  // the batch's mean and reciprocal deviation, float32
    layer.saves = LayerSize::Saves::Input;
    layer.name = "BatchNorm" + suffix + "(" + std::to_string(c) + ")";
    return true;
  }
  if (spatial && (base == "MaxPool" || base == "AvgPool")) {
    bool max = base == "MaxPool";
    if (max && boolOption(m_, argumentOf(m_, ctor, "return_indices", 4), false) != std::optional<bool>(false)) return false;
    auto ceil = boolOption(m_, argumentOf(m_, ctor, "ceil_mode", max ? 5 : 3), false);
    if (!ceil) return false;
    if (!max && (argumentOf(m_, ctor, "count_include_pad", 4) != kNone || argumentOf(m_, ctor, "divisor_override", 5) != kNone)) return false;
    layer.ceilMode = *ceil;
    return poolWindow(layer, base, spatial, argumentOf(m_, ctor, "kernel_size", 0), argumentOf(m_, ctor, "stride", 1),
                      argumentOf(m_, ctor, "padding", 2), max ? argumentOf(m_, ctor, "dilation", 3) : kNone, env);
  }
  if (spatial && base == "AdaptiveAvgPool") {
    layer.view = intsIn(argumentOf(m_, ctor, "output_size", 0), env, static_cast<size_t>(spatial));
    if (layer.view.empty()) return false;
    for (int64_t v : layer.view)
      if (v <= 0) return false;
    layer.spatial = spatial;
    layer.saves = LayerSize::Saves::Input;
    layer.name = "AdaptiveAvgPool" + suffix + "(" + std::to_string(layer.view[0]) + ")";
    return true;
  }
  if (cls == "Flatten") {
    auto start = intIn(argumentOf(m_, ctor, "start_dim", 0), env, 0), end = intIn(argumentOf(m_, ctor, "end_dim", 1), env, 0);
    if ((argumentOf(m_, ctor, "start_dim", 0) != kNone && !start) || (argumentOf(m_, ctor, "end_dim", 1) != kNone && !end)) return false;
    layer.startDim = start.value_or(1);
    layer.endDim = end.value_or(-1);
    layer.aliasesInput = true;
    layer.name = "Flatten()";
    return true;
  }
  if (cls == "TransformerEncoderLayer" || cls == "MultiheadAttention") {
    bool encoder = cls == "TransformerEncoderLayer";
    int64_t d = positive(argumentOf(m_, ctor, encoder ? "d_model" : "embed_dim", 0)), h = positive(argumentOf(m_, ctor, encoder ? "nhead" : "num_heads", 1));
    if (!d || !h || d % h) return false;
    int64_t ff = encoder ? (argumentOf(m_, ctor, "dim_feedforward", 2) == kNone ? 2048 : positive(argumentOf(m_, ctor, "dim_feedforward", 2))) : 0;
    NodeId p = argumentOf(m_, ctor, "dropout", encoder ? 3 : 2);
    if (p != kNone && m_.expr(p).kind != ExprKind::Number) return false;
    layer.dropout = p == kNone ? (encoder ? 0.1 : 0.0) : std::strtod(std::string(m_.expr(p).text).c_str(), nullptr);
    NodeId act = encoder ? argumentOf(m_, ctor, "activation", 4) : kNone;
    layer.activation = act == kNone ? "relu" : std::string(stringValue(m_, act));
    if (layer.activation != "relu" && layer.activation != "gelu") return false;
    auto batchFirst = boolOption(m_, keywordArg(m_, ctor, "batch_first"), false);
    auto normFirst = boolOption(m_, keywordArg(m_, ctor, "norm_first"), false);
    if (encoder && !ff) return false;
    if (!batchFirst || !normFirst || *normFirst) return false;
    // Anything else (layer_norm_eps, bias=False, kdim/vdim, add_bias_kv ...) is not this model.
    for (const Arg& a : argsOf(m_, m_.expr(ctor))) {
      std::string_view k = a.keyword;
      if (!k.empty() && k != "d_model" && k != "nhead" && k != "embed_dim" && k != "num_heads" && k != "dim_feedforward" &&
          k != "dropout" && k != "activation" && k != "batch_first" && k != "norm_first")
        return false;
    }
    if (positionalArg(m_, ctor, encoder ? 5 : 3) != kNone) return false;
    layer.inFeatures = layer.outFeatures = d;
    layer.heads = h;
    layer.feedforward = ff;
    layer.batchFirst = *batchFirst;
    layer.parameters = encoder ? 4 * d * d + 4 * d + 2 * d * ff + ff + d + 4 * d : 4 * d * d + 4 * d;
    layer.costKnown = false;
    layer.name = std::string(cls) + "(" + std::to_string(d) + ", " + std::to_string(h) + ")";
    return true;
  }
  if (cls == "LSTM" || cls == "GRU" || cls == "RNN") {
    int64_t in = positive(argumentOf(m_, ctor, "input_size", 0)), hidden = positive(argumentOf(m_, ctor, "hidden_size", 1));
    NodeId layers = argumentOf(m_, ctor, "num_layers", 2);
    int64_t stacked = layers == kNone ? 1 : positive(layers);
    auto bias = boolOption(m_, keywordArg(m_, ctor, "bias"), true);
    auto batchFirst = boolOption(m_, keywordArg(m_, ctor, "batch_first"), false);
    auto bidirectional = boolOption(m_, keywordArg(m_, ctor, "bidirectional"), false);
    NodeId p = keywordArg(m_, ctor, "dropout");
    if (!in || !hidden || !stacked || !bias || !batchFirst || !bidirectional) return false;
    if (p != kNone && m_.expr(p).kind != ExprKind::Number) return false;
    if (positionalArg(m_, ctor, 3) != kNone) return false;
    for (std::string_view k : {"proj_size", "nonlinearity"})
      if (keywordArg(m_, ctor, k) != kNone) return false;
    int64_t gates = cls == "LSTM" ? 4 : cls == "GRU" ? 3 : 1, dirs = *bidirectional ? 2 : 1;
    layer.inFeatures = in;
    layer.outFeatures = hidden * dirs;
    layer.stacked = stacked;
    layer.bias = *bias;
    layer.batchFirst = *batchFirst;
    layer.bidirectional = *bidirectional;
    layer.dropout = p == kNone ? 0.0 : std::strtod(std::string(m_.expr(p).text).c_str(), nullptr);
    for (int64_t l = 0; l < stacked; ++l) {
      int64_t width = l == 0 ? in : hidden * dirs;
      layer.parameters += dirs * gates * hidden * (width + hidden + (*bias ? 2 : 0));
    }
    layer.costKnown = false;
    layer.name = std::string(cls) + "(" + std::to_string(in) + ", " + std::to_string(hidden) + ")";
    return true;
  }
  if (cls == "LSTMCell" || cls == "GRUCell" || cls == "RNNCell") {
    // One time step: (batch, input_size) -> (batch, hidden_size), from a zero state.
    int64_t in = positive(argumentOf(m_, ctor, "input_size", 0)), hidden = positive(argumentOf(m_, ctor, "hidden_size", 1));
    auto bias = boolOption(m_, argumentOf(m_, ctor, "bias", 2), true);
    if (!in || !hidden || !bias) return false;
    if (positionalArg(m_, ctor, 3) != kNone || keywordArg(m_, ctor, "nonlinearity") != kNone) return false;
    int64_t gates = cls == "LSTMCell" ? 4 : cls == "GRUCell" ? 3 : 1;
    layer.inFeatures = in;
    layer.outFeatures = hidden;
    layer.bias = *bias;
    layer.parameters = gates * hidden * (in + hidden + (*bias ? 2 : 0));
    layer.costKnown = false;
    layer.name = std::string(cls) + "(" + std::to_string(in) + ", " + std::to_string(hidden) + ")";
    return true;
  }
  return false;
}

std::optional<std::vector<int64_t>> layerOutput(const LayerSize& l, const std::vector<int64_t>& in) {
  if (in.empty()) return std::nullopt;
  Shape out = in;
  const std::string& k = l.kind;
  size_t rank = in.size();
  if (l.spatial) {
    // Batched (N, C, *spatial) or not (C, *spatial); BatchNorm1d also takes (N, C).
    size_t want = static_cast<size_t>(l.spatial) + 2;
    bool norm = startsWith(k, "BatchNorm");
    bool accepted = rank == want || (!norm && rank == want - 1) || (norm && l.spatial == 1 && rank == 2);
    if (!accepted) return std::nullopt;
    size_t channel = rank == want - 1 && !norm ? 0 : 1;
    if (startsWith(k, "Conv")) {
      if (in[channel] != l.inFeatures) return std::nullopt;
      out[channel] = l.outFeatures;
      return windowed(l, out);
    }
    if (norm) return in[1] == l.inFeatures ? std::optional<Shape>(out) : std::nullopt;
    if (startsWith(k, "Adaptive")) {
      for (int d = 0; d < l.spatial; ++d) out[rank - static_cast<size_t>(l.spatial) + static_cast<size_t>(d)] = l.view[d];
      return out;
    }
    for (int d = 0; d < l.spatial; ++d)
      if (in[rank - static_cast<size_t>(l.spatial) + static_cast<size_t>(d)] + 2 * l.padding[d] < l.kernel[d]) return std::nullopt;
    return windowed(l, out);
  }
  if (k == "Flatten") {
    int64_t s = axis(l.startDim, rank), e = axis(l.endDim, rank);
    if (s < 0 || e < 0 || s > e) return std::nullopt;
    Shape f(in.begin(), in.begin() + s);
    f.push_back(product(in, static_cast<size_t>(s), static_cast<size_t>(e) + 1));
    f.insert(f.end(), in.begin() + e + 1, in.end());
    return f;
  }
  if (k == "Select") {
    int64_t d = axis(l.startDim, rank);
    if (d < 0) return std::nullopt;
    int64_t extent = in[static_cast<size_t>(d)];
    if (l.selectIndex >= extent || l.selectIndex < -extent) return std::nullopt;
    Shape s = in;
    s.erase(s.begin() + d);
    return s;
  }
  if (k == "View") {
    Shape v;
    int64_t known = 1, inferred = -1;
    for (size_t i = 0; i < l.view.size(); ++i) {
      int64_t d = l.view[i];
      if (d <= LayerSize::kKeepDim) {
        int64_t a = axis(d - LayerSize::kKeepDim, rank);
        if (a < 0) return std::nullopt;
        d = in[static_cast<size_t>(a)];
      }
      if (d == -1) {
        if (inferred >= 0) return std::nullopt;
        inferred = static_cast<int64_t>(i);
      } else if (d <= 0) {
        return std::nullopt;
      } else {
        known *= d;
      }
      v.push_back(d);
    }
    int64_t total = product(in);
    if (inferred >= 0) {
      if (total % known) return std::nullopt;
      v[static_cast<size_t>(inferred)] = total / known;
    }
    if (product(v) != total) return std::nullopt;
    return v;
  }
  if (l.vocabulary) return std::nullopt;  // an Embedding maps ids, not features: the network reads it
  if (l.inFeatures && in.back() != l.inFeatures) return std::nullopt;
  if (k == "TransformerEncoderLayer" || k == "MultiheadAttention" || k == "LSTM" || k == "GRU" || k == "RNN") {
    if (rank != 2 && rank != 3) return std::nullopt;
  }
  if ((k == "LSTMCell" || k == "GRUCell" || k == "RNNCell") && rank > 2) return std::nullopt;  // one step, no sequence
  if (l.outFeatures) out.back() = l.outFeatures;
  return out;
}

}  // namespace oomlint
