#include "facts/facts.h"

#include <algorithm>
#include <array>

#include "facts/names.h"

namespace oomlint {
namespace {

bool startsWith(std::string_view s, std::string_view p) { return s.size() >= p.size() && s.substr(0, p.size()) == p; }
bool endsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

template <size_t N>
bool in(std::string_view s, const std::array<std::string_view, N>& set) {
  return std::find(set.begin(), set.end(), s) != set.end();
}

Tri joinTri(Tri a, Tri b) { return a == b ? a : Tri::Unknown; }

/// Any Yes wins; all No gives No; otherwise Unknown. How history flows through arithmetic.
Tri anyYes(Tri acc, Tri v) {
  if (acc == Tri::Yes || v == Tri::Yes) return Tri::Yes;
  if (acc == Tri::No && v == Tri::No) return Tri::No;
  return Tri::Unknown;
}

bool isGradDisablingCtx(const std::string& c) {
  return c == "torch.no_grad" || c == "torch.inference_mode" || c == "torch.autograd.no_grad" ||
         c == "torch.autograd.grad_mode.no_grad" || c == "torch.autograd.inference_mode" ||
         c == "torch.autograd.grad_mode.inference_mode";
}
bool isGradEnablingCtx(const std::string& c) {
  return c == "torch.enable_grad" || c == "torch.autograd.enable_grad" || c == "torch.autograd.grad_mode.enable_grad";
}
bool isSetGradEnabled(const std::string& c) {
  return c == "torch.set_grad_enabled" || c == "torch.autograd.set_grad_enabled" ||
         c == "torch.autograd.grad_mode.set_grad_enabled";
}

/// Tensor methods whose result never carries autograd history.
bool isNonDifferentiableMethod(std::string_view m) {
  static constexpr std::array<std::string_view, 26> k = {
      "item", "tolist", "numpy", "detach", "detach_", "argmax", "argmin", "argsort", "eq", "ne",
      "lt", "gt", "le", "ge", "isnan", "isinf", "isfinite", "nonzero", "bool", "long", "int",
      "size", "dim", "numel", "bincount", "element_size"};
  return in(m, k);
}
/// Methods whose result is not a tensor on the device at all.
bool leavesDevice(std::string_view m) {
  return m == "item" || m == "tolist" || m == "numpy" || m == "cpu" || m == "size" || m == "dim" ||
         m == "numel" || m == "element_size";
}
bool isNonTensorAttribute(std::string_view a) {
  static constexpr std::array<std::string_view, 10> k = {
      "shape", "dtype", "device", "ndim", "is_cuda", "requires_grad", "grad_fn", "is_leaf", "layout", "names"};
  return in(a, k);
}
bool isStrippingBuiltin(std::string_view f) {
  static constexpr std::array<std::string_view, 12> k = {
      "float", "int", "bool", "len", "str", "repr", "round", "print", "isinstance", "format", "abs", "hash"};
  return in(f, k);
}
bool isTensorFactory(std::string_view last) {
  static constexpr std::array<std::string_view, 22> k = {
      "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange", "linspace",
      "tensor", "as_tensor", "from_numpy", "zeros_like", "ones_like", "empty_like", "full_like",
      "rand_like", "randn_like", "eye", "logspace", "normal"};
  return in(last, k);
}
bool isLossFunctionName(std::string_view last) {
  if (endsWith(last, "_loss") && last != "get_loss") return true;
  static constexpr std::array<std::string_view, 8> k = {
      "cross_entropy", "binary_cross_entropy", "binary_cross_entropy_with_logits", "nll_loss",
      "kl_div", "mse_loss", "l1_loss", "smooth_l1_loss"};
  return in(last, k);
}

/// Unwraps `enumerate(x)`, `tqdm(x)`, `zip(x, y)`, `iter(x)` to the iterated value.
NodeId unwrapIterable(const Module& m, NodeId e) {
  for (int guard = 0; guard < 8 && e != kNone; ++guard) {
    const Expr& x = m.expr(e);
    if (x.kind != ExprKind::Call) return e;
    std::string_view f = calleeName(m, e);
    if (f == "enumerate" || f == "tqdm" || f == "zip" || f == "iter" || f == "islice" || f == "track" ||
        f == "progress_bar" || f == "pbar" || f == "auto" || f == "trange") {
      NodeId first = positionalArg(m, e, 0);
      if (first == kNone) return e;
      e = first;
      continue;
    }
    return e;
  }
  return e;
}

}  // namespace

// ------------------------------------------------------------------ builder

class FactsBuilder {
 public:
  explicit FactsBuilder(Facts& f) : f_(f), m_(f.m_) {}

  void build() {
    size_t ns = m_.stmts.size(), ne = m_.exprs.size(), nf = m_.functions.size();
    f_.gradMode_.assign(ns, GradMode::Unknown);
    f_.loopOf_.assign(ns, kNone);
    f_.loopRole_.assign(ns, 0);
    f_.values_.assign(ne, ValueFact{});
    f_.useBind_.assign(ne, kBoundOutsideLoops);
    f_.subtreeFlags_.assign(ns, 0);
    f_.fnFlags_.assign(nf, 0);
    f_.entry_.assign(nf, GradMode::Enabled);
    f_.evalFunction_.assign(nf, false);
    f_.moduleClass_.assign(m_.classes.size(), false);
    f_.evalOpener_.assign(ns, kNone);
    f_.fnStmts_.assign(nf, {});
    f_.stmtCalls_.assign(ns, {});
    f_.fileMentionsCuda_ = m_.source.find("cuda") != std::string::npos;
    if (m_.lang == Lang::Cpp) {
      f_.cppKeys_.assign(ne, {});
      for (NodeId e = 0; e < ne; ++e)
        if (m_.expr(e).kind == ExprKind::Attribute) {
          std::string key = dottedPath(m_, e);
          if (!key.empty()) f_.cppKeys_[e] = f_.cppKeyText_.emplace_back(std::move(key));
        }
    }

    for (NodeId s = 0; s < ns; ++s) {
      const Stmt& st = m_.stmt(s);
      f_.fnStmts_[st.function].push_back(s);
      if (st.parent != kNone) {
        StmtKind pk = m_.stmt(st.parent).kind;
        f_.loopOf_[s] = (pk == StmtKind::For || pk == StmtKind::While) ? st.parent : f_.loopOf_[st.parent];
      }
    }
    // Calls a statement runs; those inside a lambda body run wherever the lambda is called.
    for (NodeId e = 0; e < ne; ++e) {
      const Expr& x = m_.expr(e);
      if (x.kind == ExprKind::Call && x.stmt != kNone && !m_.functions[x.owner].isLambda) f_.stmtCalls_[x.stmt].push_back(e);
    }
    for (const Function& fn : m_.functions)
      if (!fn.isLambda) f_.functionsByName_[fn.name].push_back(static_cast<uint32_t>(&fn - m_.functions.data()));

    classifyClasses();
    collectNames();
    computeUpdateFlags();
    computeGradModes();
    computeEvalContexts();
    computeValues();
    computeLoopRoles();
  }

