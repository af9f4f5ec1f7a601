// Static cost estimates (rules/estimates.h over facts/sizes.h): each rule's formula on code that
// states its sizes, computed by hand; the examples' estimates are pinned; an unknown size means no
// estimate, in every format. What the H200 measured is in estimates_h200_test.cpp.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "estimates_util.h"
#include "test_util.h"

using nlohmann::json;
using namespace estimates_test;

TEST(Estimates, AFloat32LossOverSixteenBitLogitsCostsThreeFloat32CopiesAtItsBackward) {
  auto with = [](const std::string& logits, const std::string& loss) {
    return std::string(kHead) + "VOCAB = 1000\n" + logits +
           "target = torch.randint(0, VOCAB, (8, 16), device='cuda')\n"
           "with torch.autocast('cuda', dtype=torch.bfloat16):\n    loss = " + loss + "\nloss.backward()\n";
  };
  std::string half = "logits = torch.randn(8, 16, VOCAB, device='cuda', dtype=torch.bfloat16, requires_grad=True)\n";
  const double n = 8.0 * 16 * 1000;
  oomlint::EstimatedCost e = estimateOf(with(half, "F.cross_entropy(logits.float().view(-1, VOCAB), target.view(-1))"), "OOM404");
  ASSERT_TRUE(e.present);
  EXPECT_EQ("peak", e.measure);
  EXPECT_DOUBLE_EQ(3 * n * 4, e.bytes);
  // The loss itself is the finding when autocast upcasts it.
  EXPECT_DOUBLE_EQ(3 * n * 4, estimateOf(with(half, "F.cross_entropy(logits.view(-1, VOCAB), target.view(-1))"), "OOM404").bytes);
  // float32 logits, an unknown shape, a `.float()` that feeds no loss: no estimate.
  const std::pair<std::string, std::string> none[] = {
      {"logits = torch.randn(8, 16, VOCAB, device='cuda', requires_grad=True)\n",
       "F.cross_entropy(logits.float().view(-1, VOCAB), target.view(-1))"},
      {"logits = model(x)\n", "F.cross_entropy(logits.float().view(-1, VOCAB), target.view(-1))"},
      {half, "(logits.float() ** 2).mean()"},
  };
  for (const auto& [logits, loss] : none) {
    oomlint::FileResult r = check(with(logits, loss));
    const oomlint::Finding* f = findingWith(r, "OOM404");
    ASSERT_NE(nullptr, f) << loss;
    EXPECT_FALSE(f->estimated.present) << loss << ": " << f->estimated.summary();
  }
}

