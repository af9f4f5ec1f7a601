// Devices (before values) and file-level facts (after everything else): which names hold a GPU
// device or sit on the GPU, whether the file clears gradients anywhere, and which statements
// sit in branches that exist for another PyTorch version or a missing API.
#include "facts/builder.h"
#include "facts/names.h"
#include "facts/torch_api.h"

namespace oomlint {

using namespace torch_api;

namespace {

bool isCudaString(const Module& m, NodeId e) {
  const Expr& x = m.expr(e);
  return x.kind == ExprKind::String && x.text.find("cuda") != std::string_view::npos;
}

}  // namespace

void FactsBuilder::collectDevices() {
  auto mentionsCuda = [&](NodeId e) {
    bool found = false;
    forSubtree(e, [&](NodeId x) {
      if (isCudaString(m_, x) || startsWith(m_.canonical(x), "torch.cuda.") || m_.canonical(x) == "torch.kCUDA") found = true;
    });
    return found;
  };
  // The program is written for a GPU: a "cuda" string, a torch.cuda or torch.accelerator call, a
  // `.cuda()`, an identifier that names CUDA (`is_cuda`, `require_cuda`).
  for (NodeId e = 0; e < m_.exprs.size() && !f_.fileMentionsCuda_; ++e) {
    const Expr& x = m_.expr(e);
    if (isCudaString(m_, e) || startsWith(m_.canonical(e), "torch.cuda") || startsWith(m_.canonical(e), "torch.accelerator") ||
        m_.canonical(e) == "torch.kCUDA" ||
        ((x.kind == ExprKind::Name || x.kind == ExprKind::Attribute) && x.text.find("cuda") != std::string_view::npos))
      f_.fileMentionsCuda_ = true;
  }
  for (int round = 0; round < 2; ++round)
    for (const Stmt& st : m_.stmts) {
      if (st.kind != StmtKind::Assign || st.value == kNone) continue;
      const Expr& v = m_.expr(st.value);
      for (NodeId t : items(m_, st.targets)) {
        std::string_view key = f_.pathKey(t);
        if (key.empty()) continue;
        bool gpu = false;
        if (v.kind == ExprKind::Call) {
          const std::string& canon = m_.canonical(st.value);
          if (canon == "torch.device") gpu = f_.isGpuDeviceExpr(positionalArg(m_, st.value, 0)) || mentionsCuda(st.value);
          else if (canon == "torch.cuda.current_device" || startsWith(canon, "torch.accelerator.current_")) gpu = true;
          else gpu = f_.looksLike(key, Facts::kNamedDevice) && mentionsCuda(st.value);
        } else if (v.kind == ExprKind::String || v.kind == ExprKind::Conditional) {
          gpu = mentionsCuda(st.value);
        } else if (v.kind == ExprKind::Name || v.kind == ExprKind::Attribute) {
          gpu = f_.gpuNames_.count(f_.pathKey(st.value)) != 0;
        }
        if (gpu) f_.gpuNames_.insert(key);
        // `device = torch.device("cpu")` / `device = "cpu"`: the CPU, said so.
        bool cpu = false;
        if (v.kind == ExprKind::Call && m_.canonical(st.value) == "torch.device") {
          NodeId a = positionalArg(m_, st.value, 0);
          cpu = a != kNone && m_.expr(a).kind == ExprKind::String && m_.expr(a).text.find("cpu") != std::string_view::npos;
        } else if (v.kind == ExprKind::String) {
          cpu = v.text.find("cpu") != std::string_view::npos;
        }
        if (cpu) f_.cpuNames_.insert(key);
      }
    }
  for (NodeId e = 0; e < m_.exprs.size(); ++e) {
    const Expr& x = m_.expr(e);
    if (x.kind != ExprKind::Call) continue;
    std::string_view meth = methodName(m_, e);
    NodeId recv = receiverOf(m_, e);
    std::string_view key = f_.pathKey(recv);
    if (key.empty()) continue;
    if ((meth == "cuda" && x.argCount <= 1) || (meth == "to" && x.argCount >= 1 && f_.isGpuDeviceExpr(positionalArg(m_, e, 0))))
      f_.modulesOnGpu_.insert(key);
  }
  collectLauncherPlacements();
}

namespace {

/// A condition that tests the PyTorch version or whether an API exists.
bool isVersionTest(const Module& m, NodeId cond) {
  if (cond == kNone) return false;
  const Span& sp = m.expr(cond).span;
  for (NodeId e = cond + 1; e-- > 0;) {
    const Expr& x = m.expr(e);
    if (x.span.begin < sp.begin || x.span.end > sp.end) break;
    std::string_view name;
    if (x.kind == ExprKind::Attribute || x.kind == ExprKind::Name) name = x.text;
    if (x.kind == ExprKind::Call) name = calleeName(m, e);
    if (name.empty()) continue;
    // Cheap test first: the words below all need one of these spellings.
    bool candidate = name.find("ersion") != std::string_view::npos || name.find("ERSION") != std::string_view::npos ||
                     name.find("orch") != std::string_view::npos || name.find("ORCH") != std::string_view::npos ||
                     name == "hasattr" || name == "getattr";
    if (!candidate) continue;
    if (name == "__version__" || names::hasWord(name, "version")) return true;
    // `hasattr(torch.amp, "GradScaler")`, `hasattr(F, "scaled_dot_product_attention")`.
    if (x.kind == ExprKind::Call && (name == "hasattr" || name == "getattr") &&
        startsWith(m.canonical(positionalArg(m, e, 0)), "torch"))
      return true;
    // `_TORCH_GREATER_EQUAL_2_4`, `is_torch_greater_or_equal("2.3")`, `TORCH_GE_2_0`.
    if (names::hasWord(name, "torch") && (names::hasWord(name, "greater") || names::hasWord(name, "less") ||
                                          names::hasWord(name, "ge") || names::hasWord(name, "lt") ||
                                          names::hasWord(name, "gte") || names::hasWord(name, "older") ||
                                          names::hasWord(name, "newer")))
      return true;
  }
  return false;
}

bool catchesMissingApi(const Module& m, const Handler& h) {
  if (h.type == kNone) return false;
  bool found = false;
  const Span& sp = m.expr(h.type).span;
  for (NodeId e = h.type + 1; e-- > 0;) {
    const Expr& x = m.expr(e);
    if (x.span.begin < sp.begin || x.span.end > sp.end) break;
    if (x.kind == ExprKind::Name && (x.text == "AttributeError" || x.text == "ImportError" || x.text == "TypeError" ||
                                     x.text == "ModuleNotFoundError" || x.text == "NameError"))
      found = true;
  }
  return found;
}

}  // namespace

void FactsBuilder::computeProgramFacts() {
  // Flags a class only ever sets to a false literal: `if self.flag:` bodies never run. Only the
  // flags some `if` tests are looked up.
  f_.unreachable_.assign(m_.stmts.size(), false);
  struct FlagTest {
    NodeId stmt;
    int32_t family;
    std::string_view path;
    bool negated;
  };
  std::vector<FlagTest> tests;
  for (NodeId s = 0; s < m_.stmts.size(); ++s) {
    const Stmt& st = m_.stmt(s);
    if (st.kind != StmtKind::If || st.value == kNone) continue;
    const Expr& c = m_.expr(st.value);
    bool negated = c.kind == ExprKind::UnaryOp && c.text == "not";
    std::string_view path = f_.pathKey(negated ? c.lhs : st.value);
    int32_t cls = f_.classOfFunction(st.function);
    if (cls < 0 || path.substr(0, 5) != "self.") continue;
    tests.push_back({s, f_.familyRoot_[static_cast<size_t>(cls)], path, negated});
  }
  if (!tests.empty()) {
    // Per tested flag: 1 while every assignment seen is a false literal, 0 once one is not.
    std::vector<int> falsy(tests.size(), -1);
    for (const Stmt& st : m_.stmts) {
      if (st.kind != StmtKind::Assign && st.kind != StmtKind::AugAssign) continue;
      int32_t cls = f_.classOfFunction(st.function);
      if (cls < 0) continue;
      int32_t family = f_.familyRoot_[static_cast<size_t>(cls)];
      List targets = st.kind == StmtKind::Assign ? st.targets : List{};
      std::vector<NodeId> all(items(m_, targets).begin(), items(m_, targets).end());
      if (st.kind == StmtKind::AugAssign) all.push_back(st.target);
      for (NodeId t : all) {
        std::string_view path = f_.pathKey(t);
        if (path.substr(0, 5) != "self.") continue;
        bool isFalse = st.kind == StmtKind::Assign && st.value != kNone &&
                       (isFalseLiteral(m_, st.value) || m_.expr(st.value).kind == ExprKind::NoneLit);
        for (size_t i = 0; i < tests.size(); ++i)
          if (tests[i].family == family && tests[i].path == path) falsy[i] = (falsy[i] != 0 && isFalse) ? 1 : 0;
      }
    }
    for (size_t i = 0; i < tests.size(); ++i) {
      if (falsy[i] != 1) continue;
      const Stmt& st = m_.stmt(tests[i].stmt);
      forEachNested(tests[i].negated ? st.orelse : st.body, [&](NodeId x) { f_.unreachable_[x] = true; });
    }
  }

  f_.versionGated_.assign(m_.stmts.size(), false);
  for (NodeId s = 0; s < m_.stmts.size(); ++s) {
    const Stmt& st = m_.stmt(s);
    if (st.kind == StmtKind::If && isVersionTest(m_, st.value)) {
      auto mark = [&](NodeId x) { f_.versionGated_[x] = true; };
      forEachNested(st.body, mark);
      forEachNested(st.orelse, mark);
      // `if new_torch: return new_api()` followed by the old call: the rest of the block is the else.
      bool exits = st.body.count && (m_.stmt(m_.lists[st.body.first + st.body.count - 1]).kind == StmtKind::Return ||
                                     m_.stmt(m_.lists[st.body.first + st.body.count - 1]).kind == StmtKind::Raise);
      if (exits && st.orelse.count == 0) {
        List block = st.parent == kNone ? m_.functions[st.function].body : m_.stmt(st.parent).body;
        bool after = false;
        for (NodeId sib : items(m_, block)) {
          if (after) {
            mark(sib);
            forEachNested(m_.stmt(sib).body, mark);
            forEachNested(m_.stmt(sib).orelse, mark);
          }
          if (sib == s) after = true;
        }
      }
    } else if (st.kind == StmtKind::Try) {
      for (uint32_t h = 0; h < st.handlerCount; ++h) {
        const Handler& hd = m_.handlers[st.firstHandler + h];
        if (catchesMissingApi(m_, hd)) forEachNested(hd.body, [&](NodeId x) { f_.versionGated_[x] = true; });
      }
    }
  }

  for (NodeId e = 0; e < m_.exprs.size(); ++e) {
    const Expr& x = m_.expr(e);
    if (x.kind != ExprKind::Conditional || x.argCount != 3 || !isVersionTest(m_, m_.args[x.firstArg + 1].value)) continue;
    for (uint32_t arm : {0u, 2u}) forSubtree(m_.args[x.firstArg + arm].value, [&](NodeId y) { f_.versionGatedExprs_.insert(y); });
  }

  // Anything in the file that clears or overwrites gradients, or a framework that does.
  for (const auto& [local, full] : m_.imports) {
    std::string_view root = std::string_view(full).substr(0, full.find('.'));
    if (root == "lightning" || root == "pytorch_lightning" || root == "deepspeed") f_.clearsGradients_ = true;
    if (full == "torch.distributed.autograd" || startsWith(full, "torch.distributed.autograd.")) f_.clearsGradients_ = true;
  }
  for (uint32_t fn = 0; fn < m_.functions.size() && !f_.clearsGradients_; ++fn)
    if (f_.summaries_[fn].events & event::kZeroGrad) f_.clearsGradients_ = true;
  for (NodeId e = 0; e < m_.exprs.size() && !f_.clearsGradients_; ++e) {
    const Expr& x = m_.expr(e);
    if (x.kind != ExprKind::Call) continue;
    std::string_view meth = methodName(m_, e);
    if (meth == "clear_grad" || meth == "zero_grads") f_.clearsGradients_ = true;
    if (meth == "zero_" || meth == "detach_") {
      std::string_view key = f_.pathKey(receiverOf(m_, e));
      if (key.find("grad") != std::string_view::npos) f_.clearsGradients_ = true;
    }
    if (calleeName(m_, e).find("zero_grad") != std::string_view::npos) f_.clearsGradients_ = true;
    if (startsWith(m_.canonical(e), "torch.distributed.autograd.")) f_.clearsGradients_ = true;
  }
}

bool Facts::bindsDevice() const {
  for (NodeId e = 0; e < m_.exprs.size(); ++e) {
    if (m_.expr(e).kind != ExprKind::Call) continue;
    const std::string& c = m_.canonical(e);
    if (c == "torch.cuda.set_device" || c == "torch.cuda.device" || c == "torch.accelerator.set_device_index" ||
        c == "torch.accelerator.set_device")
      return true;
    if (c == "torch.distributed.init_process_group" && keywordArg(m_, e, "device_id") != kNone) return true;
  }
  // `os.environ["CUDA_VISIBLE_DEVICES"] = str(rank)` in each process before CUDA starts: the one
  // GPU it sees is its own, so device 0 is that rank's GPU, not another rank's.
  for (const Stmt& st : m_.stmts) {
    if (st.kind != StmtKind::Assign) continue;
    for (NodeId t : items(m_, st.targets)) {
      const Expr& x = m_.expr(t);
      if (x.kind != ExprKind::Subscript || x.rhs == kNone || m_.canonical(x.lhs) != "os.environ") continue;
      const Expr& key = m_.expr(x.rhs);
      if (key.kind == ExprKind::String && key.text.find("CUDA_VISIBLE_DEVICES") != std::string_view::npos) return true;
    }
  }
  return false;
}

bool Facts::usesGradScaler() const {
  for (NodeId e = 0; e < m_.exprs.size(); ++e) {
    if (m_.expr(e).kind != ExprKind::Call) continue;
    if (endsWith(m_.canonical(e), "GradScaler") || kindOf(e) == Kind::Scaler) return true;
  }
  return false;
}

NodeId Facts::distributedWithoutDevice() const {
  if (distributedEvidence_ >= 0) return static_cast<NodeId>(distributedEvidence_);
  NodeId evidence = kNone;
  // This file or another of its program (main.py) binds each process to its GPU: no evidence.
  if (!bindsDevice() && !programBindsDevice())
    for (NodeId e = 0; e < m_.exprs.size(); ++e) {
      const Expr& x = m_.expr(e);
      if (x.kind == ExprKind::String && (x.text.find("\"LOCAL_RANK\"") != std::string_view::npos ||
                                         x.text.find("'LOCAL_RANK'") != std::string_view::npos)) {
        if (evidence == kNone) evidence = e;
      } else if (x.kind == ExprKind::Call && m_.canonical(e) == "torch.distributed.init_process_group") {
        evidence = e;
      }
    }
  distributedEvidence_ = evidence;
  return evidence;
}

}  // namespace oomlint
