#include "project/exports.h"

#include "project/hash.h"

#include <algorithm>
#include <unordered_map>

namespace oomlint::project {

namespace {

bool emptyValue(const ValueFact& v) {
  return v.history != Tri::Yes && v.device != Tri::Yes && !v.scalarLoss && v.params == 0 && v.devParams == 0;
}

/// The summary as another file sees it: node ids of this file cleared, caller-side context
/// (entry grad mode, training path) left out: each file works those out from its own calls.
Summary portable(const Summary& s) {
  Summary out = s;
  out.returns.origin = kNone;
  for (ValueFact& v : out.returnElems) v.origin = kNone;
  out.accumulateAt = kNone;
  out.storeIntoAt = kNone;
  out.entryGrad = GradMode::Enabled;
  out.calledOnTrainingPath = false;
  return out;
}

/// The call is on a training path of its function: in a loop that updates, before an update of
/// the function, or in a function that is itself called on one; with grad enabled.
bool onTrainingPath(const Facts& f, NodeId call) {
  const Module& m = f.module();
  NodeId site = m.expr(call).stmt;
  if (f.gradMode(site) == GradMode::Disabled) return false;
  uint32_t fn = m.stmt(site).function;
  if (f.summary(fn).calledOnTrainingPath) return true;
  for (NodeId l = f.enclosingLoop(site); l != kNone; l = f.enclosingLoop(l))
    if (f.reachesEvent(l, event::kBackward | event::kStep)) return true;
  for (const StepEvent& e : f.events(fn))
    if ((e.kind & (event::kBackward | event::kStep)) && (e.stmt == site ? e.call != call : f.mayPrecede(site, e.stmt)))
      return true;
  return false;
}

}  // namespace

bool isEmptySummary(const Summary& s) {
  if (!emptyValue(s.returns) || s.returnsModule || s.raisesOnly || s.returnsLoader || s.events || s.accumulatesParam || s.storesParam || s.assignsParam ||
      s.softmaxOfParam >= 0 || s.backwardParams || !s.storesParamInto.empty())
    return false;
  return std::all_of(s.returnElems.begin(), s.returnElems.end(), emptyValue);
}

uint64_t FileExports::hash() const {
  uint64_t h = 0;
  for (const auto& [local, dotted] : imports) h = mix(mix(h, local), dotted);
  for (const ExportedFunction& f : functions) h = mix(mix(h, f.name), summaryHash(f.summary, f.params, f.method));
  for (const ExportedClass& c : classes) {
    h = mix(mix(h, c.name), static_cast<uint64_t>(c.module) | static_cast<uint64_t>(c.accumulator) << 1 | static_cast<uint64_t>(c.tensor) << 2 | static_cast<uint64_t>(c.framework) << 3 | static_cast<uint64_t>(c.batches) << 12);
    for (const std::string& b : c.bases) h = mix(h, b);
    for (const std::string& x : c.methods) h = mix(h, x);
  }
  for (const ExportedCall& c : calls) {
    h = mix(mix(h, c.callee), static_cast<uint64_t>(c.grad) | static_cast<uint64_t>(c.onTrainingPath) << 8 |
                                  static_cast<uint64_t>(c.evalPositional) << 16);
    for (const std::string& k : c.evalKeywords) h = mix(h, k);
  }
  return mix(h, static_cast<uint64_t>(bindsDevice) | static_cast<uint64_t>(usesGradScaler) << 1 |
                    static_cast<uint64_t>(mentionsCuda) << 2 | static_cast<uint64_t>(importsTorch) << 3);
}

FileExports exportsOf(const Module& m, const Facts* facts, const std::function<bool(std::string_view)>& mayBeProject) {
  FileExports out;
  for (const auto& [local, dotted] : m.imports) out.imports.emplace_back(std::string(local), dotted);
  std::sort(out.imports.begin(), out.imports.end());
  for (size_t c = 0; c < m.classes.size(); ++c) {
    const Class& cls = m.classes[c];
    if (cls.function != 0) continue;
    ExportedClass ec;
    ec.name = std::string(cls.name);
    for (NodeId b : items(m, cls.bases)) {
      const std::string& canon = m.canonical(b);
      std::string base = canon.empty() ? std::string(m.textOf(b)) : canon;
      // Only a dotted name can denote a class of the project (`Generic[T]`, `make_base()` cannot).
      if (base.empty() || base.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") != std::string::npos)
        continue;
      ec.bases.push_back(base);
      if (canon == "torch.Tensor" || canon == "torch._C.TensorBase" || canon == "torch._C._TensorBase" ||
          canon == "torch.nn.Parameter" || canon == "torch.nn.parameter.Parameter")
        ec.tensor = true;
    }
    for (const Function& fn : m.functions)
      if (fn.cls == static_cast<int32_t>(c)) ec.methods.emplace_back(fn.name);
    if (facts) {
      ec.module = facts->isModuleClass(static_cast<int32_t>(c));
      ec.accumulator = facts->isAccumulatorClass(static_cast<int32_t>(c));
      ec.batches = facts->iteratesBatches(static_cast<int32_t>(c));
      ec.framework = facts->classFramework(static_cast<int32_t>(c));
    }
    out.classes.push_back(std::move(ec));
  }
  if (!facts) return out;

  // Functions whose summary says something, or that run a module's forward whatever the grad
  // mode (their callers' grad mode and eval-ness then matter): those callers ask about.
  std::vector<bool> forwards(m.functions.size(), false);
  for (NodeId e = 0; e < m.exprs.size(); ++e)
    if (m.expr(e).kind == ExprKind::Call && m.expr(e).stmt != kNone && facts->isForwardCall(e))
      forwards[m.stmt(m.expr(e).stmt).function] = true;
  for (uint32_t fn = 1; fn < m.functions.size(); ++fn) {
    if (!forwards[fn] && isEmptySummary(facts->summary(fn))) continue;
    std::string name = facts->qualifiedName(fn);
    if (name.empty()) continue;
    const Function& f = m.functions[fn];
    // Special methods run implicitly (`Cls(...)` runs __init__): no call of another module names them.
    if (f.name.size() > 4 && f.name.substr(0, 2) == "__" && f.name.substr(f.name.size() - 2) == "__") continue;
    ExportedFunction ef;
    ef.name = std::move(name);
    ef.summary = portable(facts->summary(fn));
    ef.method = f.cls >= 0;
    for (uint32_t i = 0; i < f.paramCount; ++i) ef.params.emplace_back(m.params[f.firstParam + i].name);
    out.functions.push_back(std::move(ef));
  }

  std::unordered_map<std::string, size_t> byCallee;
  std::vector<std::string> keys;
  for (NodeId e = 0; e < m.exprs.size(); ++e) {
    const Expr& x = m.expr(e);
    if (x.kind != ExprKind::Call || x.stmt == kNone) continue;
    facts->importKeys(e, keys);
    if (keys.empty()) continue;
    GradMode grad = facts->gradMode(x.stmt);
    const Facts::CallEval* eval = facts->evalArgumentsAt(e);
    int training = -1;  // worked out for calls that may reach another module only
    for (std::string& key : keys) {
      if (!mayBeProject(key)) continue;
      if (training < 0) training = onTrainingPath(*facts, e);
      auto [it, fresh] = byCallee.try_emplace(key, out.calls.size());
      if (fresh) {
        ExportedCall c;
        c.callee = std::move(key);
        c.grad = static_cast<uint8_t>(grad);
        c.onTrainingPath = training == 1;
        if (eval) {
          c.evalPositional = eval->positional;
          for (std::string_view k : eval->keywords) c.evalKeywords.emplace_back(k);
        }
        out.calls.push_back(std::move(c));
        continue;
      }
      // Joined with the module's other calls of the same name: what every call agrees on.
      ExportedCall& c = out.calls[it->second];
      if (c.grad != static_cast<uint8_t>(grad)) c.grad = static_cast<uint8_t>(GradMode::Unknown);
      c.onTrainingPath = c.onTrainingPath || training == 1;
      c.evalPositional &= eval ? eval->positional : 0;
      std::erase_if(c.evalKeywords, [&](const std::string& k) {
        return !eval || std::find(eval->keywords.begin(), eval->keywords.end(), k) == eval->keywords.end();
      });
    }
  }
  std::sort(out.calls.begin(), out.calls.end(), [](const ExportedCall& a, const ExportedCall& b) { return a.callee < b.callee; });
  out.bindsDevice = facts->bindsDevice();
  out.usesGradScaler = facts->usesGradScaler();
  out.mentionsCuda = facts->mentionsCuda();
  out.importsTorch = m.importsTorch;
  return out;
}

}  // namespace oomlint::project