TEST(Estimates, SummedLossesCountTheMicroBatchesTheLoopStates) {
  std::string model =
      "model = nn.Sequential(nn.Linear(64, 64), nn.ReLU()).cuda()\n"
      "target = torch.zeros(4096, 64, device='cuda')\n";
  auto with = [&](const std::string& loop) {
    return std::string(kHead) + "from torch.utils.data import DataLoader, TensorDataset\n" + model + loop +
           "        total = total + F.mse_loss(model(x.cuda()), target)\n    total.backward()\n";
  };
  // By hand: a micro-batch's graph is ReLU's output and the loss's input, 2·4096·64·4 bytes; P is
  // (64·64 + 64)·4. Three of four graphs, less P.
  const double graph = 2.0 * 4096 * 64 * 4, p = (64.0 * 64 + 64) * 4;
  std::string loader = "data = DataLoader(TensorDataset(torch.randn(16384, 64), torch.arange(16384)), batch_size=4096)\n"
                       "for step in range(3):\n    total = 0\n    for x, _ in data:\n";
  oomlint::EstimatedCost e = estimateOf(with(loader), "OOM104");
  ASSERT_TRUE(e.present);
  EXPECT_EQ("peak", e.measure);
  EXPECT_DOUBLE_EQ(3 * graph - p, e.bytes);
  EXPECT_NE(std::string::npos, e.formula.find("k = 4")) << e.formula;
  // A last, partial batch is one more micro-batch; drop_last leaves it out.
  std::string partial = "data = DataLoader(TensorDataset(torch.randn(14000, 64), torch.arange(14000)), batch_size=4096)\n"
                        "for step in range(3):\n    total = 0\n    for x, _ in data:\n";
  EXPECT_DOUBLE_EQ(3 * graph - p, estimateOf(with(partial), "OOM104").bytes);
  std::string dropped = "data = DataLoader(TensorDataset(torch.randn(14000, 64), torch.arange(14000)), batch_size=4096, drop_last=True)\n"
                        "for step in range(3):\n    total = 0\n    for x, _ in data:\n";
  EXPECT_DOUBLE_EQ(2 * graph - p, estimateOf(with(dropped), "OOM104").bytes);
  // Unknown micro-batch counts: no estimate.
  const char* unknown[] = {
      "data = DataLoader(TensorDataset(torch.randn(16384, 64), torch.arange(16384)), batch_size=4096, sampler=s)\n",
      "data = DataLoader(TensorDataset(torch.randn(16384, 64), torch.arange(16384)), batch_size=bs)\n",
      "data = DataLoader(TensorDataset(torch.randn(16384, 64), torch.arange(16384)), batch_size=4096, drop_last=flag)\n",
      "data = DataLoader(dataset, batch_size=4096)\n",
  };
  for (const char* ctor : unknown) {
    std::string src = with(std::string(ctor) + "for step in range(3):\n    total = 0\n    for x, _ in data:\n");
    oomlint::FileResult r = check(src);
    const oomlint::Finding* f = findingWith(r, "OOM104");
    ASSERT_NE(nullptr, f) << ctor;
    EXPECT_FALSE(f->estimated.present) << ctor << ": " << f->estimated.summary();
  }
}

TEST(Estimates, AttentionProbabilitiesAreEstimatedOnlyWhenNothingElseKeepsTheScores) {
  std::string head = std::string(kHead) +
                     "import math\n"
                     "q = torch.randn(2, 4, 128, 16, device='cuda', requires_grad=True)\n"
                     "k = torch.randn(2, 4, 96, 16, device='cuda', requires_grad=True)\n"
                     "v = torch.randn(2, 4, 96, 16, device='cuda', requires_grad=True)\n";
  auto with = [&](const std::string& body) { return head + body + "out.sum().backward()\n"; };
  // By hand: B·H·L·S float32 probabilities, L from q and S from k.
  const double probs = 2.0 * 4 * 128 * 96 * 4;
  const char* sized[] = {
      "scores = q @ k.transpose(-2, -1) / math.sqrt(16)\nout = torch.softmax(scores, dim=-1) @ v\n",
      "out = torch.matmul(F.softmax(torch.matmul(q, k.transpose(2, 3)) * 0.25, dim=-1), v)\n",
      "attn = (q @ k.mT).softmax(-1)\nout = attn @ v\n",
  };
  for (const char* body : sized) {
    oomlint::EstimatedCost e = estimateOf(with(body), "OOM401");
    ASSERT_TRUE(e.present) << body;
    EXPECT_DOUBLE_EQ(probs, e.bytes) << body;
  }
  const char* unknown[] = {
      // A dropout on the probabilities keeps its mask and output too.
      "attn = F.dropout(torch.softmax(q @ k.transpose(-2, -1), dim=-1), 0.1)\nout = attn @ v\n",
      // A tensor scale or a mask keeps more than the probabilities.
      "scores = (q @ k.transpose(-2, -1)) * temperature\nout = torch.softmax(scores, dim=-1) @ v\n",
      "scores = (q @ k.transpose(-2, -1)).masked_fill(mask, -1e9)\nout = torch.softmax(scores, dim=-1) @ v\n",
      // Transposing other axes, or keys of unknown shape.
      "scores = q @ k.transpose(1, 3)\nout = torch.softmax(scores, dim=-1) @ v\n",
      "scores = q @ key.transpose(-2, -1)\nout = torch.softmax(scores, dim=-1) @ v\n",
  };
  for (const char* body : unknown) {
    oomlint::FileResult r = check(with(body));
    const oomlint::Finding* f = findingWith(r, "OOM401");
    if (!f) continue;  // not attention to the rule either
    EXPECT_FALSE(f->estimated.present) << body << ": " << f->estimated.summary();
  }
  // All but the other-axes case are still OOM401 findings: silence is the estimate's, not the rule's.
  for (size_t i : {0u, 1u, 2u, 4u}) EXPECT_NE(nullptr, findingWith(check(with(unknown[i])), "OOM401")) << unknown[i];
}

