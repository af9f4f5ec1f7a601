#pragma once
/// Sizes: what the code states about how big things are, for the static cost estimates.
///
/// A finding that says "this keeps about 2.2 MiB per iteration at your sizes" is worth more than
/// one that says "this keeps the graph". The sizes come only from what the file states: integer
/// literals and names bound once to them (module constants, a constructor's arguments or its
/// parameters' defaults), layer constructors with such sizes (`nn.Linear(4096, 4096)`, a first
/// `nn.Embedding(32000, 4096)` over integer token ids, `nn.Conv2d(3, 64, 3, padding=1)`, pooling,
/// batch norm; sizes_layers.cpp lists them), reshapes of a forward's value, activation checkpoints
/// in a forward (`checkpoint(self.block, x)`: the segment keeps only its input), tensor
/// factories (`torch.randn(32, 4096)`), a DataLoader's `batch_size` over a TensorDataset of
/// factory tensors, the model's dtype (`.bfloat16()`, `.to(dtype=torch.float16)`). Anything else
/// (a command-line argument, a config object, a layer this file cannot size, control flow in a
/// forward) leaves the size unknown, and an unknown size means no estimate: a wrong number
/// would be worse than none.

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/model.h"

namespace oomlint {

class Facts;

/// A tensor whose shape the code states, with the place it was read from.
struct KnownShape {
  std::vector<int64_t> dims;
  int elementBytes = 4;  // float32 unless stated
  std::string source;    // "torch.randn(32, 4096) at line 9"
  int64_t rows() const;  // every dimension but the last: what a Linear maps row by row
};

/// One layer of a network the code spells out, with what autograd saves when it runs.
struct LayerSize {
  enum class Saves : uint8_t { Input, Output, Nothing };
  std::string name;         // "Linear(4096, 4096)"
  std::string kind;         // torch.nn's class name: Linear, ReLU, GELU, Dropout, LayerNorm, Embedding ...
  bool bias = true;
  double dropout = 0.5;     // Dropout's p
  int64_t inFeatures = 0;   // 0: keeps its input's width (activations, dropout, norms)
  int64_t outFeatures = 0;
  int64_t vocabulary = 0;   // Embedding: the table's rows (its input is indices, not features)
  int64_t parameters = 0;
  Saves saves = Saves::Nothing;
  int extraBytesPerElement = 0;  // dropout's boolean mask
  int indexBytesPerElement = 0;  // max pooling's int64 indices: kept with autograd on, transient under no_grad
  int64_t savedBytesPerRow = 0;  // LayerNorm's mean and reciprocal deviation, float32 per row
  int64_t fixedSavedBytes = 0;   // BatchNorm's per-channel mean and reciprocal deviation
  bool identityInEval = false;   // dropout: returns its input in eval mode
  /// Convolutions and pooling: how many trailing dimensions are spatial (1 or 2), and per spatial
  /// dimension the kernel, stride, padding and dilation; `samePadding` for padding="same".
  int spatial = 0;
  std::vector<int64_t> kernel, stride, padding, dilation;
  bool samePadding = false;
  bool ceilMode = false;
  int64_t groups = 1;
  /// Reshapes that return a view of their input (no new memory): Flatten's dimensions, View's
  /// target (kKeepDim + k: the input's dimension k; -1: inferred). AdaptiveAvgPool's output size.
  static constexpr int64_t kKeepDim = -1000;
  int64_t startDim = 1, endDim = -1;
  /// Select (`x[:, -1]`): the index taken of dimension startDim, both as written (negative from the end).
  int64_t selectIndex = 0;
  std::vector<int64_t> view;
  bool aliasesInput = false;
  /// Attention and recurrent layers: heads, feed-forward width, stacked layers, the batch-first
  /// layout, both directions, the activation's name ("relu", "gelu").
  int64_t heads = 0, feedforward = 0, stacked = 1;
  bool batchFirst = false, bidirectional = false;
  std::string activation;
  /// What autograd keeps inside the layer is modelled: false for attention and recurrent layers,
  /// whose kernels (fused attention, cuDNN's reserve space) decide it. Such a network still has
  /// shapes (a probe can build it) but no estimate.
  bool costKnown = true;
  /// Inside `torch.utils.checkpoint.checkpoint(fn, x)`: the layers of one nonzero id run as one
  /// checkpointed segment, which keeps only its input for backward and recomputes the rest.
  uint32_t checkpointSegment = 0;
  /// The module classes of this file whose forwards the layer runs in, innermost first, each with
  /// the instance of it in the network (numbered from 1): what "checkpoint a whole block" covers.
  struct Block {
    int32_t cls = -1;
    uint32_t instance = 0;
  };
  std::vector<Block> blocks;
};

/// The shape a layer maps `in` to, when the layer accepts it (channels, widths and ranks agree).
std::optional<std::vector<int64_t>> layerOutput(const LayerSize& layer, const std::vector<int64_t>& in);

/// What an elementwise activation keeps for backward, by its torch function's or tensor method's
/// name: "tanh", "relu", "sigmoid" their output; "gelu", "silu" their input.
std::optional<LayerSize::Saves> elementwiseSaves(std::string_view name);

/// A network whose layers, widths and parameter dtype the code states, run in the listed order.
struct KnownNetwork {
  std::vector<LayerSize> layers;
  int elementBytes = 4;  // the parameters' dtype
  std::string source;    // "nn.Sequential at line 5 (8 layers, 67.1M parameters, bf16)"
  int64_t parameters() const;
  int64_t inFeatures() const;
};

/// What one forward of a known network on a known input costs, in bytes.
struct ForwardSizes {
  double saved = 0;      // A_fwd: tensors autograd keeps for backward (the input itself excluded)
  double output = 0;     // the forward's output
  double peakGrad = 0;   // the forward's own peak with autograd on: what it saved so far + the live layer
  double peakNoGrad = 0; // the same under no_grad: the largest pair of consecutive activations
  double parameters = 0; // P times the parameters' element size
  /// How far the backward (with no earlier gradients) rises above the moment the forward ends; -1
  /// where it is not modelled (checkpointed segments run their forward again in backward, eval).
  double backwardRise = -1;
  bool outputSaved = false;  // the last layer saves its own output (a final ReLU)
  int64_t outFeatures = 0;   // the output's last dimension
  int elementBytes = 4;
  std::string basis;     // the network's and the input's sources
};

/// What evaluating one tensor expression makes and keeps for backward (Sizes::expressionCost).
struct ExpressionCost {
  KnownShape shape;    // the value's shape and element size
  double saved = 0;    // bytes of tensors made by the expression that autograd keeps for backward
  bool fresh = false;  // the value is made by the expression (not a tensor bound elsewhere)
  std::string basis;   // where the sizes were read
};

/// Shapes given for names (a loop-carried state's shape, read from its first binding).
using ShapeBindings = std::unordered_map<std::string_view, KnownShape>;

/// What checkpointing every instance of one module class whole would save on a forward that runs
/// it (OOM402): the activations saved as written, less those saved when each instance keeps only
/// its input.
struct BlockCheckpointGain {
  double asWritten = 0;   // A_fwd of the forward as the file writes it (its per-op checkpoints included)
  double wholeBlocks = 0; // A_fwd with each instance of the class checkpointed whole
  int instances = 0;
  std::string basis;
};

/// A forward the probe can rebuild: the network's layers, the input's rows, the dtype.
struct StatedWorkload {
  std::vector<LayerSize> layers;
  std::vector<std::vector<int64_t>> shapes;  // each layer's output shape
  std::vector<int64_t> input;                // the input's shape (token ids for an Embedding first)
  int64_t rows = 0;
  int elementBytes = 4;
  std::string dtype = "f32";  // the probe's name for the parameters' dtype: f32, bf16, f16, f64
  std::string basis;
};

/// The parameters of a known network: P times their element size.
struct KnownParameters {
  double bytes = 0;
  std::string basis;
};

class Sizes {
 public:
  explicit Sizes(const Facts& facts);

