// Activation checkpointing in a stated network (facts/sizes_network.cpp, sizes_checkpoint.cpp):
// a checkpointed segment keeps only its input for backward, a checkpoint around one op saves
// nothing, and OOM402's estimate is what checkpointing each block whole would save.
#include <gtest/gtest.h>

#include <string>

#include "estimates_util.h"

using namespace estimates_test;

namespace {

const std::string kImports = std::string(kHead) + "from torch.utils.checkpoint import checkpoint\n\n";

/// A Linear-act-Linear block of width 64 whose forward is `forward` (one line, `x` its input).
std::string block(const std::string& forward) {
  return "class Block(nn.Module):\n"
         "    def __init__(self, width):\n"
         "        super().__init__()\n"
         "        self.fc1 = nn.Linear(width, width)\n"
         "        self.act = nn.GELU()\n"
         "        self.fc2 = nn.Linear(width, width)\n"
         "    def forward(self, x):\n"
         "        return " + forward + "\n\n";
}

const char* const kTwoBlocks =
    "model = nn.Sequential(Block(64), Block(64))\n"
    "x = torch.randn(16, 64)\n";

const char* const kStoreLoop =
    "outs = []\n"
    "model.eval()\n"
    "for i in range(10):\n"
    "    outs.append(model(x))\n";

const char* const kTrainLoop =
    "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "for step in range(10):\n"
    "    opt.zero_grad()\n"
    "    loss = model(x).pow(2).mean()\n"
    "    loss.backward()\n"
    "    opt.step()\n";

constexpr double kTensor = 16.0 * 64 * 4;  // one (16, 64) float32 activation

}  // namespace

TEST(EstimatesCheckpoint, ACheckpointAroundOneOpKeepsWhatTheNetworkKeepsWithoutIt) {
  // Per block: fc1's input, GELU's input (fc1's output, now the checkpoint's input) and fc2's
  // input; the first block's input is the stated x, which exists anyway.
  oomlint::EstimatedCost plain = estimateOf(kImports + block("self.fc2(self.act(self.fc1(x)))") + kTwoBlocks + kStoreLoop, "OOM102");
  oomlint::EstimatedCost perOp =
      estimateOf(kImports + block("self.fc2(checkpoint(self.act, self.fc1(x), use_reentrant=False))") + kTwoBlocks + kStoreLoop, "OOM102");
  ASSERT_TRUE(plain.present);
  ASSERT_TRUE(perOp.present);
  EXPECT_DOUBLE_EQ(5 * kTensor, plain.bytes);
  EXPECT_DOUBLE_EQ(plain.bytes, perOp.bytes);
  // A function handed by name is one op too: `checkpoint(F.gelu, h)`.
  oomlint::EstimatedCost byName = estimateOf(kImports + block("self.fc2(checkpoint(F.gelu, self.fc1(x)))") + kTwoBlocks + kStoreLoop, "OOM102");
  ASSERT_TRUE(byName.present);
  EXPECT_DOUBLE_EQ(plain.bytes, byName.bytes);
}

TEST(EstimatesCheckpoint, ABlockCheckpointedWholeKeepsOnlyItsInput) {
  std::string net = kImports + block("self.fc2(self.act(self.fc1(x)))") +
                    "class Net(nn.Module):\n"
                    "    def __init__(self):\n"
                    "        super().__init__()\n"
                    "        self.b1 = Block(64)\n"
                    "        self.b2 = Block(64)\n"
                    "    def forward(self, x):\n"
                    "        x = checkpoint(self.b1, x, use_reentrant=False)\n"
                    "        return checkpoint(self.b2, x, use_reentrant=False)\n\n"
                    "model = Net()\n"
                    "x = torch.randn(16, 64)\n";
  oomlint::EstimatedCost e = estimateOf(net + kStoreLoop, "OOM102");
  ASSERT_TRUE(e.present);
  // b1's input is x (not counted); b2's input is b1's output, which its checkpoint keeps.
  EXPECT_DOUBLE_EQ(kTensor, e.bytes);
}

TEST(EstimatesCheckpoint, PerOpCheckpointsAreEstimatedAsWhatWholeBlockCheckpointsWouldSave) {
  oomlint::EstimatedCost e =
      estimateOf(kImports + block("self.fc2(checkpoint(self.act, self.fc1(x), use_reentrant=False))") + kTwoBlocks + kTrainLoop, "OOM402");
  ASSERT_TRUE(e.present);
  EXPECT_EQ("peak", e.measure);
  // As written 2·3 activations less x; each block whole keeps its input: block 2's alone counts.
  // 2·B·T·W per block, as the H200 probe measured.
  EXPECT_DOUBLE_EQ(5 * kTensor - kTensor, e.bytes);
  EXPECT_NE(std::string::npos, e.formula.find("each of the 2 `Block` checkpointed whole")) << e.formula;
  EXPECT_NE(std::string::npos, e.basis.find("nn.Sequential")) << e.basis;
}

TEST(EstimatesCheckpoint, NoOom402EstimateWithoutAStatedTrainingForward) {
  const std::string perOp = kImports + block("self.fc2(checkpoint(self.act, self.fc1(x), use_reentrant=False))");
  // No network of the class is built.
  EXPECT_FALSE(estimateOf(perOp + "def train(model, x):\n    model(x).sum().backward()\n", "OOM402").present);
  // Only an evaluation forward: nothing is kept for backward there.
  EXPECT_FALSE(estimateOf(perOp + kTwoBlocks + "model.eval()\nwith torch.no_grad():\n    y = model(x)\n", "OOM402").present);
  // An input of unknown shape.
  EXPECT_FALSE(estimateOf(perOp + "model = nn.Sequential(Block(64), Block(64))\n"
                                  "def step(x):\n    model(x).sum().backward()\n", "OOM402").present);
}

TEST(EstimatesCheckpoint, ACheckpointThisCannotReadLeavesTheNetworkUnknown) {
  // A lambda, an extra tensor argument, an unknown keyword: the segment's layers are not known.
  for (const char* forward : {"self.fc2(checkpoint(lambda t: F.gelu(t), self.fc1(x)))",
                              "self.fc2(checkpoint(self.act, self.fc1(x), x))",
                              "self.fc2(checkpoint(self.act, self.fc1(x), context_fn=None))",
                              "self.fc2(checkpoint(torch.tanh(x), self.fc1(x)))"}) {
    oomlint::FileResult r = check(kImports + block(forward) + kTwoBlocks + kStoreLoop);
    const oomlint::Finding* f = findingWith(r, "OOM102");
    ASSERT_NE(nullptr, f) << forward;
    EXPECT_FALSE(f->estimated.present) << forward << ": " << f->estimated.formula;
    if (const oomlint::Finding* g = findingWith(r, "OOM402")) EXPECT_FALSE(g->estimated.present) << forward;
  }
}