TEST(Estimates, TheExamplesEstimatesArePinned) {
  // examples/sized_mlp.py states every size; the other examples take their model or data as
  // parameters, so none of their findings has an estimate.
  std::vector<std::string> got;
  for (const char* file : {"train.py", "grad_accum.py", "clean_train.py", "sized_mlp.py"}) {
    oomlint::FileResult r = oomlint::checkFile(kRoot + "/examples/" + file, oomlint::CheckOptions{});
    for (const oomlint::Finding& f : r.findings)
      if (f.estimated.present)
        got.push_back(std::string(file) + ":" + std::to_string(f.span.line) + " " + std::string(f.code) + " " +
                      std::to_string(static_cast<int64_t>(f.estimated.bytes)) + " " + f.estimated.measure);
  }
  // By hand: P = 512·2048+2048 + 2048·2048+2048 + 2048+1 = 5,249,025 float32 parameters;
  // batches of 4096 rows, in eval mode (dropout is the identity). The stored forward saves the
  // two ReLU outputs, 4096·2048·4 bytes each. Its peak with grad is at the second ReLU (first
  // ReLU's output kept, the second Linear's output, the second ReLU's: 96 MiB), under no_grad
  // two consecutive activations (64 MiB).
  std::vector<std::string> pinned = {
      "sized_mlp.py:36 OOM301 20996100 peak",
      "sized_mlp.py:45 OOM102 67108864 growth",
      "sized_mlp.py:45 OOM201 33554432 peak",
  };
  EXPECT_EQ(pinned, got);
  // The training loop's `epoch_loss += loss` is OOM101, but its backward frees the activations:
  // no estimate.
  oomlint::FileResult r = oomlint::checkFile(kRoot + "/examples/sized_mlp.py", oomlint::CheckOptions{});
  const oomlint::Finding* acc = findingWith(r, "OOM101");
  ASSERT_NE(nullptr, acc);
  EXPECT_FALSE(acc->estimated.present);
  EXPECT_EQ(std::string::npos, acc->message.find("estimated"));
}

TEST(Estimates, AModuleClassIsSizedFromItsConstructorArgumentsAndForwardChain) {
  std::string src = std::string(kHead) +
                    "class Net(nn.Module):\n"
                    "    def __init__(self, width, hidden=1024):\n"
                    "        super().__init__()\n"
                    "        self.fc1 = nn.Linear(width, hidden)\n"
                    "        self.fc2 = nn.Linear(hidden, width, bias=False)\n"
                    "    def forward(self, x):\n"
                    "        x = F.gelu(self.fc1(x))\n"
                    "        return torch.tanh(self.fc2(x))\n"
                    "model = Net(256).cuda().half()\n"
                    "x = torch.randn(8, 16, 256, device='cuda', dtype=torch.float16)\n"
                    "outs = []\n"
                    "model.eval()\n"
                    "for i in range(10):\n"
                    "    outs.append(model(x))\n";
  // 128 rows. Saved: fc1's output (GELU saves its input) 128·1024·2, GELU's output (fc2 saves
  // its input) 128·1024·2, tanh's output 128·256·2, which the stored output is.
  oomlint::EstimatedCost e = estimateOf(src, "OOM102");
  ASSERT_TRUE(e.present);
  EXPECT_DOUBLE_EQ(128.0 * 1024 * 2 * 2, e.bytes);
  EXPECT_NE(std::string::npos, e.basis.find("line 13"));
  oomlint::EstimatedCost g = estimateOf(src, "OOM201");
  ASSERT_TRUE(g.present);
  // With grad the peak is at tanh: fc1's and GELU's outputs kept (2·256 KiB), fc2's output
  // (tanh's input, 64 KiB) and tanh's (64 KiB); under no_grad fc1's + GELU's outputs (2·256 KiB).
  EXPECT_DOUBLE_EQ(128.0 * 256 * 2 * 2, g.bytes);
}