  /// The integer an expression states: a literal (negated too), arithmetic on known integers, a
  /// name bound once to one (in its function or at module level). nullopt when unknown.
  std::optional<int64_t> intValue(NodeId e) const;
  /// The shape of the tensor an expression evaluates to, when the code states it.
  std::optional<KnownShape> shapeOf(NodeId e) const;
  /// The network a module expression names, when every layer and width is stated.
  const KnownNetwork* networkOf(NodeId moduleExpr) const;
  /// A forward call (`model(x)`) of a known network on an input of known shape. Where the call
  /// runs in eval mode (facts' evaluation context), dropout is the identity.
  std::optional<ForwardSizes> forwardOf(NodeId forwardCall) const;
  /// What a tensor expression saves for backward, when every size in it is stated: calls of known
  /// networks, `torch.cat`, elementwise activations (`torch.tanh`, `F.relu`, `.sigmoid()`) and
  /// dtype conversions over tensors of known shape; `given` sizes names the file binds more than
  /// once. nullopt for anything else: an op this cannot size leaves the cost unknown.
  std::optional<ExpressionCost> expressionCost(NodeId e, const ShapeBindings& given) const;
  /// What a forward call of a known network on a known input runs, for a shape-faithful probe.
  std::optional<StatedWorkload> workloadOf(NodeId forwardCall) const;
  /// What checkpointing each instance of module class `cls` whole would save (OOM402), on the
  /// first forward of the file, with autograd on, that runs it on a known input; nullopt when no
  /// such forward is stated or the whole-block checkpoints save nothing more.
  std::optional<BlockCheckpointGain> blockCheckpointGain(int32_t cls) const;
  /// The parameters of the network a module expression names.
  std::optional<KnownParameters> parametersOf(NodeId moduleExpr) const;
  /// Iterations of `for _ in range(N)` with N known, or of a loop over a DataLoader of a
  /// TensorDataset of stated rows and batch size.
  std::optional<int64_t> tripCount(NodeId forStmt) const;
  /// Element size a tensor or module method converts to (`.half()`: 2), 0 for any other method.
  static int conversionBytes(std::string_view method);
  /// Bytes per element of a dtype expression (`torch.bfloat16`), 0 when not a known dtype.
  int dtypeBytes(NodeId e) const;
  /// The probe's name for a floating dtype or conversion (`torch.bfloat16`, `.half()`): "bf16",
  /// "f16", "f32", "f64"; "" for anything else. bf16 and f16 have one element size but are not
  /// one dtype.
  static std::string_view floatName(std::string_view dtypeOrMethod);