 private:
  Facts& f_;
  const Module& m_;

  // ---------------------------------------------------------------- classes and names

  void classifyClasses() {
    bool changed = true;
    for (int round = 0; changed && round < 8; ++round) {
      changed = false;
      for (size_t c = 0; c < m_.classes.size(); ++c) {
        if (f_.moduleClass_[c]) continue;
        for (NodeId b : items(m_, m_.classes[c].bases)) {
          const std::string& canon = m_.canonical(b);
          std::string_view text = m_.textOf(b);
          bool isModule = canon == "torch.nn.Module" || names::lastComponent(canon) == "Module" || (startsWith(canon, "torch.nn.") && !canon.empty() &&
                                                        std::isupper(static_cast<unsigned char>(names::lastComponent(canon)[0]))) ||
                          endsWith(text, "nn.Module") || endsWith(canon, "LightningModule") ||
                          endsWith(text, "LightningModule") || endsWith(canon, "PreTrainedModel");
          if (!isModule) isModule = moduleClassNames_.count(text) != 0;
          if (isModule) {
            f_.moduleClass_[c] = true;
            moduleClassNames_.insert(m_.classes[c].name);
            changed = true;
            break;
          }
        }
      }
    }
  }

  std::unordered_set<std::string_view> moduleClassNames_;

  bool isLocalModuleClass(std::string_view name) const { return moduleClassNames_.count(name) != 0; }

  /// A call that constructs a module: `nn.Linear(...)`, `MyNet()`, `resnet50()`, `X.from_pretrained()`.
  bool constructsModule(NodeId call) const {
    const Expr& c = m_.expr(call);
    if (c.kind != ExprKind::Call) return false;
    const std::string& canon = m_.canonical(call);
    std::string_view last = names::lastComponent(canon);
    if (startsWith(canon, "torch.nn.") && !last.empty() && std::isupper(static_cast<unsigned char>(last[0])) &&
        !endsWith(last, "Loss") && last != "Parameter" && last != "ParameterList" && last != "ParameterDict")
      return true;
    if (startsWith(canon, "torchvision.models.") || canon == "timm.create_model") return true;
    if (startsWith(canon, "transformers.") && methodName(m_, call) == "from_pretrained") return true;
    std::string_view callee = calleeName(m_, call);
    if (m_.expr(c.lhs).kind == ExprKind::Name && isLocalModuleClass(callee)) return true;
    if (canon == "torch.compile" || endsWith(canon, "DistributedDataParallel") || endsWith(canon, "DataParallel")) {
      NodeId a = positionalArg(m_, call, 0);
      return a != kNone && f_.isModuleExpr(a);
    }
    std::string_view meth = methodName(m_, call);
    if (meth == "to" || meth == "cuda" || meth == "half" || meth == "bfloat16" || meth == "train" || meth == "eval") {
      NodeId r = receiverOf(m_, call);
      return r != kNone && f_.isModuleExpr(r);
    }
    return false;
  }

  bool constructsLossModule(NodeId call) const {
    const std::string& canon = m_.canonical(call);
    return startsWith(canon, "torch.nn.") && endsWith(canon, "Loss");
  }

  void collectNames() {
    // Two rounds so that `net = model.to(device)` after `model = Net()` is seen either way.
    for (int round = 0; round < 2; ++round) {
      for (const Stmt& st : m_.stmts) {
        if (st.kind != StmtKind::Assign || st.value == kNone) continue;
        const Expr& v = m_.expr(st.value);
        for (NodeId t : items(m_, st.targets)) {
          std::string_view key = f_.pathKey(t);
          if (key.empty()) continue;
          if (v.kind == ExprKind::Call) {
            if (constructsLossModule(st.value)) f_.lossModuleNames_.insert(key);
            else if (constructsModule(st.value)) f_.moduleNames_.insert(key);
            const std::string& canon = m_.canonical(st.value);
            if (startsWith(canon, "torch.optim.") && std::isupper(static_cast<unsigned char>(names::lastComponent(canon)[0])))
              f_.optimizerNames_.insert(key);
            if (endsWith(canon, "DataLoader") || endsWith(canon, "utils.data.DataLoader")) f_.loaderNames_.insert(key);
            if (canon == "torch.device" || m_.textOf(st.value).find("cuda") != std::string_view::npos) {
              if (canon == "torch.device" || f_.looksLike(key, Facts::kNamedDevice)) f_.gpuNames_.insert(key);
            }
          } else if (v.kind == ExprKind::String && m_.textOf(st.value).find("cuda") != std::string_view::npos) {
            f_.gpuNames_.insert(key);
          } else if (v.kind == ExprKind::Conditional && m_.textOf(st.value).find("cuda") != std::string_view::npos) {
            f_.gpuNames_.insert(key);
          } else if (v.kind == ExprKind::Name || v.kind == ExprKind::Attribute) {
            std::string_view src = f_.pathKey(st.value);
            if (f_.moduleNames_.count(src)) f_.moduleNames_.insert(key);
          }
        }
      }
    }
    // Evidence from use: `.parameters()` is asked only of modules; `.to(cuda)` moves modules.
    for (NodeId e = 0; e < m_.exprs.size(); ++e) {
      const Expr& x = m_.expr(e);
      if (x.kind != ExprKind::Call) continue;
      std::string_view meth = methodName(m_, e);
      NodeId recv = receiverOf(m_, e);
      if (recv == kNone) continue;
      std::string_view key = f_.pathKey(recv);
      if (key.empty()) continue;
      if (meth == "parameters" || meth == "named_parameters") f_.moduleNames_.insert(key);
      if ((meth == "cuda" && x.argCount <= 1) || (meth == "to" && x.argCount >= 1 && f_.isGpuDeviceExpr(positionalArg(m_, e, 0)))) {
        f_.modulesOnGpu_.insert(key);
      }
    }
  }

  // ---------------------------------------------------------------- backward / step reachability

  /// Local functions a call may run: `helper(...)` by name, `self.method(...)` in the same class.
  std::vector<uint32_t> localTargets(NodeId call) const {
    const Expr& c = m_.expr(call);
    if (c.lhs == kNone) return {};
    const Expr& callee = m_.expr(c.lhs);
    std::vector<uint32_t> out;
    if (callee.kind == ExprKind::Name && callee.canonical == 0) {
      auto it = f_.functionsByName_.find(callee.text);
      if (it != f_.functionsByName_.end()) {
        // A name defined many times resolves to its last definition (what Python would call
        // after the module ran); a few alternatives (if/else definitions) are all kept.
        const std::vector<uint32_t>& defs = it->second;
        size_t from = defs.size() > 4 ? defs.size() - 1 : 0;
        for (size_t i = from; i < defs.size(); ++i)
          if (m_.functions[defs[i]].cls < 0) out.push_back(defs[i]);
      }
    } else if (callee.kind == ExprKind::Attribute && callee.lhs != kNone &&
               m_.expr(callee.lhs).kind == ExprKind::Name && m_.expr(callee.lhs).text == "self") {
      uint32_t caller = m_.stmt(c.stmt).function;
      int32_t cls = classOfFunction(caller);
      auto it = f_.functionsByName_.find(callee.text);
      if (it != f_.functionsByName_.end() && cls >= 0)
        for (uint32_t fn : it->second)
          if (m_.functions[fn].cls == cls && out.size() < 4) out.push_back(fn);
    }
    return out;
  }