TEST(Estimates, AnEmbeddingLooksUpEveryIndexOfItsIntegerInput) {
  std::string loop =
      "outs = []\n"
      "model.eval()\n"
      "for i in range(10):\n"
      "    outs.append(model(tokens))\n";
  std::string ids = "tokens = torch.randint(0, 1000, (8, 32), device='cuda')\n";
  // By hand: 8·32 rows; the Linear saves the embedding's output (256·64), GELU the Linear's
  // (256·256), the last Linear GELU's output (256·256), all float32. The indices exist anyway.
  std::string sized = "model = nn.Sequential(nn.Embedding(1000, 64), nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 64)).cuda()\n";
  oomlint::EstimatedCost e = estimateOf(kHead + sized + ids + loop, "OOM102");
  ASSERT_TRUE(e.present);
  EXPECT_DOUBLE_EQ(256.0 * 64 * 4 + 2 * 256.0 * 256 * 4, e.bytes);
  // padding_idx changes nothing; keywords name the sizes too.
  EXPECT_DOUBLE_EQ(e.bytes, estimateOf(kHead + std::string("model = nn.Sequential(nn.Embedding(num_embeddings=1000, embedding_dim=64, "
                                                           "padding_idx=0), nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 64)).cuda()\n") +
                                           ids + loop,
                                       "OOM102")
                                .bytes);
  const std::pair<const char*, std::string> none[] = {
      {"float input to a lookup", sized + "tokens = torch.randn(8, 32, device='cuda')\n"},
      {"an embedding after a layer",
       "model = nn.Sequential(nn.Linear(64, 64), nn.Embedding(1000, 64)).cuda()\n" + ids},
      {"max_norm renormalises in place",
       "model = nn.Sequential(nn.Embedding(1000, 64, max_norm=1.0), nn.Linear(64, 64)).cuda()\n" + ids},
      {"a vocabulary from a config", "model = nn.Sequential(nn.Embedding(cfg.vocab, 64), nn.Linear(64, 64)).cuda()\n" + ids},
  };
  for (const auto& [what, setup] : none) {
    oomlint::FileResult r = check(kHead + setup + loop);
    const oomlint::Finding* f = findingWith(r, "OOM102");
    ASSERT_NE(nullptr, f) << what;
    EXPECT_FALSE(f->estimated.present) << what << ": " << f->estimated.summary();
  }
}