 private:
  /// Names a class constructor's parameters bind, while its `__init__` is read.
  using Bindings = std::unordered_map<std::string_view, NodeId>;
  /// The statement a name's value comes from: the assignment that reaches it, or the one
  /// module-level assignment of a name the function neither assigns nor takes as a parameter.
  NodeId bindingOf(NodeId name) const;
  std::optional<int64_t> intIn(NodeId e, const Bindings* env, int depth) const;
  std::optional<KnownShape> shapeIn(NodeId e, int depth) const;
  std::optional<KnownShape> batchOfLoader(NodeId forStmt, NodeId target) const;
  /// `DataLoader(TensorDataset(...), batch_size=B)` with B stated: the loader's and the dataset's constructor calls.
  struct TensorLoader {
    NodeId loader = kNone;
    NodeId dataset = kNone;
    int64_t batch = 0;
  };
  std::optional<TensorLoader> tensorLoader(NodeId iter) const;
  /// Batches a DataLoader expression yields, when its dataset's rows and batch size are stated.
  std::optional<int64_t> loaderLength(NodeId iter) const;
  std::optional<KnownNetwork> buildNetwork(NodeId ctor, const Bindings* env, int depth) const;
  bool appendLayer(NodeId ctor, const Bindings* env, int depth, KnownNetwork& net) const;
  /// One torch.nn layer's sizes from its constructor call (sizes_layers.cpp); false when any is unknown.
  bool readLayer(NodeId ctor, std::string_view cls, const Bindings* env, LayerSize& layer) const;
  /// Integers given as one int or a tuple of `n` (`kernel_size=3`, `(3, 3)`); empty when unknown.
  std::vector<int64_t> intsIn(NodeId e, const Bindings* env, size_t n) const;
  /// A pooling window (`base` MaxPool or AvgPool) from its kernel, stride (None: the kernel),
  /// padding and dilation arguments.
  bool poolWindow(LayerSize& layer, std::string_view base, int spatial, NodeId kernel, NodeId stride, NodeId padding,
                  NodeId dilation, const Bindings* env) const;
  /// A functional op or reshape of a forward's chained value, as a layer: `torch.flatten(x, 1)`,
  /// `x.view(x.size(0), -1)`, `F.max_pool2d(x, 2)`, `F.log_softmax(x, dim=1)`; `value` is set to
  /// the expression it applies to.
  bool functionalLayer(NodeId e, LayerSize& layer, NodeId& value) const;
  /// `x[:, -1]`, `x[:, 0, :]`: one integer index among full slices, as a Select layer (a view
  /// without that dimension); `value` is set to the subscripted expression.
  bool selectionLayer(NodeId subscript, LayerSize& layer, NodeId& value) const;
  /// Every layer's output shape on `input`, when the network accepts it.
  std::optional<std::vector<std::vector<int64_t>>> chainShapes(const KnownNetwork& net, const KnownShape& input) const;
  std::optional<KnownNetwork> classNetwork(int32_t cls, NodeId ctor, int depth) const;
  /// The module class of this file a constructor call builds (`Block(width)`), else -1.
  int32_t fileClassOf(NodeId ctor) const;
  /// A module class's `__init__` as one constructor call runs it: the values its parameters
  /// take, and each `self.<name> = Call(...)` it assigns once (kNone where assigned twice).
  struct ClassInit {
    uint32_t init = UINT32_MAX;
    Bindings env;
    std::unordered_map<std::string_view, NodeId> submodules;
  };
  std::optional<ClassInit> classInit(int32_t cls, NodeId ctor) const;
  /// The parameters of `model.backbone` where `model` is built from a class of this file that
  /// assigns `self.backbone` a sized layer or Sequential.
  std::optional<KnownParameters> submoduleParameters(NodeId attribute) const;
  /// A layer of `torch.utils.checkpoint.checkpoint(fn, ...)`'s function `fn`: `F.gelu`, `torch.relu`.
  bool checkpointedFunction(NodeId fn, LayerSize& layer) const;
  /// The element size of the module's parameters (0: conversions disagree), and in `*name` the
  /// dtype's floatName ("" when the file converts to none and it stays float32's "f32").
  /// One forward of `net` in `bytes` per element on `input`; `inputFresh`: the input is made for
  /// this forward, so a first layer that saves it keeps it alive.
  std::optional<ForwardSizes> forwardOn(const KnownNetwork& net, int bytes, const KnownShape& input, bool eval,
                                        bool inputFresh) const;
  /// The module a forward call runs: `model` of `model(x)` and of `model.forward(x)`.
  NodeId moduleCalled(NodeId call) const;
  std::optional<ExpressionCost> costIn(NodeId e, const ShapeBindings& given, int depth) const;
  int moduleDtype(NodeId moduleExpr, int elementBytes, std::string_view* name = nullptr) const;
  std::string at(NodeId e) const;

  const Facts& f_;
  const Module& m_;
  mutable std::unordered_map<NodeId, std::optional<KnownNetwork>> networks_;  // per constructor call
};

}  // namespace oomlint
