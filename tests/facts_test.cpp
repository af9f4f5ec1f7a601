// Unit tests of the facts: grad mode, loop roles, provenance, lifetime.
#include <gtest/gtest.h>

#include "facts/facts.h"
#include "facts/names.h"
#include "python/frontend.h"

using namespace oomlint;

namespace {

NodeId exprWithText(const Module& m, std::string_view text, ExprKind kind) {
  for (NodeId e = 0; e < m.exprs.size(); ++e)
    if (m.expr(e).kind == kind && m.textOf(e) == text) return e;
  return kNone;
}

NodeId stmtWithText(const Module& m, std::string_view text) {
  for (NodeId s = 0; s < m.stmts.size(); ++s)
    if (m.textOf(m.stmt(s).span) == text) return s;
  return kNone;
}

}  // namespace

TEST(Facts, GradModeFromContextsDecoratorsAndCallers) {
  auto m = python::parse("t.py",
                         "import torch\n"
                         "def a(model, x):\n"
                         "    y1 = model(x)\n"
                         "    with torch.no_grad():\n"
                         "        y2 = model(x)\n"
                         "        with torch.enable_grad():\n"
                         "            y3 = model(x)\n"
                         "@torch.no_grad()\n"
                         "def b(model, x):\n"
                         "    y4 = model(x)\n"
                         "def c(model, x):\n"
                         "    y5 = model(x)\n"
                         "def d(model, x):\n"
                         "    with torch.inference_mode():\n"
                         "        c(model, x)\n"
                         "def e(model, x):\n"
                         "    def inner():\n"
                         "        y6 = model(x)\n"
                         "    with torch.set_grad_enabled(flag):\n"
                         "        y7 = model(x)\n");
  Facts f(*m);
  EXPECT_EQ(GradMode::Enabled, f.gradMode(stmtWithText(*m, "y1 = model(x)")));
  EXPECT_EQ(GradMode::Disabled, f.gradMode(stmtWithText(*m, "y2 = model(x)")));
  EXPECT_EQ(GradMode::Enabled, f.gradMode(stmtWithText(*m, "y3 = model(x)")));
  EXPECT_EQ(GradMode::Disabled, f.gradMode(stmtWithText(*m, "y4 = model(x)")));
  EXPECT_EQ(GradMode::Disabled, f.gradMode(stmtWithText(*m, "y5 = model(x)"))) << "only caller runs it under inference_mode";
  EXPECT_EQ(GradMode::Unknown, f.gradMode(stmtWithText(*m, "y6 = model(x)"))) << "nested function: caller unknown";
  EXPECT_EQ(GradMode::Unknown, f.gradMode(stmtWithText(*m, "y7 = model(x)")));
}

TEST(Facts, HistoryProvenanceAndStripping) {
  auto m = python::parse("t.py",
                         "import torch\n"
                         "def f(model, x, y, criterion):\n"
                         "    out = model(x)\n"
                         "    loss = criterion(out, y)\n"
                         "    a = loss.item()\n"
                         "    b = loss.detach()\n"
                         "    c = float(loss)\n"
                         "    d = loss * 2 + 1\n"
                         "    e = out.argmax(1)\n"
                         "    g = helper(out)\n"
                         "    h = out.mean()\n"
                         "    use(a, b, c, d, e, g, h, loss)\n");
  Facts f(*m);
  auto hist = [&](std::string_view name) {
    NodeId call = exprWithText(*m, "use(a, b, c, d, e, g, h, loss)", ExprKind::Call);
    for (const Arg& a : argsOf(*m, m->expr(call)))
      if (m->textOf(a.value) == name) return f.value(a.value).history;
    return Tri::Unknown;
  };
  EXPECT_EQ(Tri::Yes, hist("loss"));
  EXPECT_EQ(Tri::No, hist("a"));
  EXPECT_EQ(Tri::No, hist("b"));
  EXPECT_EQ(Tri::No, hist("c"));
  EXPECT_EQ(Tri::Yes, hist("d"));
  EXPECT_EQ(Tri::No, hist("e"));
  EXPECT_EQ(Tri::Unknown, hist("g")) << "unknown helper: stay unknown";
  EXPECT_EQ(Tri::Yes, hist("h"));
}