TEST(Estimates, AnUnknownSizeMeansNoEstimate) {
  std::string loop =
      "outs = []\n"
      "model.eval()\n"
      "for i in range(10):\n"
      "    outs.append(model(x))\n";
  std::string sized = "model = nn.Sequential(nn.Linear(64, 64), nn.GELU()).cuda()\n";
  std::string input = "x = torch.randn(4, 64, device='cuda')\n";
  // The positive twin of every case below.
  ASSERT_TRUE(estimateOf(kHead + sized + input + loop, "OOM102").present);
  const std::pair<const char*, std::string> cases[] = {
      {"a width from the command line",
       "import sys\nW = int(sys.argv[1])\nmodel = nn.Sequential(nn.Linear(W, 64), nn.ReLU()).cuda()\n" + input},
      {"a convolution over rows of features", "model = nn.Sequential(nn.Conv2d(3, 64, 3), nn.ReLU()).cuda()\n" + input},
      {"layers from a list", "layers = [nn.Linear(64, 64), nn.ReLU()]\nmodel = nn.Sequential(*layers).cuda()\n" + input},
      {"a batch size from a config", sized + "x = torch.randn(cfg.batch, 64, device='cuda')\n"},
      {"an input whose width does not chain", sized + "x = torch.randn(4, 32, device='cuda')\n"},
      {"two dtypes on the module's path", sized + "if fast:\n    model.half()\nelse:\n    model.double()\n" + input},
      {"a constant bound twice", "B = 4\nif big:\n    B = 64\n" + sized + "x = torch.randn(B, 64, device='cuda')\n"},
      {"a LayerNorm over another width", "model = nn.Sequential(nn.Linear(64, 64), nn.LayerNorm(32)).cuda()\n" + input},
      {"bf16 and f16 on the module's path", sized + "if fast:\n    model.half()\nelse:\n    model.bfloat16()\n" + input},
  };
  // The twins of the LayerNorm and dtype cases, sized.
  EXPECT_TRUE(estimateOf(kHead + std::string("model = nn.Sequential(nn.Linear(64, 64), nn.LayerNorm(64)).cuda()\n") + input + loop,
                         "OOM102").present);
  EXPECT_TRUE(estimateOf(kHead + sized + "if fast:\n    model.half()\nelse:\n    model.half()\n" + input + loop, "OOM102").present);
  for (const auto& [what, setup] : cases) {
    oomlint::FileResult r = check(kHead + setup + loop);
    const oomlint::Finding* f = findingWith(r, "OOM102");
    ASSERT_NE(nullptr, f) << what;
    EXPECT_FALSE(f->estimated.present) << what << ": " << f->estimated.summary();
    EXPECT_EQ(std::string::npos, f->message.find("estimated")) << what;
  }
  // A forward with control flow is not one chain: no network.
  std::string branchy = std::string(kHead) +
                        "class Net(nn.Module):\n"
                        "    def __init__(self):\n"
                        "        super().__init__()\n"
                        "        self.fc = nn.Linear(64, 64)\n"
                        "    def forward(self, x):\n"
                        "        if x.sum() > 0:\n"
                        "            x = self.fc(x)\n"
                        "        return self.fc(x)\n"
                        "model = Net().cuda()\n" +
                        input + loop;
  EXPECT_FALSE(estimateOf(branchy, "OOM102").present);
}