  int32_t classOfFunction(uint32_t fn) const {
    // A nested function inside a method still sees `self` of that class.
    for (int guard = 0; guard < 64; ++guard) {
      if (m_.functions[fn].cls >= 0) return m_.functions[fn].cls;
      if (fn == 0) return -1;
      fn = m_.functions[fn].parent;
    }
    return -1;
  }

  uint8_t directFlags(NodeId call) const {
    uint8_t flags = 0;
    if (f_.isBackwardCall(call)) flags |= Facts::kReachesBackward | Facts::kReachesUpdate;
    if (f_.isAutogradGradCall(call)) flags |= Facts::kReachesUpdate;
    if (f_.isOptimizerStep(call)) flags |= Facts::kReachesStep | Facts::kReachesUpdate;
    return flags;
  }

  void computeUpdateFlags() {
    // Per function: direct flags, then closure over local calls.
    std::vector<std::vector<uint32_t>> callees(m_.functions.size());
    for (NodeId e = 0; e < m_.exprs.size(); ++e) {
      const Expr& x = m_.expr(e);
      if (x.kind != ExprKind::Call || x.stmt == kNone) continue;
      uint32_t fn = m_.stmt(x.stmt).function;
      f_.fnFlags_[fn] |= directFlags(e);
      for (uint32_t t : localTargets(e)) callees[fn].push_back(t);
    }
    bool changed = true;
    for (int round = 0; changed && round < 16; ++round) {
      changed = false;
      for (size_t fn = 0; fn < m_.functions.size(); ++fn)
        for (uint32_t t : callees[fn]) {
          uint8_t merged = f_.fnFlags_[fn] | f_.fnFlags_[t];
          if (merged != f_.fnFlags_[fn]) {
            f_.fnFlags_[fn] = merged;
            changed = true;
          }
        }
    }
    // Per statement subtree (children have larger ids than their parents).
    for (NodeId e = 0; e < m_.exprs.size(); ++e) {
      const Expr& x = m_.expr(e);
      if (x.kind != ExprKind::Call || x.stmt == kNone) continue;
      uint8_t flags = directFlags(e);
      for (uint32_t t : localTargets(e)) flags |= f_.fnFlags_[t];
      f_.subtreeFlags_[x.stmt] |= flags;
    }
    for (NodeId s = static_cast<NodeId>(m_.stmts.size()); s-- > 0;) {
      NodeId p = m_.stmt(s).parent;
      if (p != kNone) f_.subtreeFlags_[p] |= f_.subtreeFlags_[s];
    }
  }

  // ---------------------------------------------------------------- grad mode

  enum class Local : uint8_t { Inherit, Enabled, Disabled, Unknown };

  Local contextEffect(NodeId ctx) const {
    const Expr& e = m_.expr(ctx);
    const std::string& canon = m_.canonical(ctx);
    if (e.kind == ExprKind::Call) {
      if (canon == "torch.inference_mode" || canon == "torch.autograd.inference_mode") {
        NodeId a = positionalArg(m_, ctx, 0);
        if (a == kNone) a = keywordArg(m_, ctx, "mode");
        if (a == kNone || isTrueLiteral(m_, a)) return Local::Disabled;
        return isFalseLiteral(m_, a) ? Local::Inherit : Local::Unknown;
      }
      if (isGradDisablingCtx(canon)) return Local::Disabled;
      if (isGradEnablingCtx(canon)) return Local::Enabled;
      if (isSetGradEnabled(canon)) {
        NodeId a = positionalArg(m_, ctx, 0);
        if (a == kNone) a = keywordArg(m_, ctx, "mode");
        if (isTrueLiteral(m_, a)) return Local::Enabled;
        if (isFalseLiteral(m_, a)) return Local::Disabled;
        return Local::Unknown;
      }
      return Local::Inherit;
    }
    if (isGradDisablingCtx(canon)) return Local::Disabled;
    if (isGradEnablingCtx(canon)) return Local::Enabled;
    return Local::Inherit;
  }

  std::vector<Local> local_;

  void markLocal(List body, Local mode) {
    // Explicit work list: statements of a block in order, with the mode in force.
    Local current = mode;
    for (NodeId s : items(m_, body)) {
      local_[s] = current;
      const Stmt& st = m_.stmt(s);
      switch (st.kind) {
        case StmtKind::With: {
          Local inner = current;
          for (NodeId ctx : items(m_, st.targets)) {
            Local eff = contextEffect(ctx);
            if (eff != Local::Inherit) inner = eff;
          }
          markLocal(st.body, inner);
          break;
        }
        case StmtKind::Expr: {
          // `torch.set_grad_enabled(False)` as a statement switches the rest of the block.
          if (st.value != kNone && m_.expr(st.value).kind == ExprKind::Call && isSetGradEnabled(m_.canonical(st.value))) {
            Local eff = contextEffect(st.value);
            if (eff != Local::Inherit) current = eff;
          }
          break;
        }
        case StmtKind::FunctionDef:
        case StmtKind::ClassDef:
          if (st.kind == StmtKind::ClassDef) markLocal(st.body, current);
          break;
        case StmtKind::Try:
          markLocal(st.body, current);
          for (uint32_t h = 0; h < st.handlerCount; ++h) markLocal(m_.handlers[st.firstHandler + h].body, current);
          markLocal(st.orelse, current);
          markLocal(st.finalbody, current);
          break;
        default:
          markLocal(st.body, current);
          markLocal(st.orelse, current);
          break;
      }
    }
  }

  GradMode resolve(Local l, GradMode entry) const {
    switch (l) {
      case Local::Inherit: return entry;
      case Local::Enabled: return GradMode::Enabled;
      case Local::Disabled: return GradMode::Disabled;
      default: return GradMode::Unknown;
    }
  }

  GradMode decoratorMode(uint32_t fn) const {
    for (NodeId d : items(m_, m_.functions[fn].decorators)) {
      const std::string& canon = m_.canonical(d);
      if (isGradDisablingCtx(canon)) return GradMode::Disabled;
      if (isGradEnablingCtx(canon)) return GradMode::Enabled;
    }
    return GradMode::Unknown;
  }

