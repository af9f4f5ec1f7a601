// OOM108 hook-stores-tensor
#include <algorithm>
#include <unordered_map>

#include "rules/common.h"
#include "rules/registry.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM108", "hook-stores-tensor", Severity::Warning, true, true, FixKind::Unsafe, false, true,
    "A hook stores its tensors without .detach(), or hooks are registered every iteration",
    R"doc(## What it does
Flags a forward/backward hook (`register_forward_hook`, `register_full_backward_hook`,
`register_forward_pre_hook`, `Tensor.register_hook`) that stores its input, output or gradient on
`self` or in a container outside the hook without `.detach()`; and a `register_*_hook(...)` call
that runs every iteration (inside a training/evaluation loop, or in a step such a loop calls per
batch) whose handle is thrown away or kept in a name nothing reads again (no `handle.remove()`).
A `Tensor.register_hook` on a tensor the iteration computes goes with that tensor and is not
flagged. A local name of the hook that holds its tensor counts as the tensor (`act = output`, then
`act = self.reshape(act)` on some path, then `self.acts.append(act.cpu())`). Hooks may be functions, lambdas (`lambda m, i, o: feats.append(o)`),
`functools.partial(save, name)` of a function of the file, instances of a class of the file (its
`__call__`),
bound methods (`self.save_activation`, `recorder.save`) or the functions a factory returns. A
bound method of an object whose class is not known (`hook = template.copy()`, then
`register_forward_hook(hook.forward)`) may be any method of that name with a hook's signature
(module, input, output; two parameters for pre-hooks) in the file's classes that are not
`nn.Module`s: each is checked. A
hook on a module whose parameters are all frozen, and a stored value without history
(`.detach()`, `.shape`, `.item()`), are not flagged.

## Why is this bad?
A forward output kept by a hook holds its whole graph: every activation it was computed from stays
alive after backward, and when the hook writes into a growing dict or list, memory grows per step.
Hooks registered in a loop pile up: each handle keeps its closure (and what it captured) alive and
runs on every later forward.

## Example
```python
activations = {}
def save(name):
    def hook(module, inputs, output):
        activations[name] = output
    return hook
model.layer4.register_forward_hook(save("layer4"))
```

## Use instead
```python
        activations[name] = output.detach()
```
and register hooks once (or keep the handle and call `handle.remove()`).

## Fix safety
Unsafe: the stored tensor no longer carries gradients; code that back-propagates through stored
activations must keep them.

## References
- `torch.nn.Module.register_forward_hook`: https://pytorch.org/docs/stable/generated/torch.nn.Module.register_forward_hook.html
)doc",
};

/// The parameters a hook of this registration method takes, or -1 when it registers no hook.
/// 0 for `Tensor.register_hook`: its one gradient is too common a signature to find a hook by.
int hookParams(std::string_view meth) {
  if (meth == "register_forward_hook" || meth == "register_full_backward_hook" || meth == "register_backward_hook") return 3;
  if (meth == "register_forward_pre_hook" || meth == "register_full_backward_pre_hook") return 2;
  if (meth == "register_hook") return 0;
  return -1;
}

