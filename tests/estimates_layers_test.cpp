// Convolutional, pooling, reshaping, attention and recurrent layers (facts/sizes_layers.cpp):
// the shapes they map an input to, what a convolutional network's forward saves, and the
// networks a probe can build but no formula sizes (attention, recurrent layers).
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "engine/frontends.h"
#include "estimates_util.h"
#include "facts/facts.h"
#include "facts/sizes.h"

using namespace estimates_test;

namespace {

const char* const kEvalLoop =
    "outs = []\n"
    "model.eval()\n"
    "for i in range(10):\n"
    "    outs.append(model(x))\n";

/// The workload of the first forward call in `source` whose sizes chain (nullopt when none does).
std::optional<oomlint::StatedWorkload> workloadIn(const std::string& source) {
  oomlint::ParsedDocument doc = oomlint::parseDocument("layers_case.py", source, oomlint::DocumentLanguage::Python);
  if (!doc.module) return std::nullopt;
  oomlint::Facts facts(*doc.module);
  const oomlint::Module& m = *doc.module;
  for (oomlint::NodeId e = 0; e < m.exprs.size(); ++e)
    if (m.expr(e).kind == oomlint::ExprKind::Call && facts.isForwardCall(e))
      if (auto w = facts.sizes().workloadOf(e)) return w;
  return std::nullopt;
}

const std::string kConvNet = std::string(kHead) +
                             "class Net(nn.Module):\n"
                             "    def __init__(self):\n"
                             "        super().__init__()\n"
                             "        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)\n"
                             "        self.bn1 = nn.BatchNorm2d(16)\n"
                             "        self.pool = nn.MaxPool2d(2, 2)\n"
                             "        self.conv2 = nn.Conv2d(16, 32, kernel_size=(3, 3), padding='same')\n"
                             "        self.fc = nn.Linear(32 * 8 * 8, 10)\n"
                             "    def forward(self, x):\n"
                             "        x = self.pool(F.relu(self.bn1(self.conv1(x))))\n"
                             "        x = F.relu(self.conv2(x))\n"
                             "        x = torch.flatten(x, 1)\n"
                             "        out = F.log_softmax(self.fc(x), dim=1)\n"
                             "        return out\n"
                             "model = Net().cuda()\n"
                             "x = torch.randn(8, 3, 16, 16, device='cuda')\n";

}  // namespace

TEST(EstimatesLayers, AConvolutionalNetworksForwardSavesItsConvolutionsInputsPoolingIndicesAndActivations) {
  oomlint::EstimatedCost e = estimateOf(kConvNet + kEvalLoop, "OOM102");
  ASSERT_TRUE(e.present);
  // By hand, float32, batch 8: conv1's output (BatchNorm saves it) 8·16·16·16; ReLU's output
  // (saved by ReLU, then by the pooling as its input) 8·16·16·16; the pooling's int64 indices
  // 8·16·8·8·8 bytes; the pooling's output (conv2's input) 8·16·8·8; ReLU's output 8·32·8·8,
  // which the flatten views and the Linear saves; the log-softmax's output 8·10 (the stored
  // output, kept by the detached copy too, so not counted); BatchNorm's two statistics 2·16.
  double floats = 8.0 * 16 * 16 * 16 * 2 + 8.0 * 16 * 8 * 8 + 8.0 * 32 * 8 * 8;
  EXPECT_DOUBLE_EQ(floats * 4 + 8.0 * 16 * 8 * 8 * 8 + 2 * 16 * 4, e.bytes);
  EXPECT_NE(std::string::npos, e.basis.find("input `torch.randn(8, 3, 16, 16"));
  ASSERT_TRUE(estimateOf(kConvNet + kEvalLoop, "OOM201").present);
}