  void computeGradModes() {
    local_.assign(m_.stmts.size(), Local::Inherit);
    size_t nf = m_.functions.size();
    for (size_t fn = 0; fn < nf; ++fn) markLocal(m_.functions[fn].body, Local::Inherit);

    // Entry modes: decorator, else what every in-file call site says, else a default.
    std::vector<std::vector<NodeId>> callSites(nf);
    for (NodeId e = 0; e < m_.exprs.size(); ++e) {
      const Expr& x = m_.expr(e);
      if (x.kind != ExprKind::Call || x.stmt == kNone) continue;
      for (uint32_t t : localTargets(e)) callSites[t].push_back(x.stmt);
    }
    std::vector<GradMode> decorated(nf, GradMode::Unknown);
    for (size_t fn = 0; fn < nf; ++fn) {
      decorated[fn] = decoratorMode(static_cast<uint32_t>(fn));
      const Function& f = m_.functions[fn];
      bool nested = fn != 0 && !f.isLambda && f.cls < 0 && f.parent != 0;
      if (decorated[fn] != GradMode::Unknown) f_.entry_[fn] = decorated[fn];
      else if (f.isLambda || nested) f_.entry_[fn] = GradMode::Unknown;
      else f_.entry_[fn] = GradMode::Enabled;
    }
    for (int round = 0; round < 4; ++round) {
      bool changed = false;
      for (size_t fn = 1; fn < nf; ++fn) {
        if (decorated[fn] != GradMode::Unknown || callSites[fn].empty()) continue;
        bool first = true;
        GradMode agreed = GradMode::Unknown;
        for (NodeId site : callSites[fn]) {
          GradMode at = resolve(local_[site], f_.entry_[m_.stmt(site).function]);
          if (first) agreed = at;
          else if (agreed != at) agreed = GradMode::Unknown;
          first = false;
        }
        if (agreed != f_.entry_[fn]) {
          f_.entry_[fn] = agreed;
          changed = true;
        }
      }
      if (!changed) break;
    }
    for (NodeId s = 0; s < m_.stmts.size(); ++s)
      f_.gradMode_[s] = resolve(local_[s], f_.entry_[m_.stmt(s).function]);
  }

  // ---------------------------------------------------------------- evaluation contexts

  static constexpr NodeId kEvalByName = kNone - 2;

  /// `M.eval()` / `M.train()` as a statement, M a module: returns 'e' / 't' / 0.
  char modeSwitch(NodeId s) const {
    const Stmt& st = m_.stmt(s);
    if (st.kind != StmtKind::Expr || st.value == kNone || m_.expr(st.value).kind != ExprKind::Call) return 0;
    std::string_view meth = methodName(m_, st.value);
    if (meth != "eval" && meth != "train") return 0;
    NodeId recv = receiverOf(m_, st.value);
    if (recv == kNone || !f_.isModuleExpr(recv)) return 0;
    if (meth == "eval") return m_.expr(st.value).argCount == 0 ? 'e' : 0;
    // `model.train(False)` is eval.
    NodeId a = positionalArg(m_, st.value, 0);
    if (a != kNone && isFalseLiteral(m_, a)) return 'e';
    return 't';
  }

  bool encloses(NodeId outerBlockOwner, NodeId s) const {
    // True when `s` is inside the block that owns `outerBlockOwner` (same parent chain).
    if (outerBlockOwner == kNone) return true;
    for (NodeId p = s; p != kNone; p = m_.stmt(p).parent)
      if (p == outerBlockOwner) return true;
    return false;
  }

  void computeEvalContexts() {
    for (size_t fn = 0; fn < m_.functions.size(); ++fn) {
      const Function& f = m_.functions[fn];
      // Test functions assert on outputs; their memory is not the concern (ruff users silence
      // tests with per-file-ignores; oomlint does not look at them at all).
      std::string_view fname = f.name;
      bool testFunction = fname.substr(0, 5) == "test_" || fname.substr(0, 6) == "_test_";
      // Methods of a module are its API: their callers choose the grad mode.
      bool moduleMethod = f.cls >= 0 && f_.moduleClass_[static_cast<size_t>(f.cls)];
      bool byName = fn != 0 && !f.isLambda && !testFunction && !moduleMethod && names::looksLikeEvalFunction(f.name) &&
                    !(f_.fnFlags_[fn] & Facts::kReachesUpdate);
      if (byName && f.cls >= 0) {
        // unittest.TestCase methods are tests, not evaluation loops.
        for (NodeId b : items(m_, m_.classes[static_cast<size_t>(f.cls)].bases))
          if (m_.textOf(b).find("TestCase") != std::string_view::npos) byName = false;
      }
      f_.evalFunction_[fn] = byName;
      const std::vector<NodeId>& stmts = f_.fnStmts_[fn];
      NodeId opener = kNone;
      NodeId openerBlock = kNone;
      for (NodeId s : stmts) {
        if (testFunction) break;
        char sw = modeSwitch(s);
        if (sw == 'e') {
          opener = s;
          openerBlock = m_.stmt(s).parent;
          continue;
        }
        if (sw == 't') {
          opener = kNone;
          continue;
        }
        if (opener != kNone && encloses(openerBlock, s)) f_.evalOpener_[s] = opener;
        else if (byName) f_.evalOpener_[s] = kEvalByName;
      }
      // A backward/step later in an `.eval()` region means the region trains (test-time
      // adaptation, MAML): drop that region.
      if (byName) continue;
      NodeId dropFrom = kNone;
      for (auto it = stmts.rbegin(); it != stmts.rend(); ++it) {
        NodeId s = *it;
        NodeId op = f_.evalOpener_[s];
        if (op == kNone || op == kEvalByName) continue;
        bool updates = false;
        for (NodeId c : f_.stmtCalls_[s])
          if (directFlags(c) & Facts::kReachesUpdate) updates = true;
        for (NodeId c : f_.stmtCalls_[s])
          for (uint32_t t : localTargets(c))
            if (f_.fnFlags_[t] & Facts::kReachesUpdate) updates = true;
        if (updates) dropFrom = op;
        if (dropFrom == op) f_.evalOpener_[s] = kNone;
      }
    }
  }

  // ---------------------------------------------------------------- values (history, device)

  struct Binding {
    ValueFact fact;
    NodeId loop = kBoundOutsideLoops;
  };
  /// Variable path -> what is known about its value. A vector (functions bind a handful of
  /// names, and environments are copied at every branch and loop, so copies must stay cheap),
  /// with a hash index once it grows: a 100k-line function must not cost 100k² comparisons.
  class Env {
   public:
    using Item = std::pair<std::string_view, Binding>;
    const Binding* get(std::string_view key) const {
      if (index_.empty()) {
        for (const Item& kv : items_)
          if (kv.first == key) return &kv.second;
        return nullptr;
      }
      auto it = index_.find(key);
      return it == index_.end() ? nullptr : &items_[it->second].second;
    }
    Binding* get(std::string_view key) { return const_cast<Binding*>(static_cast<const Env*>(this)->get(key)); }
    void put(std::string_view key, const Binding& b) {
      if (Binding* old = get(key)) *old = b;
      else add(key, b);
    }
    /// Appends a key known to be absent.
    void add(std::string_view key, const Binding& b) {
      items_.emplace_back(key, b);
      if (!index_.empty()) index_.emplace(key, static_cast<uint32_t>(items_.size() - 1));
      else if (items_.size() > kIndexFrom) reindex();
    }
    void remove(std::string_view key) {
      size_t before = items_.size();
      items_.erase(std::remove_if(items_.begin(), items_.end(), [&](const Item& kv) { return kv.first == key; }), items_.end());
      if (items_.size() != before && !index_.empty()) reindex();
    }
    void reserve(size_t n) { items_.reserve(n); }
    std::vector<Item>::iterator begin() { return items_.begin(); }
    std::vector<Item>::iterator end() { return items_.end(); }
    std::vector<Item>::const_iterator begin() const { return items_.begin(); }
    std::vector<Item>::const_iterator end() const { return items_.end(); }
    size_t size() const { return items_.size(); }

