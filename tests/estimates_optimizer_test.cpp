// OOM305's estimate: the state an optimizer that builds it eagerly (Adagrad) keeps for frozen
// parameters, computed by hand; where which parameters are frozen is not known, no estimate.
#include <gtest/gtest.h>

#include <string>

#include "estimates_util.h"

using namespace estimates_test;

namespace {

const char* const kClassifier =
    "class Classifier(nn.Module):\n"
    "    def __init__(self, width=1024):\n"
    "        super().__init__()\n"
    "        self.backbone = nn.Sequential(nn.Linear(width, 4 * width), nn.ReLU(), nn.Linear(4 * width, width))\n"
    "        self.head = nn.Linear(width, 10)\n\n"
    "    def forward(self, x):\n"
    "        return self.head(self.backbone(x))\n\n\n";

std::string with(const std::string& model, const std::string& freeze, const std::string& optimizer) {
  return std::string(kHead) + kClassifier + "def build():\n    model = " + model + "\n" + freeze +
         "    return torch.optim." + optimizer + "(model.parameters(), lr=1e-2)\n";
}

const char* const kLoopFreeze = "    for p in model.backbone.parameters():\n        p.requires_grad = False\n";

}  // namespace

TEST(Estimates, AdagradKeepsItsStateForEveryFrozenParameterItIsGiven) {
  // By hand: the backbone's parameters, 1024·4096 + 4096 + 4096·1024 + 1024, four bytes each.
  const double backbone = (1024.0 * 4096 + 4096 + 4096.0 * 1024 + 1024) * 4;
  oomlint::FileResult r = check(with("Classifier().cuda()", kLoopFreeze, "Adagrad"));
  const oomlint::Finding* f = findingWith(r, "OOM305");
  ASSERT_NE(nullptr, f);
  ASSERT_TRUE(f->estimated.present);
  EXPECT_DOUBLE_EQ(backbone, f->estimated.bytes);
  EXPECT_EQ("retained", f->estimated.measure);
  EXPECT_EQ("OOM305-adagrad", f->probe) << "--verify measures it with Adagrad, not the probe's Adam";
  EXPECT_NE(std::string::npos, f->message.find("Adagrad allocates its state for every parameter")) << f->message;
  // Frozen with one call on the module, in bfloat16: the same parameters, two bytes each.
  EXPECT_DOUBLE_EQ(backbone / 2, estimateOf(with("Classifier().cuda().bfloat16()", "    model.backbone.requires_grad_(False)\n", "Adagrad"),
                                            "OOM305").bytes);
  // Everything frozen: every parameter, the head's too.
  EXPECT_DOUBLE_EQ(backbone + (1024.0 * 10 + 10) * 4,
                   estimateOf(with("Classifier()", "    model.requires_grad_(False)\n", "Adagrad"), "OOM305").bytes);
}

TEST(Estimates, FrozenParametersCostNothingWithOptimizersThatBuildStateInStep) {
  for (const char* optimizer : {"Adam", "AdamW", "SGD", "RMSprop"}) {
    oomlint::FileResult r = check(with("Classifier()", kLoopFreeze, optimizer));
    const oomlint::Finding* f = findingWith(r, "OOM305");
    ASSERT_NE(nullptr, f) << optimizer;
    EXPECT_FALSE(f->estimated.present) << optimizer << ": " << f->estimated.summary();
    EXPECT_TRUE(f->probe.empty()) << optimizer;
    EXPECT_NE(std::string::npos, f->message.find("~0 bytes")) << f->message;
  }
}

TEST(Estimates, AdagradOverPartlyKnownFreezesHasNoEstimate) {
  const std::string cases[] = {
      // Which parameters the name filter freezes is not known.
      "    for name, p in model.named_parameters():\n        if name.startswith('backbone'):\n            p.requires_grad = False\n",
      // Frozen whole, then the head unfrozen: frozen is everything but the head, not sized here.
      "    model.requires_grad_(False)\n    model.head.requires_grad_(True)\n",
      // One tensor frozen.
      "    model.head.weight.requires_grad = False\n",
  };
  for (const std::string& freeze : cases) {
    oomlint::FileResult r = check(with("Classifier()", freeze, "Adagrad"));
    const oomlint::Finding* f = findingWith(r, "OOM305");
    ASSERT_NE(nullptr, f) << freeze;
    EXPECT_FALSE(f->estimated.present) << freeze << ": " << f->estimated.summary();
    EXPECT_EQ("OOM305-adagrad", f->probe);
  }
  // A model this file does not define: its backbone's size is unknown.
  oomlint::FileResult r = check(with("torchvision.models.resnet18()", kLoopFreeze, "Adagrad"));
  const oomlint::Finding* f = findingWith(r, "OOM305");
  ASSERT_NE(nullptr, f);
  EXPECT_FALSE(f->estimated.present) << f->estimated.summary();
}

TEST(Oom305, AnOptimizerOverAFullyFrozenModelGetsNoFilterFix) {
  // `filter(lambda p: p.requires_grad, ...)` would hand the optimizer an empty list, which it refuses.
  oomlint::FileResult r = check(with("Classifier()", "    model.requires_grad_(False)\n", "Adam"));
  const oomlint::Finding* f = findingWith(r, "OOM305");
  ASSERT_NE(nullptr, f);
  EXPECT_EQ(oomlint::Applicability::DisplayOnly, f->fix.applicability);
  EXPECT_TRUE(f->fix.edits.empty());
  // Part of it unfrozen again before the optimizer: the filter keeps the head, a safe fix.
  r = check(with("Classifier()", "    model.requires_grad_(False)\n    model.head.requires_grad_(True)\n", "Adam"));
  f = findingWith(r, "OOM305");
  ASSERT_NE(nullptr, f);
  EXPECT_EQ(oomlint::Applicability::Safe, f->fix.applicability);
  EXPECT_FALSE(f->fix.edits.empty());
}