class Oom108 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void onCall(Context& ctx, NodeId call) const override {
    const Module& m = ctx.module();
    const Facts& f = ctx.facts();
    std::string_view meth = methodName(m, call);
    int params = hookParams(meth);
    if (params < 0 || !m.canonical(call).empty()) return;
    NodeId s = m.expr(call).stmt;
    // A loop, or a step its caller runs per batch.
    NodeId loop = f.stepIterationOf(s);
    if (loop != kNone && handleDropped(f, call) && !diesWithIteration(f, call, loop)) {
      bool inLoop = m.stmt(loop).kind != StmtKind::FunctionDef;
      Finding& fd = ctx.report(kInfo, m.expr(call).span,
                               ticked(meth) + (inLoop ? " inside the loop registers another hook every iteration"
                                                      : " in a step run every iteration registers another hook each call") +
                                   " and the handle is never removed");
      noteLoop(fd, f, loop);
      fd.withFix(Applicability::DisplayOnly, "Register the hook once before the loop, or keep the handle and call `.remove()`");
    }
    // A module whose parameters are all frozen hands its hooks tensors without history.
    if (f.isFrozenModule(receiverOf(m, call))) return;
    NodeId hookArg = positionalArg(m, call, 0);
    if (hookArg == kNone) hookArg = keywordArg(m, call, "hook");
    bool backwardHook = meth == "register_hook" || meth.find("backward") != std::string_view::npos;
    for (const Hook& h : hookFunctions(f, hookArg, static_cast<uint32_t>(params))) checkHook(ctx, call, h, meth == "register_hook", backwardHook);
  }

 private:
  /// Nothing can remove the hook: the handle is thrown away (`x.register_forward_hook(h)`), or
  /// kept in a name nothing reads (`handle = x.register_forward_hook(h)`, no `handle.remove()`).
  static bool handleDropped(const Facts& f, NodeId call) {
    const Module& m = f.module();
    const Stmt& st = m.stmt(m.expr(call).stmt);
    if (st.value != call) return false;
    if (st.kind == StmtKind::Expr) return true;
    if (st.kind != StmtKind::Assign || st.targets.count != 1 || m.expr(st.target).kind != ExprKind::Name) return false;
    std::string_view handle = m.expr(st.target).text;
    for (NodeId r : f.readersOf(st.function, handle))
      if (r != m.expr(call).stmt) return false;
    return true;
  }

  /// `feat.register_hook(...)` on a tensor the iteration computes: the hook goes with the tensor.
  static bool diesWithIteration(const Facts& f, NodeId call, NodeId loop) {
    const Module& m = f.module();
    NodeId recv = receiverOf(m, call);
    if (methodName(m, call) != "register_hook" || recv == kNone || m.expr(recv).kind != ExprKind::Name) return false;
    NodeId bound = f.bindingSite(recv);
    return bound != kNone && m.stmt(bound).kind == StmtKind::Assign && f.within(bound, loop);
  }

  /// The local functions a hook argument stands for (`hook`, `self.hook`, `recorder.save`,
  /// a lambda, `make_hook("x")` returning a nested function).
  struct Hook {
    uint32_t fn = 0;
    uint32_t bound = 0;  // leading parameters `functools.partial` fills
  };

  static std::vector<Hook> hookFunctions(const Facts& f, NodeId arg, uint32_t params) {
    const Module& m = f.module();
    std::vector<Hook> out;
    if (arg == kNone) return out;
    uint32_t direct = f.functionDenoted(arg);
    if (direct != UINT32_MAX) {
      out.push_back({direct, 0});
      return out;
    }
    const Expr& a = m.expr(arg);
    // `hook.forward` on an object of no known class (`hook = template.copy()`): the methods of that
    // name and a hook's signature in this file's hook classes, any of which it may hold.
    if (a.kind == ExprKind::Attribute && params > 0 && !isSelfName(m, a.lhs) && f.classOf(a.lhs) < 0) {
      for (uint32_t fn : f.methodsTaking(a.text, params)) out.push_back({fn, 0});
      return out;
    }
    // `functools.partial(save, name)`: `save` with its first parameters filled.
    if (a.kind == ExprKind::Call && (m.canonical(arg) == "functools.partial" || calleeName(m, arg) == "partial")) {
      uint32_t bound = 0;
      for (const Arg& p : argsOf(m, a)) {
        if (!p.keyword.empty()) return out;
        ++bound;
      }
      uint32_t fn = f.functionDenoted(positionalArg(m, arg, 0));
      if (fn != UINT32_MAX && bound > 0) out.push_back({fn, bound - 1});
      return out;
    }
    if (a.kind == ExprKind::Call) {
      // A factory: the nested functions it returns.
      for (uint32_t factory : f.callTargets(arg))
        for (NodeId s : f.statementsOf(factory)) {
          const Stmt& st = m.stmt(s);
          if (st.kind != StmtKind::Return || st.value == kNone || m.expr(st.value).kind != ExprKind::Name) continue;
          for (uint32_t j = 1; j < m.functions.size(); ++j)
            if (m.functions[j].parent == factory && m.functions[j].name == m.expr(st.value).text) out.push_back({j, 0});
        }
    }
    return out;
  }

  /// The value is the hook's tensor itself, or indexing / tensor methods on it (`output[0]`,
  /// `output.clone()`): what an unknown function makes of it is unknown.
  static bool rootedAt(const Module& m, NodeId e, const std::vector<std::string_view>& tensors) {
    for (int guard = 0; guard < 32 && e != kNone; ++guard) {
      const Expr& x = m.expr(e);
      if (x.kind == ExprKind::Name) {
        for (std::string_view t : tensors)
          if (x.text == t) return true;
        return false;
      }
      if (x.kind == ExprKind::Attribute && (x.text == "data" || x.text == "shape")) return false;  // no graph
      if (x.kind == ExprKind::Subscript || x.kind == ExprKind::Attribute) {
        e = x.lhs;
      } else if (x.kind == ExprKind::Call && receiverOf(m, e) != kNone && m.canonical(e).empty()) {
        std::string_view meth = methodName(m, e);
        if (meth == "item" || meth == "tolist" || meth == "numpy" || meth == "detach") return false;  // no graph
        e = receiverOf(m, e);
      } else {
        return false;
      }
    }
    return false;
  }

  /// Locals of the hook that hold one of its tensors (`act = output`), perhaps passed through a
  /// transform on some path (`if self.reshape is not None: act = self.reshape(act)`): every
  /// assignment of the name is the tensor (or another such local), or a call given it, and one is
  /// the tensor itself, so on some path what is stored is the hook's tensor.
  static void addAliases(const Facts& f, uint32_t fn, std::vector<std::string_view>& tensors) {
    const Module& m = f.module();
    for (int round = 0; round < 3; ++round) {
      std::vector<std::string_view> found;
      std::unordered_map<std::string_view, std::pair<bool, bool>> seen;  // name -> (some rooted, all rooted or transformed)
      for (NodeId s : f.statementsOf(fn)) {
        const Stmt& st = m.stmt(s);
        if (st.kind != StmtKind::Assign || st.targets.count != 1 || st.value == kNone) continue;
        const Expr& t = m.expr(st.target);
        if (t.kind != ExprKind::Name || std::find(tensors.begin(), tensors.end(), t.text) != tensors.end()) continue;
        // `act = act[0]`, `act = self.reshape(act)`: what the name already holds, kept or transformed.
        std::vector<std::string_view> withSelf = tensors;
        withSelf.push_back(t.text);
        bool rooted = rootedAt(m, st.value, tensors);
        bool kept = rooted || rootedAt(m, st.value, withSelf);
        bool transformed = !kept && m.expr(st.value).kind == ExprKind::Call &&
                           std::any_of(argsOf(m, m.expr(st.value)).begin(), argsOf(m, m.expr(st.value)).end(),
                                       [&](const Arg& a) { return rootedAt(m, a.value, withSelf); });
        auto [it, fresh] = seen.try_emplace(t.text, rooted, kept || transformed);
        if (!fresh) it->second = {it->second.first || rooted, it->second.second && (kept || transformed)};
      }
      for (const auto& [name, state] : seen)
        if (state.first && state.second) found.push_back(name);
      if (found.empty()) return;
      tensors.insert(tensors.end(), found.begin(), found.end());
    }
  }

  struct HookStore {
    NodeId value = kNone, container = kNone;
    Span where;
  };

  /// What a hook function puts somewhere: attribute and element assignments (not in backward
  /// hooks: the latest gradient is bounded) and appends, in its statements or a lambda's body.
  static std::vector<HookStore> storesOf(const Facts& f, uint32_t fn, bool backwardHook) {
    const Module& m = f.module();
    std::vector<HookStore> out;
    auto append = [&](NodeId call) {
      if (call == kNone || m.expr(call).kind != ExprKind::Call || methodName(m, call) != "append") return;
      out.push_back({positionalArg(m, call, 0), receiverOf(m, call), m.expr(call).span});
    };
    // A Python lambda is one expression; a C++ lambda has statements.
    if (m.functions[fn].isLambda && f.statementsOf(fn).empty()) {
      append(m.functions[fn].lambdaBody);
      return out;
    }
    for (NodeId s : f.statementsOf(fn)) {
      const Stmt& st = m.stmt(s);
      if (st.kind == StmtKind::Assign && st.target != kNone && !backwardHook) {
        const Expr& t = m.expr(st.target);
        if (t.kind == ExprKind::Attribute || t.kind == ExprKind::Subscript)
          out.push_back({st.value, t.kind == ExprKind::Subscript ? t.lhs : st.target, st.span});
      } else if (st.kind == StmtKind::Expr) {
        append(st.value);
      }
    }
    std::erase_if(out, [](const HookStore& h) { return h.value == kNone || h.container == kNone; });
    return out;
  }

  static void checkHook(Context& ctx, NodeId registration, const Hook& hook, bool tensorHook, bool backwardHook) {
    const Module& m = ctx.module();
    const Facts& f = ctx.facts();
    uint32_t fn = hook.fn;
    const Function& h = m.functions[fn];
    // The tensor parameters: (module, input, output) / (module, grad_in, grad_out) / (grad).
    std::vector<std::string_view> tensors;
    std::vector<std::string_view> tuples;  // parameters PyTorch passes as tuples of tensors
    uint32_t skip = (h.cls >= 0 ? 1 : 0) + hook.bound + (tensorHook ? 0 : 1);
    for (uint32_t i = skip; i < h.paramCount; ++i) {
      tensors.push_back(m.params[h.firstParam + i].name);
      // Module hooks get `input` (and grad_input / grad_output) as tuples; a forward hook's
      // `output` (its last parameter) is usually the tensor itself.
      bool forwardOutput = !tensorHook && !backwardHook && i + 1 == h.paramCount && i > skip;
      if (!tensorHook && !forwardOutput) tuples.push_back(m.params[h.firstParam + i].name);
    }
    if (tensors.empty()) return;
    addAliases(f, fn, tensors);
    for (const HookStore& store : storesOf(f, fn, backwardHook)) {
      NodeId value = store.value, container = store.container;
      if (!rootedAt(m, value, tensors)) continue;
      // `.detach()`, `.item()`, `.shape`, `.data`: nothing of the graph is kept.
      if (f.value(value).history == Tri::No) continue;
      // Outside the hook: `self.x`, or a container the hook did not create.
      NodeId root = container;
      while (m.expr(root).kind == ExprKind::Subscript || m.expr(root).kind == ExprKind::Attribute) root = m.expr(root).lhs;
      if (m.expr(root).kind != ExprKind::Name) continue;
      std::string_view rootName = m.expr(root).text;
      bool local = false;
      for (NodeId o : f.statementsOf(fn)) {
        const Stmt& os = m.stmt(o);
        if (os.kind == StmtKind::Assign && os.target != kNone && m.expr(os.target).kind == ExprKind::Name &&
            m.expr(os.target).text == rootName)
          local = true;
      }
      for (std::string_view t : tensors)
        if (t == rootName) local = true;
      if (local) continue;
      Span where = store.where;
      Finding& fd = ctx.report(kInfo, where,
                               (h.isLambda ? std::string("the hook lambda") : "hook `" + std::string(h.name) + "`") +
                                   " stores `" + brief(m, value, 30) + "` in `" +
                                   brief(m, container, 30) + "` without `.detach()`, keeping its graph alive after backward");
      fd.note(m.expr(registration).span, "registered as a hook here");
      // A whole tuple parameter has no `.detach()`: advice only.
      bool wholeTuple = m.expr(value).kind == ExprKind::Name &&
                        std::find(tuples.begin(), tuples.end(), m.expr(value).text) != tuples.end();
      if (wholeTuple) {
        fd.withFix(Applicability::DisplayOnly, "Store detached tensors (`.detach()` on each tensor)");
        continue;
      }
      fd.withFix(Applicability::Unsafe, "Store `" + brief(m, value, 30) + ".detach()`",
                 {replaceExpr(m, value, withMethod(m, value, ".detach()", ".detach()"))});
    }
  }
};

}  // namespace

const Rule& oom108() {
  static const Oom108 rule;
  return rule;
}

}  // namespace oomlint::rules
