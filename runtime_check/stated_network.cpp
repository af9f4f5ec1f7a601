// The network a checked file states, built for the probes (`--workload` "layers"): each layer
// kind's LibTorch module, the checks of a layer list, and the stated input.
#include "stated_network.h"

#include <algorithm>

namespace oomlint::probe {

using torch::Tensor;

int64_t Workload::inFeatures() const {
  for (const LayerSpec& l : layers)
    if (l.kind == "Linear" || l.kind == "LayerNorm") return l.in;
  return 0;
}

namespace {

const std::vector<std::string>& buildableKinds() {
  static const std::vector<std::string> kinds = {
      "Linear", "Embedding", "LayerNorm", "ReLU", "GELU", "SiLU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "Dropout",
      "Conv1d", "Conv2d", "BatchNorm1d", "BatchNorm2d", "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d",
      "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "Flatten", "View", "Select", "TransformerEncoderLayer", "MultiheadAttention",
      "LSTM", "GRU", "RNN", "LSTMCell", "GRUCell", "RNNCell"};
  return kinds;
}

bool startsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

/// Convolutions and pooling: how many spatial dimensions (1 or 2), from the kind's suffix.
size_t spatialOf(const std::string& kind) {
  if (kind.size() < 2 || kind.back() != 'd') return 0;
  return kind[kind.size() - 2] == '1' ? 1 : kind[kind.size() - 2] == '2' ? 2 : 0;
}

}  // namespace

std::string checkLayers(const std::vector<LayerSpec>& layers) {
  // The features (or channels) flowing between layers, 0 where a reshape makes them unknown here
  // (the analyzer chained the full shapes; LibTorch checks them again when the network runs).
  int64_t width = 0;
  bool sawSize = false;
  for (size_t i = 0; i < layers.size(); ++i) {
    const LayerSpec& l = layers[i];
    const auto& kinds = buildableKinds();
    if (std::find(kinds.begin(), kinds.end(), l.kind) == kinds.end()) return "unknown layer kind " + l.kind;
    if (l.kind == "Embedding") {
      // A lookup of integer indices: only the first layer can be one.
      if (i != 0) return "an Embedding must be the first layer";
      if (l.in <= 0 || l.out <= 0) return "Embedding needs positive sizes";
      width = l.out;
      sawSize = true;
      continue;
    }
    size_t spatial = spatialOf(l.kind);
    bool window = startsWith(l.kind, "Conv") || startsWith(l.kind, "MaxPool") || startsWith(l.kind, "AvgPool");
    if (window && (l.kernel.size() != spatial || l.stride.size() != spatial || l.padding.size() != spatial || l.dilation.size() != spatial))
      return l.kind + " needs a kernel, stride, padding and dilation per spatial dimension";
    if (startsWith(l.kind, "Adaptive") && l.size.size() != spatial) return l.kind + " needs an output size per spatial dimension";
    if (l.kind == "View") {
      if (l.size.empty()) return "View needs its target shape";
      width = l.size.back();
      continue;
    }
    if (l.kind == "Flatten" || l.kind == "Select") {
      width = 0;
      continue;
    }
    bool changes = l.kind == "Linear" || startsWith(l.kind, "Conv") || l.kind == "LSTM" || l.kind == "GRU" || l.kind == "RNN" ||
                   l.kind == "LSTMCell" || l.kind == "GRUCell" || l.kind == "RNNCell";
    bool keeps = l.kind == "LayerNorm" || startsWith(l.kind, "BatchNorm") || l.kind == "TransformerEncoderLayer" ||
                 l.kind == "MultiheadAttention";
    if (!changes && !keeps) continue;  // activations, dropout, pooling: the width passes through
    if (l.in <= 0 || (changes && l.out <= 0)) return l.kind + " needs positive sizes";
    if ((l.kind == "TransformerEncoderLayer" || l.kind == "MultiheadAttention") && (l.heads <= 0 || l.in % l.heads))
      return l.kind + " needs heads that divide its width";
    if (l.bidirectional && l.out % 2) return l.kind + ": a bidirectional layer's output is twice its hidden size";
    if (width && l.in != width) return "layer widths do not chain: " + std::to_string(width) + " then " + std::to_string(l.in);
    width = changes ? l.out : l.in;
    sawSize = true;
  }
  if (layers.empty() || !sawSize) return "a layer list needs a sized layer (Linear, Conv, LayerNorm, Embedding ...)";
  return {};
}


namespace {

/// A layer the checked file calls in a way a Sequential cannot: a (sequence, batch, features)
/// layer on a batch-first input, self-attention's `attn(x, x, x)`, the output of an (output,
/// state) pair, a reshape to a stated shape.
struct StatedLayerImpl : torch::nn::Module {
  explicit StatedLayerImpl(const LayerSpec& l) : spec(l) {
    if (l.kind == "TransformerEncoderLayer") {
      torch::nn::TransformerEncoderLayerOptions o(l.in, l.heads);
      o.dim_feedforward(l.ff).dropout(l.p);
      if (l.activation == "gelu") o.activation(torch::kGELU);
      encoder = register_module("layer", torch::nn::TransformerEncoderLayer(o));
    }
    if (l.kind == "MultiheadAttention")
      attention = register_module("layer", torch::nn::MultiheadAttention(torch::nn::MultiheadAttentionOptions(l.in, l.heads).dropout(l.p)));
    int64_t hidden = l.bidirectional ? l.out / 2 : l.out;
    if (l.kind == "LSTM")
      lstm = register_module("layer", torch::nn::LSTM(torch::nn::LSTMOptions(l.in, hidden).num_layers(l.layers).bias(l.bias)
                                                          .batch_first(l.batchFirst).dropout(l.p).bidirectional(l.bidirectional)));
    if (l.kind == "GRU")
      gru = register_module("layer", torch::nn::GRU(torch::nn::GRUOptions(l.in, hidden).num_layers(l.layers).bias(l.bias)
                                                        .batch_first(l.batchFirst).dropout(l.p).bidirectional(l.bidirectional)));
    if (l.kind == "RNN")
      rnn = register_module("layer", torch::nn::RNN(torch::nn::RNNOptions(l.in, hidden).num_layers(l.layers).bias(l.bias)
                                                        .batch_first(l.batchFirst).dropout(l.p).bidirectional(l.bidirectional)));
    if (l.kind == "LSTMCell") lstmCell = register_module("layer", torch::nn::LSTMCell(torch::nn::LSTMCellOptions(l.in, l.out).bias(l.bias)));
    if (l.kind == "GRUCell") gruCell = register_module("layer", torch::nn::GRUCell(torch::nn::GRUCellOptions(l.in, l.out).bias(l.bias)));
    if (l.kind == "RNNCell") rnnCell = register_module("layer", torch::nn::RNNCell(torch::nn::RNNCellOptions(l.in, l.out).bias(l.bias)));
  }
  Tensor forward(Tensor x) {
    if (spec.kind == "View") return x.reshape(spec.size);
    // One step of a cell from a zero state: its new hidden state (an LSTM cell's h).
    if (lstmCell) return std::get<0>(lstmCell->forward(x));
    if (gruCell) return gruCell->forward(x);
    if (rnnCell) return rnnCell->forward(x);
    if (spec.kind == "Select") return x.select(spec.dim, spec.index);
    if (lstm) return std::get<0>(lstm->forward(x));
    if (gru) return std::get<0>(gru->forward(x));
    if (rnn) return std::get<0>(rnn->forward(x));
    // LibTorch's attention takes (sequence, batch, features): a batch-first or unbatched input is
    // viewed so, and the output viewed back.
    bool unbatched = x.dim() == 2;
    if (unbatched) x = x.unsqueeze(1);
    else if (spec.batchFirst) x = x.transpose(0, 1);
    Tensor y = encoder ? encoder->forward(x) : std::get<0>(attention->forward(x, x, x));
    return unbatched ? y.squeeze(1) : spec.batchFirst ? y.transpose(0, 1) : y;
  }
  LayerSpec spec;
  torch::nn::TransformerEncoderLayer encoder{nullptr};
  torch::nn::MultiheadAttention attention{nullptr};
  torch::nn::LSTM lstm{nullptr};
  torch::nn::GRU gru{nullptr};
  torch::nn::RNN rnn{nullptr};
  torch::nn::LSTMCell lstmCell{nullptr};
  torch::nn::GRUCell gruCell{nullptr};
  torch::nn::RNNCell rnnCell{nullptr};
};
TORCH_MODULE(StatedLayer);

template <size_t D>
torch::ExpandingArray<D> dims(const std::vector<int64_t>& v) {
  return torch::ExpandingArray<D>(at::ArrayRef<int64_t>(v));
}

/// A convolution or pooling layer of `D` spatial dimensions.
template <size_t D, typename Conv, typename ConvOptions, typename MaxPool, typename MaxPoolOptions, typename AvgPool,
          typename AvgPoolOptions, typename BatchNorm>
void pushWindowed(torch::nn::Sequential& s, const LayerSpec& l) {
  if (startsWith(l.kind, "Conv")) {
    ConvOptions o(l.in, l.out, dims<D>(l.kernel));
    o.stride(dims<D>(l.stride)).dilation(dims<D>(l.dilation)).groups(l.groups).bias(l.bias);
    if (l.same) o.padding(torch::kSame);
    else o.padding(dims<D>(l.padding));
    s->push_back(Conv(o));
  } else if (startsWith(l.kind, "BatchNorm")) {
    s->push_back(BatchNorm(torch::nn::BatchNormOptions(l.in).affine(l.bias)));
  } else if (startsWith(l.kind, "MaxPool")) {
    s->push_back(MaxPool(MaxPoolOptions(dims<D>(l.kernel)).stride(dims<D>(l.stride)).padding(dims<D>(l.padding))
                             .dilation(dims<D>(l.dilation)).ceil_mode(l.ceil)));
  } else {
    s->push_back(AvgPool(AvgPoolOptions(dims<D>(l.kernel)).stride(dims<D>(l.stride)).padding(dims<D>(l.padding)).ceil_mode(l.ceil)));
  }
}

}  // namespace

torch::nn::Sequential makeMlp(const Workload& w) {
  torch::nn::Sequential s;
  for (const LayerSpec& l : w.layers) {
    size_t spatial = spatialOf(l.kind);
    if (l.kind == "Linear") s->push_back(torch::nn::Linear(torch::nn::LinearOptions(l.in, l.out).bias(l.bias)));
    else if (l.kind == "Embedding") s->push_back(torch::nn::Embedding(l.in, l.out));
    else if (l.kind == "ReLU") s->push_back(torch::nn::ReLU());
    else if (l.kind == "GELU") s->push_back(torch::nn::GELU());
    else if (l.kind == "SiLU") s->push_back(torch::nn::SiLU());
    else if (l.kind == "Tanh") s->push_back(torch::nn::Tanh());
    else if (l.kind == "Sigmoid") s->push_back(torch::nn::Sigmoid());
    else if (l.kind == "Softmax") s->push_back(torch::nn::Softmax(-1));
    else if (l.kind == "LogSoftmax") s->push_back(torch::nn::LogSoftmax(-1));
    else if (l.kind == "Dropout") s->push_back(torch::nn::Dropout(l.p));
    else if (l.kind == "LayerNorm") s->push_back(torch::nn::LayerNorm(torch::nn::LayerNormOptions({l.in})));
    else if (l.kind == "Flatten") s->push_back(torch::nn::Flatten(torch::nn::FlattenOptions().start_dim(l.start).end_dim(l.end)));
    else if (l.kind == "AdaptiveAvgPool1d") s->push_back(torch::nn::AdaptiveAvgPool1d(l.size[0]));
    else if (l.kind == "AdaptiveAvgPool2d")
      s->push_back(torch::nn::AdaptiveAvgPool2d(torch::nn::AdaptiveAvgPool2dOptions({l.size[0], l.size[1]})));
    else if (spatial == 1)
      pushWindowed<1, torch::nn::Conv1d, torch::nn::Conv1dOptions, torch::nn::MaxPool1d, torch::nn::MaxPool1dOptions,
                   torch::nn::AvgPool1d, torch::nn::AvgPool1dOptions, torch::nn::BatchNorm1d>(s, l);
    else if (spatial == 2)
      pushWindowed<2, torch::nn::Conv2d, torch::nn::Conv2dOptions, torch::nn::MaxPool2d, torch::nn::MaxPool2dOptions,
                   torch::nn::AvgPool2d, torch::nn::AvgPool2dOptions, torch::nn::BatchNorm2d>(s, l);
    else s->push_back(StatedLayer(l));  // View, Select, attention, recurrent layers
  }
  for (int64_t i = 0; w.layers.empty() && i < w.depth; ++i) {
    s->push_back(torch::nn::Linear(w.width, w.width));
    s->push_back(torch::nn::GELU());
  }
  s->to(w.device, w.dtype);
  return s;
}

Tensor input(const Workload& w) {
  bool ids = !w.layers.empty() && w.layers.front().kind == "Embedding";  // token ids
  if (ids && !w.shape.empty())
    return torch::randint(0, w.layers.front().in, w.shape, torch::TensorOptions().device(w.device).dtype(torch::kLong));
  if (ids) return torch::randint(0, w.layers.front().in, {w.rows}, torch::TensorOptions().device(w.device).dtype(torch::kLong));
  if (!w.layers.empty() && !w.shape.empty()) return torch::randn(w.shape, torch::TensorOptions().device(w.device).dtype(w.dtype));
  if (!w.layers.empty()) return torch::randn({w.rows, w.inFeatures()}, torch::TensorOptions().device(w.device).dtype(w.dtype));
  return torch::randn({w.batch, w.width}, torch::TensorOptions().device(w.device).dtype(w.dtype));
}

}  // namespace oomlint::probe