   private:
    static constexpr size_t kIndexFrom = 48;
    void reindex() {
      index_.clear();
      for (size_t i = 0; i < items_.size(); ++i) index_.emplace(items_[i].first, static_cast<uint32_t>(i));
    }
    std::vector<Item> items_;
    std::unordered_map<std::string_view, uint32_t> index_;
  };


  /// Join of two environments at a control-flow merge.
  static Env merge(const Env& a, const Env& b) {
    Env out;
    out.reserve(std::max(a.size(), b.size()));
    for (const auto& kv : a) {
      const Binding* other = b.get(kv.first);
      if (!other) {
        // Bound on one path only: facts unknown, lifetime ambiguous unless it was a loop-free binding.
        Binding u;
        u.loop = kBoundAmbiguous;
        out.add(kv.first, u);
        continue;
      }
      Binding j;
      j.fact.history = joinTri(kv.second.fact.history, other->fact.history);
      j.fact.device = joinTri(kv.second.fact.device, other->fact.device);
      j.fact.scalarLoss = kv.second.fact.scalarLoss && other->fact.scalarLoss;
      j.loop = kv.second.loop == other->loop ? kv.second.loop : kBoundAmbiguous;
      out.add(kv.first, j);
    }
    for (const auto& kb : b) {
      bool seen = a.get(kb.first) != nullptr;
      if (!seen) {
        Binding u;
        u.loop = kBoundAmbiguous;
        out.add(kb.first, u);
      }
    }
    return out;
  }

  NodeId currentLoop_ = kBoundOutsideLoops;
  int loopDepth_ = 0;

  GradMode modeAt(NodeId stmt) const { return stmt == kNone ? GradMode::Unknown : f_.gradMode_[stmt]; }

  ValueFact eval(Env& env, NodeId e) {
    if (e == kNone) return {};
    const Expr& x = m_.expr(e);
    ValueFact out;
    switch (x.kind) {
      case ExprKind::Name: {
        if (Binding* b = env.get(x.text)) {
          out = b->fact;
          f_.useBind_[e] = b->loop;
        } else if (f_.gpuNames_.count(x.text)) {
          out.history = Tri::No;
        }
        break;
      }
      case ExprKind::Attribute: {
        ValueFact base = eval(env, x.lhs);
        std::string_view key = f_.pathKey(e);
        if (x.text == "data") {
          out.history = Tri::No;
          out.device = base.device;
        } else if (isNonTensorAttribute(x.text)) {
          out.history = Tri::No;
          out.device = Tri::No;
        } else if (x.text == "grad") {
          out.history = Tri::No;
          out.device = base.device;
        } else if (Binding* b = key.empty() ? nullptr : env.get(key)) {
          out = b->fact;
        } else if (base.history == Tri::Yes) {
          out.history = Tri::Yes;  // `outputs.loss`, `out.logits`
          out.device = base.device;
        }
        break;
      }
      case ExprKind::Subscript: {
        ValueFact base = eval(env, x.lhs);
        eval(env, x.rhs);
        out.history = base.history;
        out.device = base.device;
        out.scalarLoss = false;
        break;
      }
      case ExprKind::Call: out = evalCall(env, e); break;
      case ExprKind::BinOp: {
        ValueFact l = eval(env, x.lhs), r = eval(env, x.rhs);
        out.history = anyYes(l.history, r.history);
        out.device = anyYes(l.device, r.device);
        out.scalarLoss = (l.scalarLoss && (r.history == Tri::No)) || (r.scalarLoss && l.history == Tri::No) ||
                         (l.scalarLoss && r.scalarLoss);
        if (modeAt(x.stmt) == GradMode::Disabled) out.history = Tri::No;
        break;
      }
      case ExprKind::UnaryOp: {
        ValueFact v = eval(env, x.lhs);
        out = v;
        if (m_.textOf(e).substr(0, 3) == "not") out = ValueFact{Tri::No, Tri::No, false};
        break;
      }
      case ExprKind::Compare:
      case ExprKind::BoolOp:
        for (const Arg& a : argsOf(m_, x)) eval(env, a.value);
        out.history = Tri::No;
        break;
      case ExprKind::Number:
      case ExprKind::String:
      case ExprKind::Bool:
      case ExprKind::NoneLit:
        out.history = Tri::No;
        out.device = Tri::No;
        break;
      case ExprKind::Container: {
        Tri h = Tri::No, d = Tri::No;
        bool any = false;
        for (const Arg& a : argsOf(m_, x)) {
          ValueFact v = eval(env, a.value);
          h = anyYes(h, v.history);
          d = anyYes(d, v.device);
          any = true;
        }
        out.history = any ? h : Tri::No;
        out.device = any ? d : Tri::No;
        // Comprehensions bind names we do not track: stay unknown rather than claim No.
        if (m_.textOf(e).find(" for ") != std::string_view::npos && out.history == Tri::No) out.history = Tri::Unknown;
        break;
      }
      case ExprKind::Conditional: {
        Tri h = Tri::Unknown, d = Tri::Unknown;
        bool first = true;
        uint32_t i = 0;
        for (const Arg& a : argsOf(m_, x)) {
          ValueFact v = eval(env, a.value);
          if (i++ == 1) continue;  // the condition
          h = first ? v.history : joinTri(h, v.history);
          d = first ? v.device : joinTri(d, v.device);
          first = false;
        }
        out.history = h;
        out.device = d;
        break;
      }
      case ExprKind::Lambda:
        out.history = Tri::No;
        out.device = Tri::No;
        break;
      case ExprKind::Other:
        for (const Arg& a : argsOf(m_, x)) eval(env, a.value);
        break;
    }
    f_.values_[e] = out;
    return out;
  }

