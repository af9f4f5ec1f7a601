#pragma once
/// Probes: each runs one anti-pattern and its fix on the same workload and measures memory per
/// step. Numbers, not folklore: the analyzer's rules quote what these measure.

#include <torch/torch.h>

#include <functional>
#include <string>
#include <vector>

#include "meter.h"

namespace oomlint::probe {

/// One layer of a network a checked file states (`oomlint check --verify` passes them).
struct LayerSpec {
  /// Linear, ReLU, GELU, SiLU, Tanh, Sigmoid, Softmax, LogSoftmax, Dropout, LayerNorm, Embedding
  /// (first only), Conv1d/2d, BatchNorm1d/2d, MaxPool1d/2d, AvgPool1d/2d, AdaptiveAvgPool1d/2d,
  /// Flatten, View, Select, TransformerEncoderLayer, MultiheadAttention (self-attention), LSTM, GRU, RNN.
  std::string kind;
  /// Features or channels in and out. Embedding: in = the table's rows, out = its width; a
  /// recurrent layer: out = hidden size times its directions.
  int64_t in = 0, out = 0;
  bool bias = true;
  double p = 0.5;  // Dropout; attention's and stacked recurrent layers' dropout
  std::vector<int64_t> kernel, stride, padding, dilation;  // convolutions and pooling, per spatial dimension
  int64_t groups = 1;
  bool same = false, ceil = false;  // padding="same"; pooling's ceil_mode
  std::vector<int64_t> size;        // AdaptiveAvgPool's output size; View's target shape
  int64_t start = 1, end = -1;      // Flatten
  int64_t dim = 0, index = 0;       // Select: `x[:, -1]` takes index `index` of dimension `dim`
  int64_t heads = 0, ff = 0, layers = 1;
  std::string activation = "relu";
  bool batchFirst = false, bidirectional = false;
};

/// The parametrised workload every probe uses (an MLP and a transformer block).
struct Workload {
  int64_t width = 256;
  int64_t depth = 4;
  int64_t heads = 4;
  int64_t batch = 16;
  int64_t seq = 128;
  int64_t vocab = 8192;
  int64_t steps = 8;
  int64_t accum = 4;  // micro-batches per optimizer step
  torch::Dtype dtype = torch::kFloat;
  torch::Device device = torch::kCPU;
  /// Shape-faithful: the checked file's own layers and input rows replace the generic MLP (and
  /// its batch x width input) in the probes that train or evaluate an MLP.
  std::vector<LayerSpec> layers;
  int64_t rows = 0;
  /// The stated input's shape (token ids' shape for an Embedding first); empty: rows x inFeatures.
  std::vector<int64_t> shape;
  /// Width of the stated network's input (0 without layers).
  int64_t inFeatures() const;
};

/// Reads a layer list from `--workload`'s JSON ({"kind": "Linear", "in": 512, "out": 2048}, ...);
/// an unknown kind or a width that does not chain is an error message, "" when it is fine.
std::string checkLayers(const std::vector<LayerSpec>& layers);

struct VariantResult {
  std::string name;
  std::vector<int64_t> allocated;  // device bytes above the baseline after each step
  int64_t peak = 0;                // peak device bytes above the baseline
  int64_t retained = 0;            // device bytes still held after the last step
  double slope = 0;                // least-squares growth, bytes per step
  double msPerStep = 0;
  int64_t hostPeak = 0;            // peak host (CPU allocator) bytes above the baseline
  int64_t segments = 0;            // cudaMalloc'ed segments during the run (CUDA)
  int64_t reserved = 0;            // allocator's reserved bytes at the end (CUDA; == allocated on CPU)
  int64_t driverUsed = 0;          // device memory in use per the driver at the end (CUDA)
};

struct ProbeResult {
  std::string code;   // OOM101 ..., or SEED-* for seed claims
  std::string title;
  bool available = true;
  std::string note;   // why unavailable, or what to read in the numbers
  VariantResult anti, fix;
  std::string verdict;  // seed claims: "confirmed: ..." / "refuted: ..."
};

struct ProbeContext {
  Workload w;
  Meter& device;
  Meter& host;
  /// Called before each variant (drop gradients, optimizer state): both variants start alike.
  std::function<void()> reset;
};

struct ProbeDef {
  const char* code;
  const char* title;
  ProbeResult (*run)(ProbeContext&);
};

const std::vector<ProbeDef>& allProbes();

/// Runs `step` once to reach its steady state (lazily created gradients, optimizer state), then
/// w.steps more times, measuring each against the bytes held before the warm-up. State the variant
/// keeps lives in the caller's scope, so `retained` sees it.
VariantResult measure(ProbeContext& c, const std::string& name, const std::function<void(int64_t)>& step,
                      int64_t steps = -1);

/// Least-squares slope of y over 0..n-1.
double slope(const std::vector<int64_t>& y);

}  // namespace oomlint::probe
