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

// ------------------------------------------------------------------ facts from evidence

namespace {

NodeId callWithText(const Module& m, std::string_view text) { return exprWithText(m, text, ExprKind::Call); }

/// History of the first argument of the call `use(...)` that quotes `name`.
Tri historyOfUse(const Facts& f, const Module& m, std::string_view use, std::string_view name) {
  NodeId call = callWithText(m, use);
  for (const Arg& a : argsOf(m, m.expr(call)))
    if (m.textOf(a.value) == name) return f.value(a.value).history;
  return Tri::Unknown;
}

}  // namespace

TEST(Facts, KindsComeFromConstructorsUseAndNamesLast) {
  auto m = python::parse("t.py",
                         "import torch\n"
                         "import torch.nn as nn\n"
                         "from transformers import AutoTokenizer, AutoModel\n"
                         "from torch.optim.lr_scheduler import StepLR\n"
                         "class Net(nn.Module):\n"
                         "    def forward(self, x):\n"
                         "        return x\n"
                         "def f(opt, loader, ToyModel):\n"
                         "    tokenizer = AutoTokenizer.from_pretrained('bert')\n"
                         "    encoder = AutoModel.from_pretrained('bert')\n"
                         "    g = Net()\n"
                         "    sched = StepLR(opt, 1)\n"
                         "    blocks = nn.ModuleList([Net(), Net()])\n"
                         "    anything.eval()\n"
                         "    model = 'resnet50'\n"
                         "    tokenizer(['a'])\n"
                         "    encoder(x)\n"
                         "    g(x)\n"
                         "    blocks[0](x)\n"
                         "    anything(x)\n"
                         "    Net()(x)\n"
                         "    sched.step()\n"
                         "    opt.step()\n"
                         "    model(x)\n");
  Facts f(*m);
  EXPECT_FALSE(f.isForwardCall(callWithText(*m, "tokenizer(['a'])"))) << "a tokenizer is not a module";
  EXPECT_TRUE(f.isForwardCall(callWithText(*m, "encoder(x)"))) << "from_pretrained of a model class";
  EXPECT_TRUE(f.isForwardCall(callWithText(*m, "g(x)"))) << "a module class of this file, whatever the name";
  EXPECT_TRUE(f.isForwardCall(callWithText(*m, "blocks[0](x)"))) << "items of a ModuleList";
  EXPECT_TRUE(f.isForwardCall(callWithText(*m, "anything(x)"))) << "`.eval()` is asked only of modules";
  EXPECT_FALSE(f.isForwardCall(callWithText(*m, "Net()"))) << "a constructor call is not a forward";
  EXPECT_FALSE(f.isOptimizerStep(callWithText(*m, "sched.step()"))) << "an LR scheduler steps no optimizer";
  EXPECT_TRUE(f.isOptimizerStep(callWithText(*m, "opt.step()"))) << "named for an optimizer (weakest evidence)";
  EXPECT_FALSE(f.isForwardCall(callWithText(*m, "model(x)"))) << "bound to a string: evidence beats the name";
  EXPECT_EQ(Evidence::Named, f.kindEvidence(receiverOf(*m, callWithText(*m, "opt.step()"))));
  EXPECT_EQ(Evidence::Constructed, f.kindEvidence(receiverOf(*m, callWithText(*m, "sched.step()"))));
}

TEST(Facts, HistoryFromBackwardReachesWhatItRunsOn) {
  auto m = python::parse("t.py",
                         "import torch\n"
                         "from lib import compute, step\n"
                         "def f(model, batch, opt):\n"
                         "    loss = compute(model, batch)\n"
                         "    loss.backward()\n"
                         "    a, b = step(model, batch)\n"
                         "    a.backward()\n"
                         "    out = run(batch)\n"
                         "    out['loss'].backward()\n"
                         "    c = other(batch)\n"
                         "    use(loss, b, out, c, a)\n");
  Facts f(*m);
  EXPECT_EQ(Tri::Yes, historyOfUse(f, *m, "use(loss, b, out, c, a)", "loss")) << "backward runs on it";
  EXPECT_EQ(Tri::Unknown, historyOfUse(f, *m, "use(loss, b, out, c, a)", "b"))
      << "a sibling of the backward's subject in the tuple is not proven (DPO losses return detached rewards beside the loss)";
  EXPECT_EQ(Tri::Yes, historyOfUse(f, *m, "use(loss, b, out, c, a)", "a")) << "the tuple element the backward runs on";
  EXPECT_EQ(Tri::Yes, historyOfUse(f, *m, "use(loss, b, out, c, a)", "out")) << "the dict the subject was taken from";
  EXPECT_EQ(Tri::Unknown, historyOfUse(f, *m, "use(loss, b, out, c, a)", "c")) << "no evidence";
}

