// Unit tests of the Python front end's lowering into the program model.
#include <gtest/gtest.h>

#include "python/frontend.h"

using namespace oomlint;

namespace {

NodeId firstCall(const Module& m, std::string_view text) {
  for (NodeId e = 0; e < m.exprs.size(); ++e)
    if (m.expr(e).kind == ExprKind::Call && m.textOf(e) == text) return e;
  return kNone;
}

}  // namespace

TEST(Model, ResolvesImportAliasesToCanonicalNames) {
  auto m = python::parse("t.py",
                         "import torch as t\n"
                         "import torch.nn.functional as F\n"
                         "from torch import no_grad\n"
                         "from torch.utils.checkpoint import checkpoint as ckpt\n"
                         "from torch.cuda import amp\n"
                         "import torch.nn\n"
                         "t.matmul(a, b)\nF.softmax(x, -1)\nno_grad()\nckpt(f, x)\namp.autocast()\ntorch.nn.Linear(2, 3)\n");
  EXPECT_TRUE(m->importsTorch);
  EXPECT_EQ("torch.matmul", m->canonical(firstCall(*m, "t.matmul(a, b)")));
  EXPECT_EQ("torch.nn.functional.softmax", m->canonical(firstCall(*m, "F.softmax(x, -1)")));
  EXPECT_EQ("torch.no_grad", m->canonical(firstCall(*m, "no_grad()")));
  EXPECT_EQ("torch.utils.checkpoint.checkpoint", m->canonical(firstCall(*m, "ckpt(f, x)")));
  EXPECT_EQ("torch.cuda.amp.autocast", m->canonical(firstCall(*m, "amp.autocast()")));
  EXPECT_EQ("torch.nn.Linear", m->canonical(firstCall(*m, "torch.nn.Linear(2, 3)")));
}

TEST(Model, UnimportedNamesStayUnresolved) {
  auto m = python::parse("t.py", "model(x)\nnp.mean(x)\n");
  EXPECT_FALSE(m->importsTorch);
  EXPECT_EQ("", m->canonical(firstCall(*m, "model(x)")));
  EXPECT_EQ("", m->canonical(firstCall(*m, "np.mean(x)")));
}

TEST(Model, LowersStatementsFunctionsAndClasses) {
  auto m = python::parse("t.py",
                         "class Net(nn.Module):\n"
                         "    def forward(self, x, *args, y=1, **kw):\n"
                         "        for i, b in enumerate(xs):\n"
                         "            total += b\n"
                         "        while c:\n"
                         "            pass\n"
                         "        with torch.no_grad(), foo() as f:\n"
                         "            a = b = c\n"
                         "        try:\n"
                         "            del a\n"
                         "        except (ValueError, KeyError) as e:\n"
                         "            raise\n"
                         "        finally:\n"
                         "            return x\n");
  ASSERT_EQ(1u, m->classes.size());
  EXPECT_EQ("Net", m->classes[0].name);
  ASSERT_EQ(2u, m->functions.size());
  const Function& fwd = m->functions[1];
  EXPECT_EQ("forward", fwd.name);
  EXPECT_EQ(0, fwd.cls);
  ASSERT_EQ(5u, fwd.paramCount);
  EXPECT_EQ("self", m->params[fwd.firstParam].name);
  EXPECT_EQ("args", m->params[fwd.firstParam + 2].name);
  EXPECT_EQ("kw", m->params[fwd.firstParam + 4].name);
  int fors = 0, whiles = 0, withs = 0, tries = 0, augs = 0, assigns = 0;
  for (const Stmt& s : m->stmts) {
    fors += s.kind == StmtKind::For;
    whiles += s.kind == StmtKind::While;
    withs += s.kind == StmtKind::With;
    tries += s.kind == StmtKind::Try;
    augs += s.kind == StmtKind::AugAssign;
    if (s.kind == StmtKind::Assign) {
      ++assigns;
      EXPECT_EQ(2u, s.targets.count) << "chained assignment keeps both targets";
    }
    if (s.kind == StmtKind::With) EXPECT_EQ(2u, s.targets.count);
    if (s.kind == StmtKind::Try) {
      EXPECT_EQ(1u, s.handlerCount);
      EXPECT_EQ("e", m->handlers[s.firstHandler].name);
      EXPECT_EQ(1u, s.finalbody.count);
    }
  }
  EXPECT_EQ(1, fors);
  EXPECT_EQ(1, whiles);
  EXPECT_EQ(1, withs);
  EXPECT_EQ(1, tries);
  EXPECT_EQ(1, augs);
  EXPECT_EQ(1, assigns);
}

