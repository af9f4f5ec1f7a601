// Accelerator modules as data: `torch.cuda` and its device-agnostic peers (`torch.xpu`,
// `torch.mps`, `torch.npu`, `torch.accelerator`) have the same caching-allocator calls. Code
// written for any device reaches them through a name: `acc = torch.cuda`, or one chosen at run
// time with an accelerator as the fallback, `getattr(torch, device_type, torch.cuda)` (a device
// type without such a module, "cpu", has no `empty_cache` to call).
#include "facts/facts.h"
#include "facts/torch_api.h"

namespace oomlint {

namespace {

using torch_api::endsWith;

/// The dotted name of an accelerator module, or of its `memory` submodule.
bool isAcceleratorModule(std::string_view canon) {
  if (endsWith(canon, ".memory")) canon.remove_suffix(7);
  return canon == "torch.cuda" || canon == "torch.xpu" || canon == "torch.mps" || canon == "torch.npu" ||
         canon == "torch.accelerator";
}

}  // namespace

bool Facts::denotesAcceleratorModule(NodeId e) const {
  if (e == kNone) return false;
  const Expr& x = m_.expr(e);
  if (isAcceleratorModule(m_.canonical(e))) return true;
  if (x.kind != ExprKind::Name || !m_.canonical(e).empty() || x.stmt == kNone) return false;
  // The one binding of the name, in its function or (for a global) at the top of the file.
  uint32_t fn = m_.stmt(x.stmt).function;
  NodeId bound = onlyBindingValue(isModuleName(fn, x.text) ? 0 : fn, x.text);
  if (bound == kNone) return false;
  const Expr& v = m_.expr(bound);
  if (isAcceleratorModule(m_.canonical(bound)) && v.kind != ExprKind::Call) return true;
  // `getattr(torch, device_type, torch.cuda)`: whichever module it picks has the accelerator's API.
  if (v.kind != ExprKind::Call || v.argCount != 3 || m_.textOf(v.lhs) != "getattr" || !m_.canonical(v.lhs).empty()) return false;
  return m_.canonical(m_.args[v.firstArg].value) == "torch" && isAcceleratorModule(m_.canonical(m_.args[v.firstArg + 2].value));
}

bool Facts::emptiesAcceleratorCache(NodeId call) const {
  const Expr& c = m_.expr(call);
  if (c.kind != ExprKind::Call || c.lhs == kNone) return false;
  const std::string& canon = m_.canonical(call);
  if (!canon.empty()) return endsWith(canon, ".empty_cache") && isAcceleratorModule(std::string_view(canon).substr(0, canon.size() - 12));
  const Expr& callee = m_.expr(c.lhs);
  return callee.kind == ExprKind::Attribute && callee.text == "empty_cache" && denotesAcceleratorModule(callee.lhs);
}

}  // namespace oomlint