  ValueFact evalCall(Env& env, NodeId e) {
    const Expr& x = m_.expr(e);
    ValueFact callee;
    NodeId recv = receiverOf(m_, e);
    if (recv != kNone) callee = eval(env, recv);
    else if (x.lhs != kNone) eval(env, x.lhs);
    Tri argHist = Tri::No, argDev = Tri::No;
    bool anyArg = false;
    for (const Arg& a : argsOf(m_, x)) {
      ValueFact v = eval(env, a.value);
      argHist = anyYes(argHist, v.history);
      argDev = anyYes(argDev, v.device);
      anyArg = true;
    }
    if (!anyArg) argHist = argDev = Tri::No;
    GradMode mode = modeAt(x.stmt);
    const std::string& canon = m_.canonical(e);
    std::string_view meth = methodName(m_, e);
    std::string_view name = calleeName(m_, e);
    ValueFact out;

    if (!meth.empty() && recv != kNone && canon.empty()) {
      // Tensor (or object) method.
      if (isNonDifferentiableMethod(meth)) {
        out.history = Tri::No;
        out.device = leavesDevice(meth) ? Tri::No : callee.device;
        return out;
      }
      if (meth == "cpu") {
        out.history = callee.history;
        out.device = Tri::No;
        out.scalarLoss = callee.scalarLoss;
        return out;
      }
      if (meth == "cuda" || meth == "to") {
        out.history = callee.history;
        out.scalarLoss = callee.scalarLoss;
        NodeId dev = meth == "to" ? positionalArg(m_, e, 0) : kNone;
        if (meth == "to" && dev == kNone) dev = keywordArg(m_, e, "device");
        if (meth == "cuda" || f_.isGpuDeviceExpr(dev)) out.device = Tri::Yes;
        else if (dev != kNone && m_.expr(dev).kind == ExprKind::String && m_.textOf(dev).find("cpu") != std::string_view::npos)
          out.device = Tri::No;
        else out.device = callee.device;
        return out;
      }
      if (f_.isForwardCall(e)) return forwardResult(e, mode, argDev);
      if (f_.isLossCall(e)) return lossResult(mode, argHist, argDev);
      if (callee.history == Tri::Yes || callee.history == Tri::No) {
        // A method on a tensor whose history is known keeps it (sum, mean, view, clone, ...).
        out.history = mode == GradMode::Disabled ? Tri::No : anyYes(callee.history, argHist);
        out.device = callee.device;
        out.scalarLoss = callee.scalarLoss && (meth == "mean" || meth == "sum" || meth == "float" ||
                                               meth == "double" || meth == "squeeze" || meth == "clone");
        if (callee.history == Tri::No && argHist != Tri::No) out.history = mode == GradMode::Disabled ? Tri::No : Tri::Unknown;
        return out;
      }
      return out;  // unknown receiver, unknown method
    }
    if (canon.empty() && isStrippingBuiltin(name) && m_.expr(x.lhs).kind == ExprKind::Name) {
      out.history = Tri::No;
      out.device = Tri::No;
      return out;
    }
    if (f_.isForwardCall(e)) return forwardResult(e, mode, argDev);
    if (f_.isLossCall(e)) return lossResult(mode, argHist, argDev);
    if (canon == "torch.autograd.grad") {
      // Gradients carry history only when asked to (higher-order gradients).
      out.history = isTrueLiteral(m_, keywordArg(m_, e, "create_graph")) ? argHist : Tri::No;
      out.device = argDev;
      return out;
    }
    if (startsWith(canon, "torch.")) {
      std::string_view last = names::lastComponent(canon);
      if (isTensorFactory(last)) {
        out.history = Tri::No;
        NodeId dev = keywordArg(m_, e, "device");
        out.device = dev != kNone && f_.isGpuDeviceExpr(dev) ? Tri::Yes : (dev == kNone ? Tri::No : Tri::Unknown);
        if (endsWith(last, "_like")) out.device = argDev;
        return out;
      }
      if (isNonDifferentiableMethod(last) || startsWith(canon, "torch.cuda.")) {
        out.history = Tri::No;
        out.device = argDev;
        return out;
      }
      if (std::isupper(static_cast<unsigned char>(last.empty() ? 'a' : last[0]))) return out;  // classes
      out.history = mode == GradMode::Disabled ? Tri::No : argHist;
      out.device = argDev;
      return out;
    }
    return out;  // a function we know nothing about
  }

  ValueFact forwardResult(NodeId call, GradMode mode, Tri argDev) const {
    ValueFact out;
    out.history = mode == GradMode::Disabled ? Tri::No : (mode == GradMode::Enabled ? Tri::Yes : Tri::Unknown);
    NodeId callee = m_.expr(call).lhs;
    std::string_view key = f_.pathKey(callee);
    if (m_.expr(callee).kind == ExprKind::Attribute && m_.expr(callee).text == "forward")
      key = f_.pathKey(m_.expr(callee).lhs);
    out.device = (argDev == Tri::Yes || (!key.empty() && f_.modulesOnGpu_.count(key))) ? Tri::Yes : Tri::Unknown;
    return out;
  }

  static ValueFact lossResult(GradMode mode, Tri argHist, Tri argDev) {
    ValueFact out;
    out.history = mode == GradMode::Disabled ? Tri::No : argHist;
    out.device = argDev;
    out.scalarLoss = true;
    return out;
  }

  /// True when the assignment's value reads the target itself (`total = total + x`).
  bool readsItself(NodeId target, NodeId value) const {
    std::string_view key = f_.pathKey(target);
    if (key.empty() || value == kNone) return false;
    // Expressions are stored children first, so the value's subtree is the contiguous run of ids
    // ending at `value` whose spans lie inside it.
    const Span& vs = m_.expr(value).span;
    for (NodeId e = value + 1; e-- > 0;) {
      const Expr& x = m_.expr(e);
      if (x.span.begin < vs.begin || x.span.end > vs.end) break;
      if ((x.kind == ExprKind::Name || x.kind == ExprKind::Attribute) && f_.pathKey(e) == key) return true;
    }
    return false;
  }

  void bind(Env& env, NodeId target, const ValueFact& v, NodeId valueExpr, bool update) {
    if (target == kNone) return;
    const Expr& t = m_.expr(target);
    if (t.kind == ExprKind::Container) {
      const Expr* ve = valueExpr != kNone ? &m_.expr(valueExpr) : nullptr;
      bool pairwise = ve && ve->kind == ExprKind::Container && ve->argCount == t.argCount;
      uint32_t i = 0;
      for (const Arg& a : argsOf(m_, t)) {
        if (pairwise) {
          NodeId ve2 = m_.args[ve->firstArg + i].value;
          bind(env, a.value, f_.values_[ve2], ve2, false);
        } else {
          ValueFact elem = v;
          elem.scalarLoss = false;
          bind(env, a.value, elem, kNone, false);
        }
        ++i;
      }
      return;
    }
    std::string_view key = f_.pathKey(target);
    if (key.empty()) return;
    Binding* old = env.get(key);
    if (t.kind == ExprKind::Name) f_.useBind_[target] = old ? old->loop : kBoundOutsideLoops;
    Binding b;
    b.fact = v;
    b.loop = (update && old) ? old->loop : (update ? kBoundOutsideLoops : currentLoop_);
    if (t.kind == ExprKind::Attribute && !update) b.loop = kBoundOutsideLoops;  // attributes outlive frames
    env.put(key, b);
  }

  void walk(Env& env, List body) {
    for (NodeId s : items(m_, body)) walkStmt(env, s);
  }

