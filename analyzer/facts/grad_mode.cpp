// Pass 3, grad mode: enabled / disabled / unknown at every statement.
//
// Inside a function: `with torch.no_grad()` / `inference_mode` / `enable_grad` /
// `set_grad_enabled(flag)` blocks (also through a variable: `ctx = torch.no_grad()`, `with ctx:`),
// `torch.set_grad_enabled(False)` statements and `stack.enter_context(torch.no_grad())` (the rest
// of the block), joined at the end of branches.
// At entry: the function's decorator (`@torch.no_grad()`, `@torch.inference_mode()`), else what
// every call site of this file says, else enabled (unknown for nested functions and lambdas).
#include "facts/builder.h"
#include "facts/torch_api.h"

namespace oomlint {

using namespace torch_api;

namespace {

enum class Local : uint8_t { Inherit, Enabled, Disabled, Unknown };

Local join(Local a, Local b) { return a == b ? a : Local::Unknown; }

class GradModeWalker {
 public:
  GradModeWalker(const Facts& f, const Module& m, std::vector<Local>& out) : f_(f), m_(m), out_(out) {}

  /// Grad effect of a context expression (`torch.no_grad()`, `torch.set_grad_enabled(False)`,
  /// a name bound to one). `depth` bounds chains of names bound to names.
  Local contextEffect(NodeId ctx, int depth = 0) const {
    const Expr& e = m_.expr(ctx);
    const std::string& canon = m_.canonical(ctx);
    if (e.kind == ExprKind::Conditional) return conditionalEffect(e, depth);
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
    if (e.kind == ExprKind::Name) return variableEffect(ctx, depth);
    return Local::Inherit;
  }

  /// A statement that switches the mode for the rest of its block: `torch.set_grad_enabled(False)`,
  /// `stack.enter_context(torch.no_grad())`.
  Local statementSwitch(const Stmt& st) const {
    if (st.kind != StmtKind::Expr || st.value == kNone || m_.expr(st.value).kind != ExprKind::Call) return Local::Inherit;
    if (isSetGradEnabled(m_.canonical(st.value))) return contextEffect(st.value);
    if (methodName(m_, st.value) == "enter_context") {
      NodeId ctx = positionalArg(m_, st.value, 0);
      if (ctx != kNone) return contextEffect(ctx);
    }
    return Local::Inherit;
  }

  /// Marks the statements of a block with the mode in force; returns the mode at its end.
  Local block(List body, Local mode) {
    Local current = mode;
    for (NodeId s : items(m_, body)) {
      out_[s] = current;
      const Stmt& st = m_.stmt(s);
      switch (st.kind) {
        case StmtKind::With: {
          Local inner = current;
          for (NodeId ctx : items(m_, st.targets)) {
            Local eff = contextEffect(ctx);
            if (eff != Local::Inherit) inner = eff;
          }
          block(st.body, inner);  // the mode is restored when the with ends
          break;
        }
        case StmtKind::Expr: {
          Local eff = statementSwitch(st);
          if (eff != Local::Inherit) current = eff;
          break;
        }
        case StmtKind::FunctionDef: break;
        case StmtKind::ClassDef: block(st.body, current); break;
        case StmtKind::If: {
          Local a = block(st.body, current);
          Local b = block(st.orelse, current);
          current = join(a, b);
          break;
        }
        case StmtKind::For:
        case StmtKind::While: {
          Local end = block(st.body, current);
          if (end != current) {
            // The second iteration starts in the mode the first one left.
            block(st.body, join(end, current));
            current = join(end, current);
          }
          current = join(current, block(st.orelse, current));
          break;
        }
        case StmtKind::Try: {
          Local end = block(st.body, current);
          for (uint32_t h = 0; h < st.handlerCount; ++h) end = join(end, block(m_.handlers[st.firstHandler + h].body, current));
          end = join(end, block(st.orelse, end));
          current = block(st.finalbody, end);
          break;
        }
        default:
          block(st.body, current);
          block(st.orelse, current);
          break;
      }
    }
    return current;
  }

 private:
  /// `nullcontext() if train else torch.no_grad()`: the join of both arms, so a context chosen at
  /// run time leaves the mode unknown rather than enabled.
  Local conditionalEffect(const Expr& e, int depth) const {
    ArgRange args = argsOf(m_, e);  // {body, cond, else}
    if (args.size() != 3 || args.b[0].value == kNone || args.b[2].value == kNone) return Local::Unknown;
    return join(contextEffect(args.b[0].value, depth + 1), contextEffect(args.b[2].value, depth + 1));
  }

  /// A context held in a variable (`ctx = torch.inference_mode()` ... `with ctx:`): the join of
  /// what every assignment of the name in its function (or, for a module-level name, in the
  /// module) binds, since any of them may reach the `with` (a loop, a branch). A parameter of
  /// the function is one more unknown binding, taken as the caller's mode as before.
  Local variableEffect(NodeId name, int depth) const {
    const Expr& e = m_.expr(name);
    if (depth > 4 || e.stmt == kNone) return Local::Inherit;
    uint32_t fn = m_.stmt(e.stmt).function;
    std::string_view text = e.text;
    if (f_.assignmentsOf(fn, text).empty()) {
      if (!f_.isModuleName(fn, text)) return Local::Inherit;
      fn = 0;
    }
    const Function& fun = m_.functions[fn];
    bool param = false;
    for (uint32_t i = 0; i < fun.paramCount && !param; ++i) param = m_.params[fun.firstParam + i].name == text;
    bool first = !param;
    Local effect = Local::Inherit;
    for (NodeId s : f_.assignmentsOf(fn, text)) {
      const Stmt& st = m_.stmt(s);
      // `ctx = torch.no_grad()` binds the value; an unpack (`a, ctx = ...`) binds a part of it.
      bool plain = st.value != kNone && st.targets.count == 1 && m_.expr(*m_.listBegin(st.targets)).kind == ExprKind::Name;
      Local here = plain ? contextEffect(st.value, depth + 1) : Local::Unknown;
      effect = first ? here : join(effect, here);
      first = false;
    }
    return effect;
  }