TEST(EstimatesLayers, WindowsStridesPaddingAndReshapesGiveTheShapesPyTorchGives) {
  // Shapes checked against PyTorch: Conv2d(3, 8, 5, stride=2, padding=1) on 32x32 is 15x15;
  // MaxPool2d(3, 2, ceil_mode=True) on 15 is 7 (a last window starting inside the input);
  // AdaptiveAvgPool2d((2, 2)); Flatten from 1; a view keeping dimension 0.
  auto w = workloadIn(std::string(kHead) +
                      "model = nn.Sequential(nn.Conv2d(3, 8, 5, stride=2, padding=1), nn.ReLU(), nn.MaxPool2d(3, 2, ceil_mode=True),\n"
                      "                      nn.AdaptiveAvgPool2d((2, 2)), nn.Flatten(), nn.Linear(32, 4))\n"
                      "x = torch.randn(4, 3, 32, 32)\n"
                      "y = model(x)\n");
  ASSERT_TRUE(w);
  using S = std::vector<int64_t>;
  ASSERT_EQ(6u, w->shapes.size());
  EXPECT_EQ((S{4, 8, 15, 15}), w->shapes[0]);
  EXPECT_EQ((S{4, 8, 7, 7}), w->shapes[2]);
  EXPECT_EQ((S{4, 8, 2, 2}), w->shapes[3]);
  EXPECT_EQ((S{4, 32}), w->shapes[4]);
  EXPECT_EQ((S{4, 4}), w->shapes[5]);
  EXPECT_EQ((S{4, 3, 32, 32}), w->input);
  // Conv1d with dilation on (2, 16, 100) is 94 long; AvgPool1d(4) of 94 is 23; `x.view(x.size(0), -1)`.
  auto one = workloadIn(std::string(kHead) +
                        "class Net(nn.Module):\n"
                        "    def __init__(self):\n"
                        "        super().__init__()\n"
                        "        self.conv = nn.Conv1d(16, 32, 7, dilation=2, padding=3)\n"
                        "        self.head = nn.Linear(32 * 23, 5)\n"
                        "    def forward(self, x):\n"
                        "        x = F.avg_pool1d(F.gelu(self.conv(x)), 4)\n"
                        "        x = x.view(x.size(0), -1)\n"
                        "        return self.head(x)\n"
                        "model = Net()\n"
                        "x = torch.randn(2, 16, 100)\n"
                        "y = model(x)\n");
  ASSERT_TRUE(one);
  ASSERT_EQ(5u, one->shapes.size());
  EXPECT_EQ((S{2, 32, 94}), one->shapes[0]);
  EXPECT_EQ((S{2, 32, 23}), one->shapes[2]);
  EXPECT_EQ((S{2, 736}), one->shapes[3]);
}

TEST(EstimatesLayers, ALayerOrShapeThatDoesNotChainMeansNoEstimate) {
  std::string input = "x = torch.randn(8, 3, 16, 16, device='cuda')\n";
  auto sequential = [&](const std::string& layers) { return "model = nn.Sequential(" + layers + ").cuda()\n" + input; };
  // The positive twin.
  ASSERT_TRUE(estimateOf(kHead + sequential("nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 14 * 14, 4)") + kEvalLoop,
                         "OOM102").present);
  const std::pair<const char*, std::string> cases[] = {
      {"channels that do not chain", sequential("nn.Conv2d(4, 8, 3), nn.ReLU()")},
      {"a flattened width the Linear does not take", sequential("nn.Conv2d(3, 8, 3), nn.Flatten(), nn.Linear(8 * 16 * 16, 4)")},
      {"a kernel larger than the input", sequential("nn.Conv2d(3, 8, 17), nn.ReLU()")},
      {"a kernel from a config", sequential("nn.Conv2d(3, 8, cfg.kernel), nn.ReLU()")},
      {"reflect padding copies its input", sequential("nn.Conv2d(3, 8, 3, padding=1, padding_mode='reflect'), nn.ReLU()")},
      {"an in-place activation", sequential("nn.Conv2d(3, 8, 3), nn.ReLU(inplace=True)")},
      {"pooling that returns indices", sequential("nn.Conv2d(3, 8, 3), nn.MaxPool2d(2, return_indices=True)")},
      {"batch norm without running statistics", sequential("nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8, track_running_stats=False)")},
      {"batch norm over other channels", sequential("nn.Conv2d(3, 8, 3), nn.BatchNorm2d(16)")},
      {"a 2-D input to a 2-D convolution", "model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU()).cuda()\nx = torch.randn(8, 3, device='cuda')\n"},
      // Attention and recurrent layers chain (a probe can build them) but what they keep is the
      // fused kernel's or cuDNN's: no formula.
      {"an attention layer", "model = nn.Sequential(nn.Linear(16, 64), nn.TransformerEncoderLayer(64, 4, 256, batch_first=True)).cuda()\n"
                             "x = torch.randn(8, 10, 16, device='cuda')\n"},
  };
  for (const auto& [what, setup] : cases) {
    oomlint::FileResult r = check(kHead + setup + kEvalLoop);
    const oomlint::Finding* f = findingWith(r, "OOM102");
    ASSERT_NE(nullptr, f) << what;
    EXPECT_FALSE(f->estimated.present) << what << ": " << f->estimated.summary();
  }
  // A view whose sizes do not multiply out is no network either.
  EXPECT_FALSE(workloadIn(std::string(kHead) +
                          "class Net(nn.Module):\n"
                          "    def __init__(self):\n"
                          "        super().__init__()\n"
                          "        self.conv = nn.Conv2d(3, 8, 3)\n"
                          "    def forward(self, x):\n"
                          "        return self.conv(x).view(-1, 9)\n"
                          "model = Net()\nx = torch.randn(8, 3, 16, 16)\ny = model(x)\n"));
}