  void walkLoopBody(Env& env, NodeId loop) {
    const Stmt& st = m_.stmt(loop);
    NodeId savedLoop = currentLoop_;
    ++loopDepth_;
    currentLoop_ = loop;
    Env before = env;
    auto once = [&](Env& e) {
      if (st.kind == StmtKind::For) {
        ValueFact it = f_.values_[st.value];
        ValueFact elem;
        NodeId iter = unwrapIterable(m_, st.value);
        if (iter != kNone && isLoaderExpr(iter)) elem.history = Tri::No;
        else if (iter != kNone && m_.expr(iter).kind == ExprKind::Call && calleeName(m_, iter) == "range") {
          elem.history = Tri::No;
          elem.device = Tri::No;
        } else if (it.history == Tri::Yes) {
          elem.history = Tri::Yes;
          elem.device = it.device;
        }
        bind(e, st.target, elem, kNone, false);
      } else {
        eval(e, st.value);
      }
      walk(e, st.body);
    };
    Env first = env;
    once(first);
    if (loopDepth_ <= 3) {
      // Second pass sees what the previous iteration left (carried state).
      Env carried = merge(before, first);
      for (auto& kv : carried) {
        // Names bound before the loop keep their binding site even if the body reassigned them.
        const Binding* kb = before.get(kv.first);
        if (kb && kv.second.loop == kBoundAmbiguous) kv.second.loop = kb->loop;
      }
      once(carried);
      first = std::move(carried);
    }
    env = merge(before, first);
    for (auto& kv : env) {
      const Binding* kb = before.get(kv.first);
      if (kb && kv.second.loop == kBoundAmbiguous) kv.second.loop = kb->loop;
    }
    walk(env, st.orelse);
    --loopDepth_;
    currentLoop_ = savedLoop;
  }

  void walkStmt(Env& env, NodeId s) {
    const Stmt& st = m_.stmt(s);
    switch (st.kind) {
      case StmtKind::Assign: {
        ValueFact v = eval(env, st.value);
        for (NodeId t : items(m_, st.targets)) {
          // Evaluate subscript/attribute targets' bases so their facts exist.
          const Expr& te = m_.expr(t);
          if (te.kind == ExprKind::Subscript) {
            eval(env, te.lhs);
            eval(env, te.rhs);
            continue;
          }
          if (te.kind == ExprKind::Attribute) eval(env, te.lhs);
          bind(env, t, v, st.value, readsItself(t, st.value));
        }
        break;
      }
      case StmtKind::AugAssign: {
        ValueFact v = eval(env, st.value);
        ValueFact cur = eval(env, st.target);
        const Expr& te = m_.expr(st.target);
        if (te.kind == ExprKind::Name || te.kind == ExprKind::Attribute) {
          ValueFact next;
          next.history = modeAt(s) == GradMode::Disabled ? cur.history : anyYes(cur.history, v.history);
          next.device = anyYes(cur.device, v.device);
          bind(env, st.target, next, kNone, true);
        }
        break;
      }
      case StmtKind::For:
        eval(env, st.value);
        walkLoopBody(env, s);
        break;
      case StmtKind::While:
        walkLoopBody(env, s);
        break;
      case StmtKind::If: {
        eval(env, st.value);
        Env other = env;
        walk(env, st.body);
        walk(other, st.orelse);
        env = merge(env, other);
        break;
      }
      case StmtKind::With:
        for (NodeId t : items(m_, st.targets)) eval(env, t);
        walk(env, st.body);
        break;
      case StmtKind::Try: {
        walk(env, st.body);
        Env joined = env;
        for (uint32_t h = 0; h < st.handlerCount; ++h) {
          const Handler& hd = m_.handlers[st.firstHandler + h];
          if (hd.type != kNone) eval(env, hd.type);
          Env branch = env;
          walk(branch, hd.body);
          joined = merge(joined, branch);
        }
        walk(env, st.orelse);
        env = st.handlerCount ? merge(env, joined) : env;
        walk(env, st.finalbody);
        break;
      }
      case StmtKind::Delete:
        for (NodeId t : items(m_, st.targets)) {
          std::string_view key = f_.pathKey(t);
          if (!key.empty()) env.remove(key);
          else eval(env, t);
        }
        break;
      case StmtKind::Expr: {
        eval(env, st.value);
        // `h.detach_()` / `x.requires_grad_(False)` strip history in place.
        std::string_view meth = methodName(m_, st.value);
        if (meth == "detach_" || (meth == "requires_grad_" && isFalseLiteral(m_, positionalArg(m_, st.value, 0)))) {
          std::string_view key = f_.pathKey(receiverOf(m_, st.value));
          if (Binding* b = key.empty() ? nullptr : env.get(key)) b->fact.history = Tri::No;
        }
        break;
      }
      case StmtKind::FunctionDef:
      case StmtKind::ClassDef:
        for (NodeId t : items(m_, st.targets)) eval(env, t);
        if (st.kind == StmtKind::ClassDef) walk(env, st.body);
        break;
      default:
        if (st.value != kNone) eval(env, st.value);
        for (NodeId t : items(m_, st.targets))
          if (t != st.value) eval(env, t);
        break;
    }
  }

  void computeValues() {
    for (size_t fn = 0; fn < m_.functions.size(); ++fn) {
      const Function& f = m_.functions[fn];
      Env env;
      currentLoop_ = kBoundOutsideLoops;
      loopDepth_ = 0;
      if (f.isLambda) continue;  // lambda bodies are evaluated where they appear
      // Parameters are bound before any loop of the function; their values are unknown.
      for (uint32_t i = 0; i < f.paramCount; ++i) env.put(m_.params[f.firstParam + i].name, Binding{});
      walk(env, f.body);
    }
  }

  bool isLoaderExpr(NodeId e) const {
    std::string_view key = f_.pathKey(e);
    if (!key.empty()) return f_.loaderNames_.count(key) || f_.looksLike(key, Facts::kNamedLoader);
    const Expr& x = m_.expr(e);
    if (x.kind == ExprKind::Call) {
      const std::string& canon = m_.canonical(e);
      if (endsWith(canon, "DataLoader")) return true;
      std::string_view callee = calleeName(m_, e);
      return names::hasWord(callee, "loader") || names::hasWord(callee, "dataloader") || names::hasWord(callee, "batches");
    }
    return false;
  }

