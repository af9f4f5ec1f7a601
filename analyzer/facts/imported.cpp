// Calls into other modules of the project: which imported function a call runs (a function
// imported by name or through its module, a method of an instance of an imported class, a
// method inherited from a base class of another module), and one view of a callee whether it is
// this file's or imported, for the passes and rules that map a call's arguments onto it.
#include "facts/facts.h"

namespace oomlint {

namespace {

bool isSuper(const Module& m, NodeId e) {
  const Expr& x = m.expr(e);
  return x.kind == ExprKind::Call && m.expr(x.lhs).kind == ExprKind::Name && m.expr(x.lhs).text == "super";
}

}  // namespace

NodeId Facts::Callee::argFor(const Module& m, NodeId call, uint32_t i) const {
  if (i >= params.size() || (bound && i == 0)) return kNone;
  NodeId a = keywordArg(m, call, params[i]);
  return a != kNone ? a : positionalArg(m, call, bound ? i - 1 : i);
}

std::string Facts::qualifiedName(uint32_t fn) const {
  if (fn == 0 || fn >= m_.functions.size()) return {};
  const Function& f = m_.functions[fn];
  if (f.isLambda) return {};
  if (f.cls < 0) return f.parent == 0 ? std::string(f.name) : std::string();
  const Class& c = m_.classes[static_cast<size_t>(f.cls)];
  if (c.function != 0) return {};
  return std::string(c.name) + "." + std::string(f.name);
}

void Facts::importKeys(NodeId call, std::vector<std::string>& out) const {
  out.clear();
  if (call >= m_.exprs.size()) return;
  const Expr& c = m_.expr(call);
  if (c.kind != ExprKind::Call || c.lhs == kNone || !callTargets(call).empty()) return;
  const std::string& canon = m_.canonical(call);
  if (!canon.empty()) {
    out.push_back(canon);
    return;
  }
  const Expr& callee = m_.expr(c.lhs);
  if (callee.kind != ExprKind::Attribute) return;
  std::string method(callee.text);
  int32_t cls = -1;  // a class of this file whose bases may define the method
  if (isSelfName(m_, callee.lhs) || isSuper(m_, callee.lhs)) {
    if (m_.classes.empty()) return;
    uint32_t caller = c.stmt == kNone ? 0 : m_.stmt(c.stmt).function;
    cls = classOfFunction(caller);
  } else if (cacheAll_ && !m_.classes.empty()) {
    cls = classOf(callee.lhs);  // `log.record(loss)` on an instance of a class of this file
  }
  if (cls >= 0) {
    // A method the class inherits from a base defined in another module: the bases of the class
    // and of its bases in this file, nearest first.
    std::vector<int32_t> pending{cls};
    for (size_t i = 0; i < pending.size() && i < 16; ++i) {
      if (pending[i] < 0) continue;
      for (NodeId b : items(m_, m_.classes[static_cast<size_t>(pending[i])].bases)) {
        const std::string& base = m_.canonical(b);
        if (!base.empty()) {
          out.push_back(base + "." + method);
          continue;
        }
        for (size_t o = 0; o < m_.classes.size(); ++o)
          if (m_.classes[o].name == m_.textOf(b) && static_cast<int32_t>(o) != pending[i]) pending.push_back(static_cast<int32_t>(o));
      }
    }
    return;
  }
  // `meter.update(loss)` on an instance of a class imported from another module.
  if (!cacheAll_) return;  // receivers' kinds are still being worked out
  Kind k = kindOf(callee.lhs);
  if (k != Kind::Instance && k != Kind::Module && k != Kind::Loader) return;
  const std::string& ctor = m_.canonical(constructorOf(callee.lhs));
  if (!ctor.empty()) out.push_back(ctor + "." + method);
}

const ImportedFunction* Facts::importedCallee(NodeId call) const {
  if (!project_ || call >= m_.exprs.size() || m_.expr(call).kind != ExprKind::Call) return nullptr;
  // Before the kinds are final only the names a call spells (and inherited `self.` methods) can
  // be asked, and their answers never change: remembered then too. Calls on instances wait.
  const Expr& callee = m_.expr(m_.expr(call).lhs);
  bool spelled = !m_.canonical(call).empty() || callee.kind != ExprKind::Attribute || isSelfName(m_, callee.lhs) || isSuper(m_, callee.lhs);
  if (cacheAll_ || spelled) {
    auto it = importedCallee_.find(call);
    if (it != importedCallee_.end()) return it->second;
  }
  const ImportedFunction* found = nullptr;
  std::vector<std::string> keys;
  importKeys(call, keys);
  for (const std::string& k : keys)
    if ((found = project_->function(k))) break;
  if (cacheAll_ || spelled) importedCallee_.emplace(call, found);
  return found;
}

Facts::Callee Facts::calleeFunction(uint32_t target) const {
  Callee out;
  const Function& fn = m_.functions[target];
  out.summary = &summaries_[target];
  out.bound = fn.cls >= 0;
  for (uint32_t i = 0; i < fn.paramCount; ++i) out.params.push_back(m_.params[fn.firstParam + i].name);
  return out;
}

Facts::Callee Facts::calleeOf(NodeId call) const {
  Callee out;
  std::span<const uint32_t> targets = callTargets(call);
  if (!targets.empty()) {
    // An abstract method (it only raises) stands for the override that runs.
    for (uint32_t t : targets)
      if (!summaries_[t].raisesOnly) return calleeFunction(t);
    return calleeFunction(targets.front());
  }
  const ImportedFunction* imp = importedCallee(call);
  if (!imp) return out;
  out.summary = imp->summary;
  out.bound = imp->bound;
  for (const std::string& p : imp->params) out.params.push_back(p);
  return out;
}

}  // namespace oomlint