TEST(Facts, HelpersPassOnWhatTheirArgumentsCarry) {
  auto m = python::parse("t.py",
                         "import torch\n"
                         "def scaled(loss, k):\n"
                         "    return loss / k\n"
                         "def number(v):\n"
                         "    if isinstance(v, torch.Tensor):\n"
                         "        return v.item()\n"
                         "    return v\n"
                         "def backprop(opt, loss):\n"
                         "    if loss is None:\n"
                         "        return 0\n"
                         "    loss.backward()\n"
                         "    opt.step()\n"
                         "def g(model, x, opt, crit):\n"
                         "    out = model(x)\n"
                         "    a = scaled(out.sum(), 2)\n"
                         "    b = number(out.sum())\n"
                         "    c = scaled(3.0, 2)\n"
                         "    loss = crit(out, x)\n"
                         "    backprop(opt, loss)\n"
                         "    use(a, b, c, loss)\n");
  Facts f(*m);
  uint32_t scaled = 0, number = 0, backprop = 0;
  for (uint32_t i = 0; i < m->functions.size(); ++i) {
    if (m->functions[i].name == "scaled") scaled = i;
    if (m->functions[i].name == "number") number = i;
    if (m->functions[i].name == "backprop") backprop = i;
  }
  EXPECT_EQ(3u, f.summary(scaled).returns.params) << "`loss / k`: either operand's history reaches the result";
  EXPECT_EQ(0u, f.summary(number).returns.params) << "one path strips the argument's history";
  EXPECT_EQ(2u, f.summary(backprop).backwardParams) << "the backward runs on parameter 1";
  EXPECT_EQ(Tri::Yes, historyOfUse(f, *m, "use(a, b, c, loss)", "a")) << "the forward's history, through the helper";
  EXPECT_NE(Tri::Yes, historyOfUse(f, *m, "use(a, b, c, loss)", "b"));
  EXPECT_NE(Tri::Yes, historyOfUse(f, *m, "use(a, b, c, loss)", "c"));
  EXPECT_EQ(Tri::Yes, historyOfUse(f, *m, "use(a, b, c, loss)", "loss")) << "the helper runs a backward on it";
}

TEST(Facts, SummariesAnswerForFunctionsOfTheFile) {
  auto m = python::parse("t.py",
                         "import torch\n"
                         "class Meter:\n"
                         "    def update(self, v, n=1):\n"
                         "        self.sum += v * n\n"
                         "class Log:\n"
                         "    def add(self, v):\n"
                         "        self.items.append(v.item())\n"
                         "def helper(model, x, criterion):\n"
                         "    out = model(x)\n"
                         "    return criterion(out, x), out.argmax(1)\n"
                         "def step(model, x, opt):\n"
                         "    opt.zero_grad()\n"
                         "    model(x).sum().backward()\n"
                         "    opt.step()\n"
                         "def g(model, x, criterion, opt):\n"
                         "    loss, pred = helper(model, x, criterion)\n"
                         "    step(model, x, opt)\n"
                         "    use(loss, pred)\n");
  Facts f(*m);
  uint32_t update = 0, add = 0, step = 0, helper = 0;
  for (uint32_t i = 0; i < m->functions.size(); ++i) {
    if (m->functions[i].name == "update") update = i;
    if (m->functions[i].name == "add") add = i;
    if (m->functions[i].name == "step") step = i;
    if (m->functions[i].name == "helper") helper = i;
  }
  EXPECT_EQ(2u, f.summary(update).accumulatesParam) << "parameter 1 (`v`) is summed into self";
  EXPECT_EQ(0u, f.summary(add).storesParam) << "`.item()` leaves the tensor";
  EXPECT_TRUE(f.isAccumulatorClass(m->functions[update].cls));
  EXPECT_EQ(2u, f.summary(helper).returnElems.size());
  std::vector<uint8_t> order = f.summary(step).eventOrder;
  ASSERT_EQ(4u, order.size());
  EXPECT_EQ(event::kZeroGrad, order[0]);
  EXPECT_EQ(event::kForward, order[1]);
  EXPECT_EQ(event::kBackward, order[2]);
  EXPECT_EQ(event::kStep, order[3]);
  EXPECT_EQ(Tri::Yes, historyOfUse(f, *m, "use(loss, pred)", "loss"));
  EXPECT_EQ(Tri::No, historyOfUse(f, *m, "use(loss, pred)", "pred")) << "argmax of the output: per element of the tuple";
}