TEST(Estimates, ACarriedStateCostsWhatItsUpdateSavesEachIteration) {
  std::string setup =
      "cell = nn.Linear(128, 64).cuda()\n"
      "x = torch.randn(8, 64, device='cuda')\n"
      "h = torch.zeros(8, 64, device='cuda')\n";
  auto loopWith = [&](const std::string& update) {
    return std::string(kHead) + setup + "for step in range(10):\n    " + update + "\n    h.sum().backward(retain_graph=True)\n";
  };
  // By hand: the Linear saves the concatenation it is given (8·128 float32), tanh its output (8·64).
  oomlint::EstimatedCost e = estimateOf(loopWith("h = torch.tanh(cell(torch.cat([x, h], dim=1)))"), "OOM107");
  ASSERT_TRUE(e.present);
  EXPECT_EQ("growth", e.measure);
  EXPECT_DOUBLE_EQ(8.0 * 128 * 4 + 8.0 * 64 * 4, e.bytes);
  EXPECT_NE(std::string::npos, e.basis.find("`torch.zeros(8, 64, device='cuda')` at line 6")) << e.basis;  // the state's first binding
  // GELU keeps its input, made here by the Linear; relu as a method keeps its output.
  EXPECT_DOUBLE_EQ(8.0 * 128 * 4 + 8.0 * 64 * 4, estimateOf(loopWith("h = F.gelu(cell(torch.cat((h, x), -1)))"), "OOM107").bytes);
  EXPECT_DOUBLE_EQ(8.0 * 128 * 4 + 8.0 * 64 * 4, estimateOf(loopWith("h = cell(torch.cat([x, h], 1)).relu()"), "OOM107").bytes);
  // Unknown or inconsistent sizes: the finding without an estimate.
  const char* unknown[] = {
      "h = torch.tanh(cell(torch.cat([x, h], dim=0)))",  // the widths no longer chain
      "h = torch.tanh(cell(torch.cat([x, h], dim=k)))",  // a dimension the file does not state
      "h = torch.tanh(cell(torch.cat([x, h, y], dim=1)))",  // y: no shape
      "h = torch.tanh(rnn(x, h))",                        // a module this file cannot size
      "h = torch.tanh(cell(torch.cat([x, h], dim=1)).mean(0, keepdim=True) + h)",  // ops it does not size
  };
  for (const char* update : unknown) {
    oomlint::FileResult r = check(loopWith(update));
    const oomlint::Finding* f = findingWith(r, "OOM107");
    ASSERT_NE(nullptr, f) << update;
    EXPECT_FALSE(f->estimated.present) << update << ": " << f->estimated.summary();
  }
  // A state bound on two paths before the loop has no one shape.
  std::string twice = std::string(kHead) + setup + "if warm:\n    h = torch.zeros(8, 32, device='cuda')\n" +
                      "for step in range(10):\n    h = torch.tanh(cell(torch.cat([x, h], dim=1)))\n"
                      "    h.sum().backward(retain_graph=True)\n";
  EXPECT_FALSE(estimateOf(twice, "OOM107").present);
}

TEST(Estimates, CreateGraphKeepsTwiceTheGraphAndGrowsWhenGradientsAreZeroedInPlace) {
  std::string setup =
      "model = nn.Sequential(nn.Linear(64, 64), nn.ReLU()).cuda()\n"
      "x = torch.randn(8, 64, device='cuda')\n";
  auto loopWith = [&](const std::string& zero) {
    return std::string(kHead) + setup + "for step in range(10):\n" + zero +
           "    loss = F.mse_loss(model(x), x)\n    loss.backward(create_graph=True)\n";
  };
  // By hand: ReLU saves its output (8·64 float32), the loss its input (the same size); twice that.
  const double graph = 2.0 * (8 * 64 * 4 + 8 * 64 * 4);
  // Zeroed by hand, in place: nothing detaches them, and each step's graph stays chained.
  oomlint::EstimatedCost inPlace = estimateOf(loopWith("    for p in model.parameters():\n        p.grad.zero_()\n"), "OOM106");
  ASSERT_TRUE(inPlace.present);
  EXPECT_EQ("growth", inPlace.measure);
  EXPECT_DOUBLE_EQ(graph, inPlace.bytes);
  EXPECT_EQ("growth", estimateOf(loopWith(""), "OOM106").measure);  // never zeroed: accumulated into
  // zero_grad() detaches what it zeroes (set_to_none=False) or drops it: no cycle is left from
  // one step to the next, and OOM106 is not reported at all.
  auto reported = [&](const char* zero) {
    oomlint::FileResult r = oomlint::checkSource("estimate.py", loopWith(zero), oomlint::CheckOptions{});
    return std::any_of(r.findings.begin(), r.findings.end(), [](const oomlint::Finding& f) { return f.code == "OOM106"; });
  };
  EXPECT_TRUE(reported("    for p in model.parameters():\n        p.grad.zero_()\n"));  // the same check, reporting
  for (const char* zero : {"    model.zero_grad(set_to_none=False)\n", "    model.zero_grad()\n", "    model.zero_grad(set_to_none=flag)\n"})
    EXPECT_FALSE(reported(zero)) << zero;
  std::string elsewhere = std::string(kHead) + setup + "def clear():\n    for p in model.parameters():\n        p.grad = None\n" +
                          "for step in range(10):\n    clear()\n    loss = F.mse_loss(model(x), x)\n"
                          "    loss.backward(create_graph=True)\n";
  EXPECT_FALSE(estimateOf(elsewhere, "OOM106").present);
}