TEST(Model, ElifChainsBecomeNestedIfs) {
  auto m = python::parse("t.py", "if a:\n    x()\nelif b:\n    y()\nelse:\n    z()\n");
  ASSERT_GE(m->stmts.size(), 2u);
  const Stmt& top = m->stmt(0);
  ASSERT_EQ(StmtKind::If, top.kind);
  ASSERT_EQ(1u, top.orelse.count);
  const Stmt& elif = m->stmt(m->lists[top.orelse.first]);
  EXPECT_EQ(StmtKind::If, elif.kind);
  EXPECT_EQ(1u, elif.orelse.count);
}

TEST(Model, CallArgumentsKeepKeywordsAndSplats) {
  auto m = python::parse("t.py", "f(a, b=1, *rest, **kw)\n");
  NodeId call = firstCall(*m, "f(a, b=1, *rest, **kw)");
  ASSERT_NE(kNone, call);
  const Expr& c = m->expr(call);
  ASSERT_EQ(4u, c.argCount);
  EXPECT_EQ("", m->args[c.firstArg].keyword);
  EXPECT_EQ("b", m->args[c.firstArg + 1].keyword);
  EXPECT_EQ("*", m->args[c.firstArg + 2].keyword);
  EXPECT_EQ("**", m->args[c.firstArg + 3].keyword);
  EXPECT_NE(kNone, keywordArg(*m, call, "b"));
  EXPECT_EQ(kNone, keywordArg(*m, call, "c"));
}

TEST(Model, ASubscriptWithSeveralIndicesKeepsThemAllAsATuple) {
  auto m = python::parse("t.py", "a = x[0]\nb = x[:, -1]\nc = x[i, 2:3, j]\nd = x[(0, 1)]\n");
  auto subscriptOf = [&](size_t stmt) { return m->expr(m->stmts[stmt].value); };
  // One index: the index itself.
  EXPECT_EQ(ExprKind::Number, m->expr(subscriptOf(0).rhs).kind);
  // Several: a tuple of every one, spanning them, as `__getitem__` receives them.
  const Expr& two = m->expr(subscriptOf(1).rhs);
  ASSERT_EQ(ExprKind::Container, two.kind);
  EXPECT_EQ(shape::kTuple, two.shape);
  ASSERT_EQ(2u, two.argCount);
  EXPECT_EQ(":, -1", m->textOf(subscriptOf(1).rhs));
  EXPECT_EQ("-1", m->textOf(m->args[two.firstArg + 1].value));
  const Expr& three = m->expr(subscriptOf(2).rhs);
  ASSERT_EQ(3u, three.argCount);
  // The last index is lowered too: `j` is a name read there.
  const Expr& j = m->expr(m->args[three.firstArg + 2].value);
  EXPECT_EQ(ExprKind::Name, j.kind);
  EXPECT_EQ("j", j.text);
  // A parenthesised tuple is one index, which is a tuple already.
  EXPECT_EQ(ExprKind::Container, m->expr(subscriptOf(3).rhs).kind);
  EXPECT_EQ(2u, m->expr(subscriptOf(3).rhs).argCount);
}

TEST(Model, SyntaxErrorIsRecordedWithItsLocation) {
  auto m = python::parse("t.py", "import torch\ndef f(:\n    pass\nx = 1\n");
  ASSERT_FALSE(m->syntaxIssues.empty());
  EXPECT_EQ(2u, m->syntaxIssues[0].span.line);
}

TEST(Model, DeepNestingIsCappedWithoutRecursionOverflow) {
  // Parentheses are unwrapped iteratively; lists recurse and are capped.
  auto parens = python::parse("t.py", "x = " + std::string(10000, '(') + "1" + std::string(10000, ')') + "\n");
  EXPECT_EQ(1u, parens->stmts.size());
  std::string src = "x = " + std::string(10000, '[') + "1" + std::string(10000, ']') + "\n";
  auto m = python::parse("t.py", src);
  EXPECT_TRUE(m->truncatedDepth);
  std::string calls = "x = " ;
  for (int i = 0; i < 5000; ++i) calls += "f(";
  calls += std::string(5000, ')') + "\n";
  auto m2 = python::parse("t.py", calls);
  EXPECT_TRUE(m2->truncatedDepth);
  // tree-sitter-python gives up on blocks nested past ~128 levels: a syntax issue, no crash.
  std::string blocks;
  for (int i = 0; i < 3000; ++i) blocks += std::string(static_cast<size_t>(i), ' ') + "if x:\n";
  blocks += std::string(3000, ' ') + "pass\n";
  auto m3 = python::parse("t.py", blocks);
  EXPECT_TRUE(m3->truncatedDepth || !m3->syntaxIssues.empty());
}

TEST(Model, LineTextAndOffsets) {
  auto m = python::parse("t.py", "a = 1\r\nb = 2\n");
  EXPECT_EQ("a = 1", m->lineText(1));
  EXPECT_EQ("b = 2", m->lineText(2));
  EXPECT_EQ(2u, m->lineOf(7));
}