TEST(Facts, GradModeScopesBeyondWithBlocks) {
  auto m = python::parse("t.py",
                         "import torch\n"
                         "from contextlib import ExitStack\n"
                         "def a(model, x, flag):\n"
                         "    with ExitStack() as s:\n"
                         "        s.enter_context(torch.no_grad())\n"
                         "        y1 = model(x)\n"
                         "    y2 = model(x)\n"
                         "    if flag:\n"
                         "        torch.set_grad_enabled(False)\n"
                         "    y3 = model(x)\n"
                         "class P:\n"
                         "    @torch.inference_mode()\n"
                         "    def predict(self, x):\n"
                         "        y4 = self.model(x)\n");
  Facts f(*m);
  EXPECT_EQ(GradMode::Disabled, f.gradMode(stmtWithText(*m, "y1 = model(x)"))) << "ExitStack.enter_context(no_grad())";
  EXPECT_EQ(GradMode::Enabled, f.gradMode(stmtWithText(*m, "y2 = model(x)"))) << "restored when the with ends";
  EXPECT_EQ(GradMode::Unknown, f.gradMode(stmtWithText(*m, "y3 = model(x)"))) << "disabled on one branch only";
  EXPECT_EQ(GradMode::Disabled, f.gradMode(stmtWithText(*m, "y4 = self.model(x)")));
}

TEST(Facts, EvalModeBelongsToItsReceiverAndFollowsArguments) {
  auto m = python::parse("t.py",
                         "import torch\n"
                         "def run(net, batch):\n"
                         "    return net(batch)\n"
                         "def f(student, teacher, batch):\n"
                         "    teacher.eval()\n"
                         "    s = student(batch)\n"
                         "    t = teacher(batch)\n"
                         "    r = run(teacher, batch)\n"
                         "    teacher.train()\n"
                         "    u = teacher(batch)\n");
  Facts f(*m);
  EXPECT_EQ(kNone, f.evalOpener(callWithText(*m, "student(batch)")));
  EXPECT_NE(kNone, f.evalOpener(callWithText(*m, "teacher(batch)")));
  EXPECT_NE(kNone, f.evalOpener(callWithText(*m, "net(batch)"))) << "the only caller passes a module in eval mode";
  NodeId last = kNone;
  for (NodeId e = 0; e < m->exprs.size(); ++e)
    if (m->expr(e).kind == ExprKind::Call && m->textOf(e) == "teacher(batch)") last = e;
  EXPECT_EQ(kNone, f.evalOpener(last)) << "after `.train()`";
}

TEST(Facts, PathsDominanceAndExclusiveBranches) {
  auto m = python::parse("t.py",
                         "def f(c):\n"
                         "    a = 1\n"
                         "    if c:\n"
                         "        b = 2\n"
                         "    else:\n"
                         "        d = 3\n"
                         "    e = 4\n");
  Facts f(*m);
  NodeId a = stmtWithText(*m, "a = 1"), b = stmtWithText(*m, "b = 2"), d = stmtWithText(*m, "d = 3"), e = stmtWithText(*m, "e = 4");
  EXPECT_TRUE(f.exclusive(b, d));
  EXPECT_FALSE(f.mayPrecede(b, d));
  EXPECT_TRUE(f.dominates(a, e));
  EXPECT_FALSE(f.dominates(b, e)) << "one branch only";
  EXPECT_TRUE(f.mayPrecede(b, e));
}

TEST(Facts, DevicesFlowThroughAssignmentsUnpackingAndComprehensions) {
  auto m = python::parse("t.py",
                         "import torch\n"
                         "device = torch.device('cuda')\n"
                         "cpu = torch.device('cpu')\n"
                         "def f(x, y, batch, model):\n"
                         "    x = x.to(device)\n"
                         "    a, b = x, y.cuda()\n"
                         "    inputs = {k: v.to(device) for k, v in batch.items()}\n"
                         "    z = y.to(cpu)\n"
                         "    use(x, a, b, inputs, z)\n");
  Facts f(*m);
  NodeId call = callWithText(*m, "use(x, a, b, inputs, z)");
  std::vector<Tri> dev;
  for (const Arg& arg : argsOf(*m, m->expr(call))) dev.push_back(f.value(arg.value).device);
  ASSERT_EQ(5u, dev.size());
  EXPECT_EQ(Tri::Yes, dev[0]);
  EXPECT_EQ(Tri::Yes, dev[1]);
  EXPECT_EQ(Tri::Yes, dev[2]);
  EXPECT_EQ(Tri::Yes, dev[3]) << "a dict comprehension of device tensors";
  EXPECT_EQ(Tri::Unknown, dev[4]) << "moved to a device the file names CPU";
}

