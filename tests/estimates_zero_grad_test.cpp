// OOM302's estimate: what last step's gradients, kept through the forward by a zero_grad after
// it, add to the step's peak, computed by hand; where the backward is the peak anyway, the loss
// could decide it, or a size is unknown, no estimate.
#include <gtest/gtest.h>

#include <string>

#include "estimates_util.h"

using namespace estimates_test;

namespace {

/// `pairs` × (Linear(512, 512), ReLU), then Linear(512, `head`), on `rows` float32 rows; a
/// training loop whose zero_grad runs after the forward.
std::string deepNet(int pairs, int head, int rows, const std::string& before = "", const std::string& input = "") {
  std::string layers;
  for (int i = 0; i < pairs; ++i) layers += "    nn.Linear(512, 512), nn.ReLU(),\n";
  return std::string(kHead) + "model = nn.Sequential(\n" + layers + "    nn.Linear(512, " + std::to_string(head) + "),\n)\n" +
         "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n" +
         (input.empty() ? "x = torch.randn(" + std::to_string(rows) + ", 512)\n" : input) + before +
         "for step in range(10):\n"
         "    loss = model(x).pow(2).mean()\n"
         "    opt.zero_grad()\n"
         "    loss.backward()\n"
         "    opt.step()\n";
}

constexpr double kA = 1024.0 * 512 * 4;        // one (1024, 512) activation
constexpr double kW = (512.0 * 512 + 512) * 4;  // one Linear(512, 512)'s parameters

}  // namespace

TEST(EstimatesZeroGrad, LastStepsGradientsAddWhatTheBackwardDoesNotAlreadyReach) {
  // By hand, 8 pairs and a head of 8 on 1024 rows: G = 8·kW + wh. The forward peaks at the last
  // ReLU, 9·kA (seven saved ReLU outputs, the last Linear's output and its ReLU's), and ends at
  // 8·kA + o. The backward rises highest at the last 512-wide Linear: the gradient it receives,
  // the one it makes for its input, its weights' gradient, and the ReLU's saved output and
  // received gradient that are not yet counted free: 3·kA + kW + wh above the end. What the
  // gradients add: (9·kA + G) - (8·kA + o + 3·kA + kW + wh) = 7·kW - 2·kA - o.
  const double o = 1024.0 * 8 * 4;
  oomlint::FileResult r = check(deepNet(8, 8, 1024));
  const oomlint::Finding* f = findingWith(r, "OOM302");
  ASSERT_NE(nullptr, f);
  ASSERT_TRUE(f->estimated.present) << f->message;
  EXPECT_DOUBLE_EQ(7 * kW - 2 * kA - o, f->estimated.bytes);
  EXPECT_EQ("peak", f->estimated.measure);
  EXPECT_NE(std::string::npos, f->message.find("(estimated +3.0 MiB at the peak)")) << f->message;
  EXPECT_NE(std::string::npos, f->estimated.formula.find("max(forward peak + G, backward peak)")) << f->estimated.formula;
}

TEST(EstimatesZeroGrad, NoEstimateWhereTheBackwardOrTheLossDecidesThePeak) {
  const std::string cases[] = {
      // Four pairs: G = 4·kW + wh is less than what the backward rises above the forward's peak.
      deepNet(4, 8, 1024),
      // A head as wide as the layers: the loss's own tensors, like the output, could move the
      // estimate by more than a tenth (by hand 7·kW - 3·kA with the walk alone, 7·kW - kA with them).
      deepNet(8, 512, 1024),
      // 128 rows: activations below 2·P, where the optimizer's and the backward's transients can
      // set the peak instead.
      deepNet(8, 8, 128),
  };
  for (const std::string& src : cases) {
    oomlint::FileResult r = check(src);
    const oomlint::Finding* f = findingWith(r, "OOM302");
    ASSERT_NE(nullptr, f) << src;
    EXPECT_FALSE(f->estimated.present) << src << "\n" << f->estimated.summary();
  }
}

TEST(EstimatesZeroGrad, NoEstimateWithoutAModelledBackward) {
  const std::string cases[] = {
      // Evaluation mode: nothing this walk models (dropout, norms) is the training backward.
      deepNet(8, 8, 1024, "model.eval()\n"),
      // The input's rows are not stated.
      deepNet(8, 8, 0, "", "x = next(iter(loader))\n"),
  };
  for (const std::string& src : cases) {
    oomlint::FileResult r = check(src);
    const oomlint::Finding* f = findingWith(r, "OOM302");
    ASSERT_NE(nullptr, f) << src;
    EXPECT_FALSE(f->estimated.present) << src << "\n" << f->estimated.summary();
  }
  // A checkpointed network runs its segments' forwards again in backward: not modelled. The same
  // blocks without the checkpoint are estimated.
  auto blocks = [](const std::string& forward) {
    return std::string(kHead) + "from torch.utils.checkpoint import checkpoint\n\n" +
           "class Block(nn.Module):\n"
           "    def __init__(self):\n"
           "        super().__init__()\n"
           "        self.fc = nn.Linear(512, 512)\n"
           "        self.act = nn.ReLU()\n"
           "    def body(self, x):\n"
           "        return self.act(self.fc(x))\n"
           "    def forward(self, x):\n"
           "        return " + forward + "\n\n" +
           "model = nn.Sequential(Block(), Block(), Block(), Block(), Block(), Block(), Block(), Block(), nn.Linear(512, 8))\n"
           "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
           "x = torch.randn(1024, 512)\n"
           "for step in range(10):\n"
           "    loss = model(x).pow(2).mean()\n"
           "    opt.zero_grad()\n"
           "    loss.backward()\n"
           "    opt.step()\n";
  };
  EXPECT_TRUE(estimateOf(blocks("self.act(self.fc(x))"), "OOM302").present);
  EXPECT_FALSE(estimateOf(blocks("checkpoint(self.body, x, use_reentrant=False)"), "OOM302").present);
}