TEST(Facts, LoopRolesThroughLocalHelpers) {
  auto m = python::parse("t.py",
                         "import torch\n"
                         "class T:\n"
                         "    def step(self, b):\n"
                         "        self.loss(b).backward()\n"
                         "    def fit(self, loader):\n"
                         "        for b in loader:\n"
                         "            self.step(b)\n"
                         "def helper(opt):\n"
                         "    opt.step()\n"
                         "def run(opt, xs):\n"
                         "    for x in range(10):\n"
                         "        helper(opt)\n"
                         "    for x in xs:\n"
                         "        print(x)\n");
  Facts f(*m);
  uint8_t fitLoop = 0, runLoop = 0, plainLoop = 0;
  for (NodeId s = 0; s < m->stmts.size(); ++s) {
    if (m->stmt(s).kind != StmtKind::For) continue;
    std::string_view t = m->textOf(m->stmt(s).span);
    if (t.find("loader") != std::string_view::npos) fitLoop = f.loopRole(s);
    else if (t.find("range") != std::string_view::npos) runLoop = f.loopRole(s);
    else plainLoop = f.loopRole(s);
  }
  EXPECT_TRUE(fitLoop & loop_role::kTraining);
  EXPECT_TRUE(fitLoop & loop_role::kData);
  EXPECT_TRUE(runLoop & loop_role::kTraining);
  EXPECT_EQ(0, plainLoop);
}

TEST(Facts, LifetimeOfTargets) {
  auto m = python::parse("t.py",
                         "import torch\n"
                         "def f(loader, model):\n"
                         "    outer = []\n"
                         "    for x in loader:\n"
                         "        inner = []\n"
                         "        outer.append(x)\n"
                         "        inner.append(x)\n"
                         "        self.cache.append(x)\n");
  Facts f(*m);
  NodeId loop = kNone;
  for (NodeId s = 0; s < m->stmts.size(); ++s)
    if (m->stmt(s).kind == StmtKind::For) loop = s;
  auto recv = [&](std::string_view call) { return receiverOf(*m, exprWithText(*m, call, ExprKind::Call)); };
  EXPECT_TRUE(f.outlivesIteration(recv("outer.append(x)"), loop));
  EXPECT_FALSE(f.outlivesIteration(recv("inner.append(x)"), loop));
  EXPECT_TRUE(f.outlivesIteration(recv("self.cache.append(x)"), loop));
}

TEST(Facts, EvalContexts) {
  auto m = python::parse("t.py",
                         "import torch\n"
                         "def validate(model, loader):\n"
                         "    a = model(x)\n"
                         "def train(model, opt):\n"
                         "    model.eval()\n"
                         "    b = model(x)\n"
                         "    model.train()\n"
                         "    c = model(x)\n"
                         "    c.sum().backward()\n"
                         "    opt.step()\n");
  Facts f(*m);
  EXPECT_TRUE(f.inEvalContext(stmtWithText(*m, "a = model(x)")));
  EXPECT_TRUE(f.inEvalContext(stmtWithText(*m, "b = model(x)")));
  EXPECT_FALSE(f.inEvalContext(stmtWithText(*m, "c = model(x)")));
}

TEST(Names, Conventions) {
  EXPECT_TRUE(names::looksLikeModule("model"));
  EXPECT_TRUE(names::looksLikeModule("self.text_encoder"));
  EXPECT_TRUE(names::looksLikeModule("netD"));
  EXPECT_FALSE(names::looksLikeModule("model_name"));
  EXPECT_FALSE(names::looksLikeModule("optimizer"));
  EXPECT_TRUE(names::looksLikeOptimizer("optimizer"));
  EXPECT_TRUE(names::looksLikeOptimizer("opt_g"));
  EXPECT_FALSE(names::looksLikeOptimizer("lr_scheduler"));
  EXPECT_TRUE(names::looksLikeEvalFunction("evaluate"));
  EXPECT_TRUE(names::looksLikeEvalFunction("run_validation"));
  EXPECT_TRUE(names::looksLikeEvalFunction("test"));
  EXPECT_FALSE(names::looksLikeEvalFunction("test_forward_shape"));
  EXPECT_FALSE(names::looksLikeEvalFunction("validation_step"));
  EXPECT_FALSE(names::looksLikeEvalFunction("train"));
  EXPECT_TRUE(names::looksLikeLoader("val_loader"));
  EXPECT_TRUE(names::looksLikeLoader("self.train_dl"));
}