TEST(Estimates, JsonSarifAndTheCacheCarryTheEstimate) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("oomlint_estimates_cli_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(kRoot + "/examples/sized_mlp.py", dir / "sized_mlp.py");
  std::string bin = std::string(OOMLINT_BINARY);
  std::string base = "cd " + dir.string() + " && " + bin + " check --exit-zero sized_mlp.py ";
  for (int run = 0; run < 2; ++run) {  // the second run reads the results cache
    ASSERT_EQ(0, testutil::sh(base + "--output-format json > out.json"));
    json out = json::parse(testutil::slurp(dir / "out.json"));
    int estimated = 0;
    for (const json& f : out) {
      if (f["estimated"].is_null()) continue;
      ++estimated;
      EXPECT_GT(f["estimated"]["bytes"].get<int64_t>(), 0);
      EXPECT_FALSE(f["estimated"]["formula"].get<std::string>().empty());
      EXPECT_NE(std::string::npos, f["estimated"]["basis"].get<std::string>().find("line"));
      EXPECT_NE(std::string::npos, f["message"].get<std::string>().find("(estimated " + f["estimated"]["summary"].get<std::string>() + ")"));
    }
    EXPECT_EQ(3, estimated) << "run " << run;
  }
  EXPECT_TRUE(fs::exists(dir / ".oomlint_cache"));
  ASSERT_EQ(0, testutil::sh(base + "--output-format sarif > out.sarif"));
  json sarif = json::parse(testutil::slurp(dir / "out.sarif"));
  int withProperty = 0;
  for (const json& r : sarif["runs"][0]["results"])
    if (r.contains("properties") && r["properties"].contains("estimated")) {
      ++withProperty;
      const json& e = r["properties"]["estimated"];
      EXPECT_GT(e["bytes"].get<int64_t>(), 0);
      std::string measure = e["measure"];
      EXPECT_TRUE(measure == "growth" || measure == "peak") << measure;
    }
  EXPECT_EQ(3, withProperty);
  fs::remove_all(dir);
}

TEST(Estimates, ANotebooksBasisNamesCellsAndTheirLines) {
  // The sizes come from cells 2 and 3 (cell 1 is markdown): the basis says so in the notebook's
  // own terms, as its findings' locations do.
  json nb = {{"nbformat", 4}, {"nbformat_minor", 5}, {"metadata", {{"kernelspec", {{"language", "python"}, {"name", "python3"}}}}}};
  auto code = [](const std::string& src) {
    return json{{"cell_type", "code"}, {"execution_count", nullptr}, {"metadata", json::object()}, {"outputs", json::array()}, {"source", src}};
  };
  nb["cells"] = json::array({json{{"cell_type", "markdown"}, {"metadata", json::object()}, {"source", "# sizes"}},
                             code(std::string(kHead) + "model = nn.Sequential(nn.Linear(64, 64), nn.GELU()).cuda()\n"),
                             code("\nx = torch.randn(4, 64, device='cuda')\n"),
                             code("outs = []\nmodel.eval()\nfor i in range(10):\n    outs.append(model(x))\n")});
  oomlint::FileResult r = oomlint::checkSource("sized.ipynb", nb.dump(1), oomlint::CheckOptions{});
  const oomlint::Finding* f = findingWith(r, "OOM102");
  ASSERT_NE(nullptr, f);
  ASSERT_TRUE(f->estimated.present);
  EXPECT_NE(std::string::npos, f->estimated.basis.find("`nn.Sequential(nn.Linear(64, 64), nn.GELU())` at cell 2, line 4")) << f->estimated.basis;
  EXPECT_NE(std::string::npos, f->estimated.basis.find("at cell 3, line 2")) << f->estimated.basis;
  EXPECT_EQ(std::string::npos, f->estimated.basis.find("at line")) << f->estimated.basis;
}