  const Facts& f_;
  const Module& m_;
  std::vector<Local>& out_;
};

GradMode resolve(Local l, GradMode entry) {
  switch (l) {
    case Local::Inherit: return entry;
    case Local::Enabled: return GradMode::Enabled;
    case Local::Disabled: return GradMode::Disabled;
    default: return GradMode::Unknown;
  }
}

GradMode decoratorMode(const Module& m, uint32_t fn) {
  for (NodeId d : items(m, m.functions[fn].decorators)) {
    const std::string& canon = m.canonical(d);
    if (canon == "torch.inference_mode" || canon == "torch.autograd.inference_mode") {
      NodeId a = m.expr(d).kind == ExprKind::Call ? positionalArg(m, d, 0) : kNone;
      if (a == kNone && m.expr(d).kind == ExprKind::Call) a = keywordArg(m, d, "mode");
      if (a == kNone || isTrueLiteral(m, a)) return GradMode::Disabled;
      continue;
    }
    if (isGradDisablingCtx(canon)) return GradMode::Disabled;
    if (isGradEnablingCtx(canon)) return GradMode::Enabled;
  }
  return GradMode::Unknown;
}

}  // namespace

void FactsBuilder::computeGradModes() {
  size_t nf = m_.functions.size(), ns = m_.stmts.size();
  std::vector<Local> local(ns, Local::Inherit);
  GradModeWalker walker(f_, m_, local);
  for (size_t fn = 0; fn < nf; ++fn) walker.block(m_.functions[fn].body, Local::Inherit);

  std::vector<GradMode> decorated(nf, GradMode::Unknown);
  for (size_t fn = 0; fn < nf; ++fn) {
    decorated[fn] = decoratorMode(m_, static_cast<uint32_t>(fn));
    // A framework's evaluation step runs under its no_grad (Lightning's validation_step).
    if (decorated[fn] == GradMode::Unknown && (f_.frameworkStep(static_cast<uint32_t>(fn)) & loop_role::kEval))
      decorated[fn] = GradMode::Disabled;
    const Function& f = m_.functions[fn];
    bool nested = fn != 0 && !f.isLambda && f.cls < 0 && f.parent != 0;
    GradMode& entry = f_.summaries_[fn].entryGrad;
    if (decorated[fn] != GradMode::Unknown) entry = decorated[fn];
    else if (f.isLambda || nested) entry = GradMode::Unknown;
    else entry = GradMode::Enabled;
  }
  // Callers in other modules: `evaluate()` of utils.py called only under no_grad from train.py.
  std::vector<const CallerContext*> external(nf, nullptr);
  if (f_.project_)
    for (size_t fn = 1; fn < nf; ++fn) {
      if (decorated[fn] != GradMode::Unknown) continue;
      std::string q = f_.qualifiedName(static_cast<uint32_t>(fn));
      if (!q.empty()) external[fn] = f_.project_->callers(q);
      if (external[fn] && callSites_[fn].empty()) f_.summaries_[fn].entryGrad = static_cast<GradMode>(external[fn]->grad);
    }
  for (int round = 0; round < 4; ++round) {
    bool changed = false;
    for (size_t fn = 1; fn < nf; ++fn) {
      // A closure a loop hands to `optimizer.step(closure)` runs in the mode of that call.
      std::span<const NodeId> sites = callSites_[fn];
      if (sites.empty() && f_.closureRun_[fn] != kNone) sites = {&f_.closureRun_[fn], 1};
      if (decorated[fn] != GradMode::Unknown || sites.empty()) continue;
      bool first = !external[fn];
      GradMode agreed = external[fn] ? static_cast<GradMode>(external[fn]->grad) : GradMode::Unknown;
      for (NodeId call : sites) {
        NodeId site = m_.expr(call).stmt;
        GradMode at = resolve(local[site], f_.summaries_[functionOf(site)].entryGrad);
        if (first) agreed = at;
        else if (agreed != at) agreed = GradMode::Unknown;
        first = false;
      }
      if (agreed != f_.summaries_[fn].entryGrad) {
        f_.summaries_[fn].entryGrad = agreed;
        changed = true;
      }
    }
    if (!changed) break;
  }
  f_.gradMode_.assign(ns, GradMode::Unknown);
  for (NodeId s = 0; s < ns; ++s) f_.gradMode_[s] = resolve(local[s], f_.summaries_[functionOf(s)].entryGrad);
  gradIfEntered_.assign(ns, GradMode::Unknown);
  for (NodeId s = 0; s < ns; ++s) gradIfEntered_[s] = resolve(local[s], GradMode::Enabled);
}

}  // namespace oomlint