TEST(Facts, FreezesLastWriteWinsAndVersionGates) {
  auto m = python::parse("t.py",
                         "import torch\n"
                         "def f(model, teacher):\n"
                         "    teacher.requires_grad_(False)\n"
                         "    for p in model.parameters():\n"
                         "        p.requires_grad = False\n"
                         "    model.head.requires_grad_(True)\n"
                         "    if torch.__version__ >= '2.3':\n"
                         "        s = torch.amp.GradScaler('cuda')\n"
                         "    else:\n"
                         "        s = torch.cuda.amp.GradScaler()\n"
                         "    teacher(x)\n");
  Facts f(*m);
  EXPECT_TRUE(f.isFrozenModule(m->expr(callWithText(*m, "teacher(x)")).lhs));
  EXPECT_TRUE(f.frozenBefore("model.backbone", UINT32_MAX)) << "a freeze of the whole model covers its parts";
  EXPECT_FALSE(f.frozenBefore("model.head", UINT32_MAX)) << "the later unfreeze wins";
  EXPECT_FALSE(f.frozenBefore("model", UINT32_MAX)) << "partly trainable again";
  EXPECT_TRUE(f.versionGated(stmtWithText(*m, "s = torch.cuda.amp.GradScaler()")));
}

TEST(Facts, NestedRunsOfStatementsAndEvents) {
  auto m = python::parse("t.py",
                         "def train(model, loader, opt, c):\n"
                         "    for x in loader:\n"
                         "        if c:\n"
                         "            y = model(x)\n"
                         "        else:\n"
                         "            y = 0\n"
                         "        y.backward()\n"
                         "        opt.step()\n"
                         "    for p in model.parameters():\n"
                         "        break\n"
                         "    done = 1\n");
  Facts f(*m);
  NodeId loop = stmtWithText(*m, "for x in loader:\n"
                                 "        if c:\n"
                                 "            y = model(x)\n"
                                 "        else:\n"
                                 "            y = 0\n"
                                 "        y.backward()\n"
                                 "        opt.step()");
  ASSERT_NE(loop, kNone);
  NodeId fw = stmtWithText(*m, "y = model(x)"), done = stmtWithText(*m, "done = 1");
  std::vector<NodeId> nested(f.statementsWithin(loop).begin(), f.statementsWithin(loop).end());
  ASSERT_EQ(nested.size(), 6u) << "the loop, the if, its two branches, backward and step";
  EXPECT_EQ(nested.front(), loop);
  for (NodeId s : nested) EXPECT_TRUE(f.within(s, loop));
  EXPECT_FALSE(f.within(done, loop));
  EXPECT_TRUE(f.within(fw, stmtWithText(*m, "if c:\n"
                                             "            y = model(x)\n"
                                             "        else:\n"
                                             "            y = 0")));
  size_t backward = 0, steps = 0;
  for (const StepEvent& e : f.eventsWithin(loop)) {
    EXPECT_TRUE(f.within(e.stmt, loop));
    if (e.kind == event::kBackward) ++backward;
    if (e.kind == event::kStep) ++steps;
  }
  EXPECT_EQ(backward, 1u);
  EXPECT_EQ(steps, 1u);
  EXPECT_TRUE(f.holdsTrainingLoop(1));
  EXPECT_FALSE(f.runsOnce(loop));
  EXPECT_TRUE(f.runsOnce(stmtWithText(*m, "for p in model.parameters():\n        break")));
}

TEST(Facts, DistributedWithoutDeviceIsAnsweredForTheFile) {
  auto launched = python::parse("t.py",
                                "import os, torch\n"
                                "import torch.distributed as dist\n"
                                "rank = int(os.environ['LOCAL_RANK'])\n"
                                "dist.init_process_group('nccl')\n");
  EXPECT_NE(Facts(*launched).distributedWithoutDevice(), kNone);
  auto bound = python::parse("t.py",
                             "import os, torch\n"
                             "import torch.distributed as dist\n"
                             "dist.init_process_group('nccl')\n"
                             "torch.cuda.set_device(int(os.environ['LOCAL_RANK']))\n");
  EXPECT_EQ(Facts(*bound).distributedWithoutDevice(), kNone);
  auto deviceId = python::parse("t.py",
                                "import torch\n"
                                "import torch.distributed as dist\n"
                                "dist.init_process_group('nccl', device_id=torch.device('cuda', 0))\n");
  EXPECT_EQ(Facts(*deviceId).distributedWithoutDevice(), kNone);
}