TEST(EstimatesLayers, AttentionAndRecurrentLayersChainThroughTheirOutputOnly) {
  using S = std::vector<int64_t>;
  // `h, _ = self.attn(h, h, h)` is self-attention; `x, _ = self.rnn(x)` and `self.rnn(x)[0]`
  // take the output of the (output, state) pair. A bidirectional LSTM doubles the width.
  std::string cls = std::string(kHead) +
                    "class Net(nn.Module):\n"
                    "    def __init__(self):\n"
                    "        super().__init__()\n"
                    "        self.embed = nn.Embedding(1000, 64)\n"
                    "        self.rnn = nn.LSTM(64, 32, num_layers=2, batch_first=True, bidirectional=True)\n"
                    "        self.attn = nn.MultiheadAttention(64, 4, batch_first=True)\n"
                    "        self.gru = nn.GRU(64, 48, batch_first=True)\n"
                    "        self.head = nn.Linear(48, 1000)\n"
                    "    def forward(self, tokens):\n"
                    "        x = self.embed(tokens)\n"
                    "        x, _ = self.rnn(x)\n"
                    "        h, _ = self.attn(x, x, x)\n"
                    "        return self.head(self.gru(h)[0])\n"
                    "model = Net()\n"
                    "tokens = torch.randint(0, 1000, (4, 12))\n"
                    "y = model(tokens)\n";
  auto w = workloadIn(cls);
  ASSERT_TRUE(w);
  ASSERT_EQ(5u, w->shapes.size());
  EXPECT_EQ((S{4, 12, 64}), w->shapes[1]);
  EXPECT_EQ((S{4, 12, 48}), w->shapes[3]);
  EXPECT_EQ((S{4, 12, 1000}), w->shapes[4]);
  EXPECT_TRUE(w->layers[1].bidirectional && w->layers[1].batchFirst);
  EXPECT_EQ(2, w->layers[1].stacked);
  // LSTM parameters: per layer and direction 4·32·(in + 32 + 2); attention 4·64² + 4·64.
  EXPECT_EQ(2 * 4 * 32 * (64 + 32 + 2) + 2 * 4 * 32 * (64 + 32 + 2), w->layers[1].parameters);
  EXPECT_EQ(4 * 64 * 64 + 4 * 64, w->layers[2].parameters);
  // Negative twins: an LSTM used as a plain value (it returns a pair), cross-attention, an
  // LSTM inside a Sequential (which cannot unpack the pair), a layer norm applied first.
  const std::pair<const char*, std::string> none[] = {
      {"the pair used as a value", "        x = self.embed(tokens)\n        x = self.rnn(x)\n        return x\n"},
      {"cross-attention", "        x = self.embed(tokens)\n        h, _ = self.attn(x, tokens, tokens)\n        return h\n"},
      {"a query that is not the keys", "        x = self.embed(tokens)\n        h, _ = self.attn(torch.tanh(x), x, x)\n        return h\n"},
  };
  size_t forward = cls.find("        x = self.embed(tokens)\n");
  size_t end = cls.find("model = Net()");
  for (const auto& [what, body] : none)
    EXPECT_FALSE(workloadIn(cls.substr(0, forward) + body + cls.substr(end))) << what;
  EXPECT_FALSE(workloadIn(std::string(kHead) + "model = nn.Sequential(nn.Linear(16, 64), nn.LSTM(64, 64))\n"
                                               "x = torch.randn(8, 10, 16)\ny = model(x)\n"));
  EXPECT_FALSE(workloadIn(std::string(kHead) + "model = nn.Sequential(nn.TransformerEncoderLayer(64, 4, norm_first=True))\n"
                                               "x = torch.randn(8, 10, 64)\ny = model(x)\n"));
}

TEST(EstimatesLayers, OneStepOfARecurrentOutputIsASelection) {
  using S = std::vector<int64_t>;
  // `self.fc(out[:, -1])`: the last step of a batch-first LSTM's output, a view of it; also
  // `out[:, 0, :]`. A selection allocates nothing and keeps its base.
  auto classifier = [](const std::string& select, const char* input = "torch.randn(8, 20, 32)") {
    return std::string(kHead) +
           "class Net(nn.Module):\n"
           "    def __init__(self):\n"
           "        super().__init__()\n"
           "        self.lstm = nn.LSTM(32, 64, batch_first=True)\n"
           "        self.fc = nn.Linear(64, 5)\n"
           "    def forward(self, x):\n"
           "        out, _ = self.lstm(x)\n"
           "        return self.fc(" + select + ")\n"
           "model = Net()\n"
           "x = " + input + "\n"
           "y = model(x)\n";
  };
  for (const char* select : {"out[:, -1]", "out[:, 0, :]", "out[:, 19]"}) {
    auto w = workloadIn(classifier(select));
    ASSERT_TRUE(w) << select;
    ASSERT_EQ(3u, w->shapes.size()) << select;
    EXPECT_EQ((S{8, 64}), w->shapes[1]) << select;
    EXPECT_EQ((S{8, 5}), w->shapes[2]) << select;
    EXPECT_EQ("Select", w->layers[1].kind);
    EXPECT_EQ(1, w->layers[1].startDim) << select;
    EXPECT_TRUE(w->layers[1].aliasesInput);
  }
  // Not one integer among full slices, or an index past the dimension: no network.
  for (const char* select : {"out[:, i]", "out[:, -1:]", "out[0, -1]", "out[:, 20]", "out[:, -21]", "out[-1]", "out[..., -1]"})
    EXPECT_FALSE(workloadIn(classifier(select))) << select;
}