  void computeLoopRoles() {
    for (NodeId s = 0; s < m_.stmts.size(); ++s) {
      const Stmt& st = m_.stmt(s);
      if (st.kind != StmtKind::For && st.kind != StmtKind::While) continue;
      uint8_t role = 0;
      if (f_.subtreeFlags_[s] & (Facts::kReachesBackward | Facts::kReachesStep)) role |= loop_role::kTraining;
      if (st.kind == StmtKind::For) {
        NodeId iter = unwrapIterable(m_, st.value);
        bool data = iter != kNone && isLoaderExpr(iter);
        // `for batch in ...`, `for i, batch in ...`: named for batches.
        if (!data && st.target != kNone && m_.textOf(st.target).find("batch") != std::string_view::npos) data = true;
        if (data) role |= loop_role::kData;
      }
      if (!(role & loop_role::kTraining) && f_.inEvalContext(s)) role |= loop_role::kEval;
      f_.loopRole_[s] = role;
    }
  }
};

// ------------------------------------------------------------------ Facts

Facts::Facts(const Module& m) : m_(m) {
  FactsBuilder b(*this);
  b.build();
}

bool Facts::within(NodeId inner, NodeId outer) const {
  for (NodeId p = inner; p != kNone; p = m_.stmt(p).parent)
    if (p == outer) return true;
  return false;
}

std::string_view Facts::pathKey(NodeId e) const {
  if (e == kNone) return {};
  const Expr& x = m_.expr(e);
  if (x.kind == ExprKind::Name) return x.text;
  if (x.kind != ExprKind::Attribute) return {};
  if (m_.lang == Lang::Cpp) return cppKeys_[e];
  // The source text of a plain dotted chain is its own key (no spaces, no calls).
  for (NodeId p = x.lhs; p != kNone; p = m_.expr(p).lhs) {
    const Expr& px = m_.expr(p);
    if (px.kind == ExprKind::Name) break;
    if (px.kind != ExprKind::Attribute) return {};
  }
  std::string_view t = m_.textOf(e);
  for (char c : t)
    if (c == ' ' || c == '\n' || c == '\t' || c == '\\' || c == '(' || c == '#') return {};
  return t;
}

const std::vector<NodeId>& Facts::callsOf(NodeId stmt) const { return stmtCalls_[stmt]; }

bool Facts::isModuleExpr(NodeId e) const {
  if (e == kNone) return false;
  const Expr& x = m_.expr(e);
  if (x.hint & type_hint::kLossModule) return false;
  if (x.hint & type_hint::kModule) return true;
  std::string_view key = pathKey(e);
  if (!key.empty() && lossModuleNames_.count(key)) return false;
  if (!key.empty() && moduleNames_.count(key)) return true;
  if (x.kind == ExprKind::Name) {
    if (x.canonical != 0) return false;  // an imported name is a function or class, not an instance
    if (x.text == "self") {
      NodeId st = x.stmt;
      if (st == kNone) return false;
      uint32_t fn = m_.stmt(st).function;
      for (int guard = 0; guard < 64; ++guard) {
        if (m_.functions[fn].cls >= 0) return isModuleClass(m_.functions[fn].cls);
        if (fn == 0) break;
        fn = m_.functions[fn].parent;
      }
      return false;
    }
    return looksLike(x.text, kNamedModule) && !looksLike(x.text, kNamedLoss);
  }
  if (x.kind == ExprKind::Attribute) {
    const Expr& base = m_.expr(x.lhs);
    if (x.text == "module" && isModuleExpr(x.lhs)) return true;  // DDP / DataParallel wrapper
    bool baseIsSelfOrModule = (base.kind == ExprKind::Name && base.text == "self") || isModuleExpr(x.lhs);
    return baseIsSelfOrModule && looksLike(x.text, kNamedModule) && !looksLike(x.text, kNamedLoss);
  }
  return false;
}

bool Facts::isForwardCall(NodeId call) const {
  const Expr& c = m_.expr(call);
  if (c.kind != ExprKind::Call || c.lhs == kNone) return false;
  const Expr& callee = m_.expr(c.lhs);
  if (callee.kind == ExprKind::Attribute && callee.text == "forward") return isModuleExpr(callee.lhs);
  return isModuleExpr(c.lhs);
}

bool Facts::isLossCall(NodeId call) const {
  const Expr& c = m_.expr(call);
  if (c.kind != ExprKind::Call || c.lhs == kNone) return false;
  const std::string& canon = m_.canonical(call);
  if (startsWith(canon, "torch.nn.functional.") || startsWith(canon, "torch.")) {
    return isLossFunctionName(names::lastComponent(canon));
  }
  if (m_.expr(c.lhs).hint & type_hint::kLossModule) return true;
  std::string_view key = pathKey(c.lhs);
  if (key.empty()) return false;
  return lossModuleNames_.count(key) || looksLike(key, kNamedLoss);
}

bool Facts::isBackwardCall(NodeId call) const {
  if (methodName(m_, call) == "backward") return true;
  return m_.canonical(call) == "torch.autograd.backward";
}

bool Facts::isAutogradGradCall(NodeId call) const {
  const std::string& c = m_.canonical(call);
  return c == "torch.autograd.grad";
}

bool Facts::isOptimizerStep(NodeId call) const {
  if (methodName(m_, call) != "step") return false;
  NodeId recv = receiverOf(m_, call);
  if (recv == kNone) return false;
  const Expr& r = m_.expr(recv);
  NodeId base = r.kind == ExprKind::Subscript ? r.lhs : recv;
  if (m_.expr(base).hint & type_hint::kOptimizer) return true;
  std::string_view key = pathKey(base);
  if (key.empty()) return false;
  return optimizerNames_.count(key) || looksLike(key, kNamedOptimizer);
}

bool Facts::looksLike(std::string_view name, uint8_t convention) const {
  auto [it, added] = namedAs_.try_emplace(name, 0);
  if (added) {
    it->second = (names::looksLikeModule(name) ? kNamedModule : 0) | (names::looksLikeLossFn(name) ? kNamedLoss : 0) |
                 (names::looksLikeOptimizer(name) ? kNamedOptimizer : 0) | (names::looksLikeLoader(name) ? kNamedLoader : 0) |
                 (names::looksLikeDevice(name) ? kNamedDevice : 0);
  }
  return (it->second & convention) != 0;
}

bool Facts::inEvalContext(NodeId stmt) const { return evalOpener_[stmt] != kNone; }

bool Facts::isLossModuleName(std::string_view name) const { return lossModuleNames_.count(name) != 0; }

bool Facts::isGpuDeviceExpr(NodeId e) const {
  if (e == kNone) return false;
  const Expr& x = m_.expr(e);
  if (x.kind == ExprKind::String) return m_.textOf(e).find("cuda") != std::string_view::npos;
  if (m_.canonical(e) == "torch.kCUDA") return true;  // C++ torch::kCUDA
  if (x.kind == ExprKind::Call) {
    const std::string& canon = m_.canonical(e);
    if (canon == "torch.device") return isGpuDeviceExpr(positionalArg(m_, e, 0)) || m_.textOf(e).find("cuda") != std::string_view::npos;
    return canon == "torch.cuda.current_device";
  }
  std::string_view key = pathKey(e);
  if (key.empty()) return false;
  if (gpuNames_.count(key)) return true;
  return fileMentionsCuda_ && looksLike(key, kNamedDevice);
}

bool Facts::outlivesIteration(NodeId target, NodeId loop) const {
  if (target == kNone || loop == kNone) return false;
  const Expr& t = m_.expr(target);
  switch (t.kind) {
    case ExprKind::Name: {
      NodeId b = useBind_[target];
      if (b == kBoundAmbiguous) return false;
      if (b == kBoundOutsideLoops) return true;
      // Bound inside `loop` (or a loop nested in it): a fresh object each iteration.
      return !within(b, loop);
    }
    case ExprKind::Attribute: {
      const Expr& base = m_.expr(t.lhs);
      if (base.kind == ExprKind::Name && base.text == "self") return true;
      return outlivesIteration(t.lhs, loop);
    }
    case ExprKind::Subscript: return outlivesIteration(t.lhs, loop);
    default: return false;
  }
}

}  // namespace oomlint
