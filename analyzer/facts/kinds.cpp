// Pass 2, kinds: what each path denotes, from the strongest evidence found for it.
//
// Evidence, strongest first: a declared C++ type; a constructor (`nn.Linear(...)`, a module class
// of this file, `AutoModel.from_pretrained`, `torch.optim.AdamW`, `StepLR`, `DataLoader`); use
// (`.eval()`, `.parameters()`, `.training_step()` are asked only of modules; `.param_groups` only
// of optimizers); naming conventions last (names.h). Paths are scoped: `self.x` to a class family,
// other names to the function that binds them (looked up through enclosing functions to the
// module). Two different kinds at the same strength leave the path unknown.
#include <algorithm>

#include "facts/builder.h"
#include "facts/names.h"
#include "facts/torch_api.h"

namespace oomlint {

using namespace torch_api;

namespace {

bool isSelfPath(std::string_view p) { return p.size() > 5 && p.substr(0, 5) == "self."; }

bool isModuleBaseText(std::string_view text, const std::string& canon) {
  std::string_view last = names::lastComponent(canon.empty() ? text : std::string_view(canon));
  if (canon == "torch.nn.Module" || last == "Module" || endsWith(text, "nn.Module")) return true;
  if (startsWith(canon, "torch.nn.") && isUpperInitial(last) && !isModuleCollectionCanonical(canon)) return true;
  return endsWith(last, "LightningModule") || endsWith(last, "PreTrainedModel") || last == "ModelMixin" ||
         endsWith(last, "Module") || last == "HyperModule";
}

/// Model libraries whose capitalised classes ending in a model word are modules.
bool isModelLibrary(std::string_view canon) {
  for (std::string_view p : {"transformers.", "diffusers.", "timm.", "torchvision.models.", "peft.", "open_clip.", "torchaudio.models."})
    if (startsWith(canon, p)) return true;
  return false;
}

bool looksLikeModelClass(std::string_view last) {
  for (std::string_view w : {"Model", "For", "Net", "Encoder", "Decoder", "Transformer", "UNet", "VAE", "Autoencoder", "Block",
                             "Layer", "Head", "Embedding", "Attention"})
    if (last.find(w) != std::string_view::npos) return true;
  return false;
}

/// Methods that return the module they are called on.
bool returnsReceiverModule(std::string_view meth) {
  for (std::string_view k : {"to", "cuda", "cpu", "half", "float", "double", "bfloat16", "train", "eval", "requires_grad_", "type",
                             "share_memory", "apply", "to_empty", "compile", "xpu"})
    if (meth == k) return true;
  return false;
}

/// Methods only modules answer.
bool moduleOnlyMethod(std::string_view meth) {
  for (std::string_view k : {"eval", "train", "parameters", "named_parameters", "modules", "named_modules", "children",
                             "named_children", "training_step", "register_forward_hook", "register_forward_pre_hook",
                             "register_full_backward_hook", "register_full_backward_pre_hook", "requires_grad_",
                             "get_submodule", "named_buffers", "buffers", "generate"})
    if (meth == k) return true;
  return false;
}

Facts::KindFact make(Kind k, Evidence e, int32_t cls = -1, NodeId ctor = kNone) {
  Facts::KindFact f;
  f.kind = k;
  f.evidence = e;
  f.cls = cls;
  f.ctor = ctor;
  return f;
}

}  // namespace

void FactsBuilder::classifyClasses() {
  size_t nc = m_.classes.size();
  f_.moduleClass_.assign(nc, false);
  std::unordered_map<std::string_view, std::vector<size_t>> named;  // classes by name (names may repeat)
  for (size_t c = 0; c < nc; ++c) named[m_.classes[c].name].push_back(c);
  bool changed = true;
  for (int round = 0; changed && round < 8; ++round) {
    changed = false;
    for (size_t c = 0; c < nc; ++c) {
      if (f_.moduleClass_[c]) continue;
      for (NodeId b : items(m_, m_.classes[c].bases)) {
        std::string_view text = m_.textOf(b);
        bool isModule = isModuleBaseText(text, m_.canonical(b));
        if (!isModule && f_.project_ && !m_.canonical(b).empty()) {
          const ImportedClass* base = f_.project_->cls(m_.canonical(b));  // a module class of another file
          isModule = base && base->module;
        }
        if (!isModule) {
          auto same = named.find(names::lastComponent(text));
          if (same != named.end())
            for (size_t o : same->second)
              if (o != c && f_.moduleClass_[o]) isModule = true;
        }
        if (isModule) {
          f_.moduleClass_[c] = true;
          changed = true;
          break;
        }
      }
    }
  }
}

void FactsBuilder::putKind(uint32_t fn, std::string_view path, Kind kind, Evidence ev, int32_t cls, NodeId ctor) {
  if (path.empty() || ev == Evidence::None) return;
  uint64_t scope;
  if (isSelfPath(path)) {
    int32_t c = f_.classOfFunction(fn);
    if (c < 0) return;
    scope = Facts::scopeKey(static_cast<uint32_t>(f_.familyRoot_[static_cast<size_t>(c)]), true);
  } else {
    // Bind where the name already lives (a global assigned at module level, a parameter);
    // otherwise in this function.
    scope = Facts::scopeKey(fn, false);
    for (uint32_t s = fn;; s = m_.functions[s].parent) {
      auto it = f_.kinds_.find(Facts::scopeKey(s, false));
      if (it != f_.kinds_.end() && it->second.count(path)) {
        scope = Facts::scopeKey(s, false);
        break;
      }
      if (s == 0) break;
    }
  }
  Facts::KindFact& slot = f_.kinds_[scope][path];
  // The class, learnt from weaker evidence of the same kind (a parameter's call sites agree on a
  // `DualEncoder`, where its own uses said only "a module"): its methods are then known.
  if (slot.kind == kind && kind != Kind::Unknown && slot.cls < 0 && cls >= 0) {
    slot.cls = cls;
    kindsChanged_ = true;
  }
  if (ev < slot.evidence) return;
  if (ev > slot.evidence || slot.kind == Kind::Unknown) {
    bool poisoned = ev == slot.evidence && slot.kind == Kind::Unknown;
    if (poisoned) return;
    slot = make(kind, ev, cls, ctor);
    kindsChanged_ = true;
    return;
  }
  if (slot.kind != kind) {
    slot.kind = Kind::Unknown;  // two kinds, same strength: unknown, and it stays so
    kindsChanged_ = true;
  }
}

Facts::KindFact FactsBuilder::kindOfValue(NodeId value) const { return f_.kindFactOf(value); }

void FactsBuilder::bindKinds(uint32_t fn, NodeId target, NodeId value, const Facts::KindFact* given) {
  if (target == kNone) return;
  const Expr& t = m_.expr(target);
  if (t.kind == ExprKind::Container) {
    const Expr& v = m_.expr(value);
    std::vector<Facts::KindFact> elems;
    if (value != kNone && v.kind == ExprKind::Container && v.argCount == t.argCount) {
      for (const Arg& a : argsOf(m_, v)) elems.push_back(f_.kindFactOf(a.value));
    } else if (value != kNone && v.kind == ExprKind::Call) {
      std::string_view meth = methodName(m_, value);
      const std::string& canon = m_.canonical(value);
      if (meth == "prepare" || meth == "setup" || canon == "accelerate.Accelerator.prepare") {
        // `model, opt, dl = accelerator.prepare(model, opt, dl)`: each output is its input, wrapped.
        for (const Arg& a : argsOf(m_, v))
          if (a.keyword.empty()) elems.push_back(f_.kindFactOf(a.value));
      } else if (canon == "deepspeed.initialize") {
        // `engine, optimizer, loader, scheduler = deepspeed.initialize(...)`
        elems = {make(Kind::Module, Evidence::Constructed), make(Kind::Optimizer, Evidence::Constructed),
                 make(Kind::Loader, Evidence::Constructed), make(Kind::Scheduler, Evidence::Constructed)};
      }
    }
    uint32_t i = 0;
    for (const Arg& a : argsOf(m_, t)) {
      if (i < elems.size()) bindKinds(fn, a.value, kNone, &elems[i]);
      ++i;
    }
    return;
  }
  std::string_view key = f_.pathKey(target);
  if (key.empty()) return;
  Facts::KindFact k = given ? *given : kindOfValue(value);
  if (k.evidence == Evidence::None) return;
  putKind(fn, key, k.kind, k.evidence, k.cls, k.ctor);
}

void FactsBuilder::collectKinds() {
  // `self.<method>` denotes a function of the class.
  for (uint32_t fn = 1; fn < m_.functions.size(); ++fn) {
    const Function& f = m_.functions[fn];
    if (f.cls < 0 || f.isLambda) continue;
    std::string_view key = f_.cppKeyText_.emplace_back("self." + std::string(f.name));
    putKind(fn, key, Kind::Function, Evidence::Declared);
  }
  // Use: methods only modules (optimizers, schedulers ...) answer. `.zero_grad()` and `.to()`
  // are asked of tensors and optimizers too: they count for a receiver that is also called.
  std::unordered_set<std::string_view> called, stepped;
  for (NodeId e = 0; e < m_.exprs.size(); ++e) {
    const Expr& x = m_.expr(e);
    if (x.kind != ExprKind::Call) continue;
    std::string_view callee = f_.pathKey(x.lhs);
    if (!callee.empty()) called.insert(callee);
    if (methodName(m_, e) == "step") stepped.insert(f_.pathKey(receiverOf(m_, e)));
  }
  for (NodeId e = 0; e < m_.exprs.size(); ++e) {
    const Expr& x = m_.expr(e);
    if (x.stmt == kNone) continue;
    uint32_t fn = m_.stmt(x.stmt).function;
    if (x.kind == ExprKind::Attribute && (x.text == "param_groups")) {
      putKind(fn, f_.pathKey(x.lhs), Kind::Optimizer, Evidence::Used);
      continue;
    }
    if (x.kind != ExprKind::Call) continue;
    NodeId recv = receiverOf(m_, e);
    std::string_view key = f_.pathKey(recv);
    std::string_view meth = methodName(m_, e);
    // `self.model[key].eval()`, `nets["G"].parameters()`: a collection of modules.
    if (key.empty() && recv != kNone && m_.expr(recv).kind == ExprKind::Subscript && moduleOnlyMethod(meth)) {
      std::string_view holder = f_.pathKey(m_.expr(recv).lhs);
      if (!holder.empty() && holder != "self" && f_.kindFactOf(m_.expr(recv).lhs).evidence < Evidence::Used)
        putKind(fn, holder, Kind::ModuleCollection, Evidence::Used);
      continue;
    }
    if (key.empty() || key == "self") continue;
    if (moduleOnlyMethod(meth)) {
      if (f_.kindFactOf(recv).kind == Kind::Class) continue;
      putKind(fn, key, Kind::Module, Evidence::Used);
    } else if (meth == "zero_grad" || meth == "to" || meth == "cuda") {
      if (called.count(key)) putKind(fn, key, Kind::Module, Evidence::Used);
      else if (meth == "zero_grad" && stepped.count(key)) putKind(fn, key, Kind::Optimizer, Evidence::Used);
    } else if (meth == "add_param_group") {
      putKind(fn, key, Kind::Optimizer, Evidence::Used);
    } else if (meth == "get_last_lr" || meth == "get_lr") {
      putKind(fn, key, Kind::Scheduler, Evidence::Used);
    } else if (meth == "unscale_") {
      putKind(fn, key, Kind::Scaler, Evidence::Used);
    }
  }
  // Assignments and loop targets, a few rounds so aliases (`net = model.to(dev)`) and factories
  // of this file (`model = build()` whose return is a module) are seen in any order.
  for (int round = 0; round < 3; ++round) {
    kindsChanged_ = false;
    for (NodeId s = 0; s < m_.stmts.size(); ++s) {
      const Stmt& st = m_.stmt(s);
      uint32_t fn = st.function;
      if (st.kind == StmtKind::Assign && st.value != kNone) {
        if (m_.expr(st.value).kind == ExprKind::NoneLit) continue;
        for (NodeId t : items(m_, st.targets)) bindKinds(fn, t, st.value, nullptr);
      } else if (st.kind == StmtKind::For && st.target != kNone && st.value != kNone) {
        // `for layer in self.layers`, `for m in model.modules()`, `for n, m in model.named_children()`.
        NodeId it = unwrapIterable(m_, st.value);
        Kind over = f_.kindOf(it);
        std::string_view meth = methodName(m_, it);
        Facts::KindFact mod = make(Kind::Module, Evidence::Used);
        if (over == Kind::ModuleCollection || (over == Kind::Module && meth.empty())) {
          bindKinds(fn, st.target, kNone, &mod);
        } else if (meth == "modules" || meth == "children") {
          bindKinds(fn, st.target, kNone, &mod);
        } else if ((meth == "named_modules" || meth == "named_children") && m_.expr(st.target).kind == ExprKind::Container &&
                   m_.expr(st.target).argCount == 2) {
          bindKinds(fn, m_.args[m_.expr(st.target).firstArg + 1].value, kNone, &mod);
        }
      }
    }
    if (findBatchClasses()) kindsChanged_ = true;
    // Functions of this file that return a module are model factories; those that return a loader
    // (or their batch-iterating instance, batch_classes.cpp) hand out batches.
    for (uint32_t fn = 1; fn < m_.functions.size(); ++fn) {
      const Function& func = m_.functions[fn];
      bool own = func.cls >= 0 && f_.iteratesBatches(func.cls);
      bool any = false, modules = true, loaders = !func.isLambda;
      for (NodeId s : f_.fnStmts_[fn]) {
        const Stmt& st = m_.stmt(s);
        if (st.kind != StmtKind::Return || st.value == kNone) continue;
        any = true;
        Kind k = f_.kindOf(st.value);
        if (k != Kind::Module) modules = false;
        if (loaders && k != Kind::Loader && !(own && returnsOwnInstance(fn, st.value, 4))) loaders = false;
      }
      if (f_.summaries_[fn].returnsModule != (any && modules)) kindsChanged_ = true;
      f_.summaries_[fn].returnsModule = any && modules;
      // Only ever learnt: a loader stays one as the rounds go on.
      if (any && loaders && !f_.summaries_[fn].returnsLoader) f_.summaries_[fn].returnsLoader = kindsChanged_ = true;
    }
    // Parameters take the kind every call site of this file agrees on.
    if (round == 0) resolveCallTargets();
    for (uint32_t fn = 1; fn < m_.functions.size(); ++fn) {
      const Function& f = m_.functions[fn];
      if (callSites_[fn].empty() || f.isLambda) continue;
      for (uint32_t i = 0; i < f.paramCount; ++i) {
        std::string_view pname = m_.params[f.firstParam + i].name;
        if (pname == "self" || pname == "cls") continue;
        Kind agreed = Kind::Unknown;
        int32_t agreedClass = -1;  // the class too, when every call site passes one of the same class
        NodeId agreedCtor = kNone;  // and the constructor, when every one was made by the same one (`Accelerator()`)
        Evidence weakest = Evidence::Declared;
        bool first = true, ok = true;
        for (NodeId call : callSites_[fn]) {
          const Expr& c = m_.expr(call);
          bool bound = f.cls >= 0 && m_.expr(c.lhs).kind == ExprKind::Attribute;
          uint32_t pos = bound ? i - 1 : i;
          if (bound && i == 0) { ok = false; break; }
          NodeId arg = keywordArg(m_, call, pname);
          if (arg == kNone) arg = positionalArg(m_, call, pos);
          if (arg == kNone) { ok = false; break; }
          Kind k = f_.kindOf(arg);
          Evidence e = f_.kindEvidence(arg);
          if (k == Kind::Unknown) { ok = false; break; }
          int32_t cls = f_.classOf(arg);
          NodeId ctor = f_.constructorOf(arg);
          if (first) agreed = k, agreedClass = cls, agreedCtor = ctor != kNone && !m_.canonical(ctor).empty() ? ctor : kNone;
          else if (agreed != k) { ok = false; break; }
          else if (agreedClass != cls) agreedClass = -1;
          if (!first && (ctor == kNone || agreedCtor == kNone || m_.canonical(ctor).empty() || m_.canonical(ctor) != m_.canonical(agreedCtor)))
            agreedCtor = kNone;
          weakest = std::min(weakest, e);
          first = false;
        }
        if (ok && !first) putKind(fn, pname, agreed, std::min(weakest, Evidence::Used), agreedClass, agreedCtor);
      }
    }
    if (!kindsChanged_) break;  // a round that learnt nothing: the next would learn nothing either
  }
  // From here on the kinds of names and attributes do not change: remember each answer. Those of
  // calls (factories of this file) are settled once the call targets are.
  kindsFinal_ = true;
  f_.kindCache_.assign(m_.exprs.size(), {});
  resolveCallTargets();
  f_.cacheAll_ = true;
}

void FactsBuilder::collectFreezes() {
  // The module whose parameters loop variable `var` walks: `for p in model.parameters()`, and
  // whether the write covers all of them (it is the loop's own statement, under no condition).
  auto ownerOfParam = [&](NodeId s, NodeId var, NodeId* whole) -> std::string_view {
    if (m_.expr(var).kind != ExprKind::Name) return {};
    std::string_view name = m_.expr(var).text;
    for (NodeId l = f_.loopOf_[s]; l != kNone; l = f_.loopOf_[l]) {
      const Stmt& loop = m_.stmt(l);
      if (loop.kind != StmtKind::For || loop.value == kNone) continue;
      NodeId it = unwrapIterable(m_, loop.value);
      std::string_view meth = methodName(m_, it);
      if (meth != "parameters" && meth != "named_parameters") continue;
      bool binds = false;
      forSubtree(loop.target, [&](NodeId x) {
        if (m_.expr(x).kind == ExprKind::Name && m_.expr(x).text == name) binds = true;
      });
      if (!binds) continue;
      *whole = m_.stmt(s).parent == l ? receiverOf(m_, it) : kNone;
      return f_.pathKey(receiverOf(m_, it));
    }
    return {};
  };
  auto record = [&](NodeId s, NodeId subject, bool frozen, bool moduleCall) {
    NodeId module = kNone;
    std::string_view owner = ownerOfParam(s, subject, &module);
    if (owner.empty()) {
      owner = f_.pathKey(subject);
      if (moduleCall) module = subject;  // `m.requires_grad_(False)`; `x.requires_grad = False` is one tensor
    }
    if (owner.empty()) return;
    f_.freezes_[owner].push_back({m_.stmt(s).span.begin, frozen, s, module});
  };
  for (NodeId s = 0; s < m_.stmts.size(); ++s) {
    const Stmt& st = m_.stmt(s);
    if (st.kind == StmtKind::Assign && st.value != kNone && m_.expr(st.value).kind == ExprKind::Bool) {
      for (NodeId t : items(m_, st.targets)) {
        const Expr& te = m_.expr(t);
        if (te.kind == ExprKind::Attribute && te.text == "requires_grad") record(s, te.lhs, isFalseLiteral(m_, st.value), false);
      }
    } else if (st.kind == StmtKind::Expr && st.value != kNone && m_.expr(st.value).kind == ExprKind::Call) {
      std::string_view meth = methodName(m_, st.value);
      if (meth != "requires_grad_" && meth != "set_requires_grad") continue;
      NodeId a = positionalArg(m_, st.value, 0);
      if (a == kNone) a = keywordArg(m_, st.value, "requires_grad");
      bool frozen = a != kNone && isFalseLiteral(m_, a);
      if (a != kNone && !isTrueLiteral(m_, a) && !frozen) continue;  // unknown flag
      record(s, receiverOf(m_, st.value), frozen, true);
    }
  }
}

// ------------------------------------------------------------------ queries

Facts::KindFact Facts::lookupPath(uint32_t fn, std::string_view path) const {
  if (isSelfPath(path)) {
    int32_t c = classOfFunction(fn);
    if (c < 0) return {};
    auto it = kinds_.find(scopeKey(static_cast<uint32_t>(familyRoot_[static_cast<size_t>(c)]), true));
    if (it == kinds_.end()) return {};
    auto p = it->second.find(path);
    return p == it->second.end() ? KindFact{} : p->second;
  }
  for (uint32_t s = fn;; s = m_.functions[s].parent) {
    auto it = kinds_.find(scopeKey(s, false));
    if (it != kinds_.end()) {
      auto p = it->second.find(path);
      if (p != it->second.end()) return p->second;
    }
    if (s == 0) break;
  }
  return {};
}

Facts::KindFact Facts::kindFactOf(NodeId e) const {
  if (e == kNone) return {};
  const Expr& x = m_.expr(e);
  if (x.hint & type_hint::kLossModule) return make(Kind::LossFn, Evidence::Declared);
  if (x.hint & type_hint::kModule) return make(Kind::Module, Evidence::Declared);
  if (x.hint & type_hint::kOptimizer) return make(Kind::Optimizer, Evidence::Declared);
  uint32_t fn = x.stmt == kNone ? 0 : m_.stmt(x.stmt).function;
  switch (x.kind) {
    case ExprKind::Name: {
      if (x.text == "self") {
        int32_t c = classOfFunction(fn);
        if (c < 0) return {};
        return make(isModuleClass(c) ? Kind::Module : Kind::Instance, Evidence::Declared, c);
      }
      if (x.canonical != 0) {
        std::string_view last = names::lastComponent(m_.canonical(e));
        return make(isUpperInitial(last) ? Kind::Class : Kind::Function, Evidence::Constructed);
      }
      KindFact k = lookupPath(fn, x.text);
      if (k.evidence != Evidence::None) return k;
      auto it = functionsByName_.find(x.text);
      if (it != functionsByName_.end()) return make(Kind::Function, Evidence::Declared);
      if (int32_t c = classNamed(x.text); c >= 0) return make(Kind::Class, Evidence::Declared, c);
      return {};
    }
    case ExprKind::Attribute: {
      if (x.canonical != 0 && m_.lang == Lang::Python) {
        std::string_view last = names::lastComponent(m_.canonical(e));
        return make(isUpperInitial(last) ? Kind::Class : Kind::Function, Evidence::Constructed);
      }
      std::string_view key = pathKey(e);
      if (!key.empty()) {
        KindFact k = lookupPath(fn, key);
        if (k.evidence != Evidence::None) return k;
      }
      if (x.text == "module" && kindOf(x.lhs) == Kind::Module) return make(Kind::Module, Evidence::Used);
      return {};
    }
    case ExprKind::Subscript: {
      Kind base = kindOf(x.lhs);
      if (base == Kind::ModuleCollection || (base == Kind::Module && kindEvidence(x.lhs) >= Evidence::Used))
        return make(Kind::Module, Evidence::Used);
      // `state = {"network": network, ...}`, then `state["network"](x)`: what the entry holds.
      if (NodeId entry = dictEntryOf(e); entry != kNone && kindOf(entry) != Kind::Unknown)
        return make(kindOf(entry), kindEvidence(entry), classOf(entry), constructorOf(entry));
      return {};
    }
    case ExprKind::Call: break;
    case ExprKind::Lambda: return make(Kind::Function, Evidence::Declared);
    case ExprKind::Number:
    case ExprKind::String:
    case ExprKind::Bool: return make(Kind::Value, Evidence::Constructed);
    case ExprKind::Container: {
      // `{"g": G(), "d": D()}` / `[enc, dec]`: a collection of modules.
      uint32_t n = 0;
      for (const Arg& a : argsOf(m_, x)) {
        NodeId v = a.value;
        if (m_.expr(v).shape == shape::kPair && m_.expr(v).argCount == 2) v = m_.args[m_.expr(v).firstArg + 1].value;
        if (kindOf(v) != Kind::Module || kindEvidence(v) < Evidence::Used) return {};
        ++n;
      }
      return n ? make(Kind::ModuleCollection, Evidence::Constructed) : KindFact{};
    }
    case ExprKind::Conditional: {
      KindFact out;
      uint32_t i = 0;
      for (const Arg& a : argsOf(m_, x)) {
        if (i++ == 1) continue;
        KindFact k = kindFactOf(a.value);
        if (k.evidence == Evidence::None) return {};
        if (out.evidence == Evidence::None) out = k;
        else if (out.kind != k.kind) return {};
      }
      return out;
    }
    default: return {};
  }
  // Calls: constructors, factories, wrappers and methods that return their module.
  const std::string& canon = m_.canonical(e);
  std::string_view meth = methodName(m_, e);
  NodeId recv = receiverOf(m_, e);
  if (!canon.empty()) {
    std::string_view last = names::lastComponent(canon);
    if (isLossModuleCanonical(canon)) return make(Kind::LossFn, Evidence::Constructed, -1, e);
    if (isModuleCollectionCanonical(canon)) return make(Kind::ModuleCollection, Evidence::Constructed, -1, e);
    if (isModuleClassCanonical(canon)) return make(Kind::Module, Evidence::Constructed, -1, e);
    if (isOptimizerCanonical(canon)) return make(Kind::Optimizer, Evidence::Constructed, -1, e);
    if (isSchedulerCanonical(canon)) return make(Kind::Scheduler, Evidence::Constructed, -1, e);
    if (isGradScalerCanonical(canon)) return make(Kind::Scaler, Evidence::Constructed, -1, e);
    if (isDataLoaderCanonical(canon)) return make(Kind::Loader, Evidence::Constructed, -1, e);
    if (canon == "torch.device") return make(Kind::Device, Evidence::Constructed, -1, e);
    if (startsWith(canon, "torch.") && (isTensorFactory(last) || last == "Tensor")) return make(Kind::Tensor, Evidence::Constructed, -1, e);
    if (project_) {
      // A class or a model factory of another module of the project.
      if (const ImportedClass* cls = project_->cls(canon))
        return make(cls->module ? Kind::Module : cls->batches ? Kind::Loader : Kind::Instance, Evidence::Constructed, -1, e);
      const ImportedFunction* fn = project_->function(canon);
      if (fn && fn->summary->returnsModule) return make(Kind::Module, Evidence::Constructed, -1, e);
      if (fn && fn->summary->returnsLoader) return make(Kind::Loader, Evidence::Constructed, -1, e);
    }
    if (last == "DistributedOptimizer" || last == "ZeroRedundancyOptimizer") return make(Kind::Optimizer, Evidence::Constructed, -1, e);
    if (isModuleWrapperCanonical(canon)) {
      NodeId a = positionalArg(m_, e, 0);
      return kindOf(a) == Kind::Module ? make(Kind::Module, std::max(Evidence::Used, kindEvidence(a)), classOf(a), e) : KindFact{};
    }
    if (meth == "from_pretrained" || meth == "from_config" || meth == "from_single_file") {
      std::string_view cls = names::lastComponent(m_.canonical(recv).empty() ? m_.textOf(recv) : std::string_view(m_.canonical(recv)));
      if (isPreprocessorClassName(cls)) return make(isConfigClassName(cls) ? Kind::Value : Kind::Tokenizer, Evidence::Constructed);
      if (endsWith(cls, "Pipeline") || endsWith(cls, "Scheduler")) return make(Kind::Function, Evidence::Constructed);
      return make(Kind::Module, Evidence::Constructed, -1, e);
    }
    if (canon == "transformers.pipeline") return make(Kind::Function, Evidence::Constructed);
    if (canon == "functools.partial") return make(Kind::Function, Evidence::Constructed, -1, e);
    if (canon == "accelerate.Accelerator" || endsWith(canon, ".Fabric")) return make(Kind::Value, Evidence::Constructed, -1, e);
    if (isUpperInitial(last)) {
      if (isModelLibrary(canon) && looksLikeModelClass(last)) return make(Kind::Module, Evidence::Constructed, -1, e);
      if (isPreprocessorClassName(last)) return make(Kind::Tokenizer, Evidence::Constructed);
      if (startsWith(canon, "torch.")) return make(Kind::Value, Evidence::Constructed);
      if (names::looksLikeModule(last)) return make(Kind::Module, Evidence::Named, -1, e);
      return {};
    }
    if (startsWith(canon, "torch.")) return {};
  }
  if (!meth.empty() && recv != kNone) {
    Kind rk = kindOf(recv);
    if (rk == Kind::Module && returnsReceiverModule(meth)) return make(Kind::Module, kindEvidence(recv), classOf(recv), constructorOf(recv));
    if (rk == Kind::ModuleCollection && (meth == "get" || meth == "pop")) return make(Kind::Module, Evidence::Used);
    if (meth == "from_pretrained" && m_.expr(recv).kind == ExprKind::Name && isUpperInitial(m_.expr(recv).text)) {
      std::string_view cls = m_.expr(recv).text;
      if (isPreprocessorClassName(cls)) return make(Kind::Tokenizer, Evidence::Constructed);
      if (endsWith(cls, "Pipeline")) return make(Kind::Function, Evidence::Constructed);
      return make(Kind::Module, Evidence::Constructed, -1, e);
    }
    if ((meth == "prepare" || meth == "prepare_model" || meth == "setup" || meth == "setup_module") && m_.expr(e).argCount == 1) {
      NodeId a = positionalArg(m_, e, 0);
      if (a != kNone) return kindFactOf(a);
    }
    if (meth == "setup_dataloaders") return make(Kind::Loader, Evidence::Used);
    for (uint32_t t : callTargets(e)) {
      if (summaries_[t].returnsModule) return make(Kind::Module, Evidence::Constructed, -1, e);
      if (summaries_[t].returnsLoader) return make(Kind::Loader, Evidence::Constructed, -1, e);
    }
    if (const ImportedFunction* imp = importedCallee(e); imp && (imp->summary->returnsModule || imp->summary->returnsLoader))
      return make(imp->summary->returnsModule ? Kind::Module : Kind::Loader, Evidence::Constructed, -1, e);
    return {};
  }
  const Expr& callee = m_.expr(m_.expr(e).lhs);
  if (callee.kind == ExprKind::Name && callee.canonical == 0) {
    if (int32_t ci = classNamed(callee.text); ci >= 0)
      return make(isModuleClass(ci) ? Kind::Module : iteratesBatches(ci) ? Kind::Loader : Kind::Instance, Evidence::Constructed, ci, e);
    for (uint32_t t : callTargets(e)) {
      if (summaries_[t].returnsModule) return make(Kind::Module, Evidence::Constructed, -1, e);
      if (summaries_[t].returnsLoader) return make(Kind::Loader, Evidence::Constructed, -1, e);
    }
    if (isUpperInitial(callee.text) && functionsByName_.find(callee.text) == functionsByName_.end() &&
        names::looksLikeModule(callee.text))
      return make(Kind::Module, Evidence::Named, -1, e);
  }
  return {};
}

const Facts::KindAnswer* Facts::kindAnswer(NodeId e) const {
  // Once the kinds pass is done the answer cannot change: remember it (asked at every call of
  // every pass). Calls' kinds wait for the call targets (factories of this file).
  if (kindCache_.empty() || !(cacheAll_ || m_.expr(e).kind == ExprKind::Name || m_.expr(e).kind == ExprKind::Attribute))
    return nullptr;
  KindAnswer& slot = kindCache_[e];
  if (!slot.known) {
    KindFact fact = kindFactOf(e);
    Evidence ev = Evidence::None;
    Kind kind = kindFrom(e, fact, &ev);
    slot = {fact, kind, ev, true};
  }
  return &slot;
}

Kind Facts::kindOf(NodeId e) const {
  if (e == kNone || e >= m_.exprs.size()) return Kind::Unknown;
  if (const KindAnswer* a = kindAnswer(e)) return a->kind;
  return computeKind(e, nullptr);
}

Evidence Facts::kindEvidence(NodeId e) const {
  if (e == kNone || e >= m_.exprs.size()) return Evidence::None;
  if (const KindAnswer* a = kindAnswer(e)) return a->evidence;
  Evidence ev = Evidence::None;
  computeKind(e, &ev);
  return ev;
}

Kind Facts::computeKind(NodeId e, Evidence* evidence) const { return kindFrom(e, kindFactOf(e), evidence); }

Kind Facts::kindFrom(NodeId e, const KindFact& k, Evidence* evidence) const {
  if (evidence) *evidence = k.evidence;
  if (k.evidence != Evidence::None) return k.kind;
  Kind named = namedKind(e);
  if (evidence) *evidence = named == Kind::Unknown ? Evidence::None : Evidence::Named;
  return named;
}

Kind Facts::namedKind(NodeId e) const {
  // Naming conventions: the weakest evidence, for names nothing else speaks about.
  const Expr& x = m_.expr(e);
  std::string_view name;
  if (x.kind == ExprKind::Name) {
    // A capitalised name nothing binds is a class (PEP 8): `ToyModel()` constructs, it is no forward.
    if (isUpperInitial(x.text) && m_.lang == Lang::Python) return Kind::Class;
    name = x.text;
  } else if (x.kind == ExprKind::Attribute) {
    Kind base = kindOf(x.lhs);
    bool selfBase = isSelfName(m_, x.lhs);
    // An instance of a class of another module: its attributes and methods are that module's, and
    // nothing here says what they are (`trainer.get_model` is a method, not a model).
    if (base == Kind::Instance && !selfBase && classOf(x.lhs) < 0) return Kind::Unknown;
    if (!selfBase && base != Kind::Module && base != Kind::Instance) {
      // `args.model`, `cfg.optimizer`: a configuration's fields are names, not objects.
      if (!(namedAs(x.text) & (kNamedOptimizer | kNamedLoader | kNamedScheduler))) return Kind::Unknown;
    }
    name = x.text;
  } else {
    return Kind::Unknown;
  }
  const uint8_t named = namedAs(name);
  if (named & kNamedLoss) return Kind::LossFn;
  if (named & kNamedScheduler) return Kind::Scheduler;
  if (named & kNamedModule) return Kind::Module;
  if (named & kNamedOptimizer) return Kind::Optimizer;
  if (named & kNamedLoader) return Kind::Loader;
  return Kind::Unknown;
}

Facts::KindFact Facts::settledFact(NodeId e) const {
  const KindAnswer* a = e < m_.exprs.size() ? kindAnswer(e) : nullptr;
  return a ? a->fact : kindFactOf(e);
}

int32_t Facts::classOf(NodeId e) const { return settledFact(e).cls; }
NodeId Facts::constructorOf(NodeId e) const { return settledFact(e).ctor; }

bool Facts::frozenBefore(std::string_view path, uint32_t offset) const {
  if (path.empty() || freezes_.empty()) return false;
  const FreezeWrite* best = nullptr;
  // The path and each of its prefixes (`model.backbone` is frozen by `model.requires_grad_(False)`).
  for (std::string_view p = path;;) {
    auto it = freezes_.find(p);
    if (it != freezes_.end())
      for (const FreezeWrite& w : it->second)
        if (w.offset < offset && (!best || w.offset > best->offset)) best = &w;
    size_t dot = p.rfind('.');
    if (dot == std::string_view::npos) break;
    p = p.substr(0, dot);
  }
  if (!best || !best->frozen) return false;
  // A later unfreeze of part of it (`model.head.requires_grad_(True)`) leaves it partly trainable.
  for (const auto& [key, writes] : freezes_) {
    if (key.size() <= path.size() || key.substr(0, path.size()) != path || key[path.size()] != '.') continue;
    for (const FreezeWrite& w : writes)
      if (!w.frozen && w.offset > best->offset && w.offset < offset) return false;
  }
  return true;
}

NodeId Facts::frozenPartBefore(uint32_t fn, std::string_view owner, uint32_t offset) const {
  if (owner.empty()) return kNone;
  for (const auto& [key, writes] : freezes_) {
    bool under = key == owner || (key.size() > owner.size() && key.substr(0, owner.size()) == owner && key[owner.size()] == '.');
    if (!under) continue;
    // The last write of this function to the path, or to a prefix of it, decides.
    const FreezeWrite* last = nullptr;
    for (std::string_view p = key;;) {
      auto it = freezes_.find(p);
      if (it != freezes_.end())
        for (const FreezeWrite& w : it->second)
          if (w.offset < offset && m_.stmt(w.stmt).function == fn && (!last || w.offset > last->offset)) last = &w;
      size_t dot = p.rfind('.');
      if (dot == std::string_view::npos || p.size() <= owner.size()) break;
      p = p.substr(0, dot);
    }
    if (last && last->frozen) return last->stmt;
  }
  return kNone;
}

std::vector<NodeId> Facts::frozenModulesBefore(uint32_t fn, std::string_view owner, uint32_t offset) const {
  std::vector<NodeId> modules;
  if (owner.empty()) return modules;
  auto under = [](std::string_view path, std::string_view root) {
    return path == root || (path.size() > root.size() && path.substr(0, root.size()) == root && path[root.size()] == '.');
  };
  std::vector<std::string_view> frozenKeys;
  for (const auto& [key, writes] : freezes_) {
    if (!under(key, owner)) continue;
    const FreezeWrite* last = nullptr;
    for (const FreezeWrite& w : writes)
      if (w.offset < offset && m_.stmt(w.stmt).function == fn && (!last || w.offset > last->offset)) last = &w;
    if (!last || !last->frozen) continue;
    if (last->module == kNone) return {};
    frozenKeys.push_back(key);
    modules.push_back(last->module);
  }
  // Nested freezes would count a part twice; any other write below a frozen module (an
  // unfreeze, or a freeze of one tensor) leaves which parameters are frozen unknown.
  for (std::string_view k : frozenKeys)
    for (const auto& [key, writes] : freezes_) {
      if (key == k || !under(key, k)) continue;
      for (const FreezeWrite& w : writes)
        if (w.offset < offset && m_.stmt(w.stmt).function == fn) return {};
    }
  return modules;
}

bool Facts::unfrozenAfter(std::string_view owner, uint32_t offset) const {
  for (const auto& [key, writes] : freezes_) {
    auto under = [](std::string_view path, std::string_view root) {
      return path == root || (path.size() > root.size() && path.substr(0, root.size()) == root && path[root.size()] == '.');
    };
    if (!under(key, owner) && !under(owner, key)) continue;
    for (const FreezeWrite& w : writes)
      if (!w.frozen && w.offset > offset) return true;
  }
  return false;
}

bool Facts::isFrozenModule(NodeId e) const {
  std::string_view key = pathKey(e);
  return !key.empty() && frozenBefore(key, UINT32_MAX);
}

}  // namespace oomlint
