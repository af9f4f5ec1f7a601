#pragma once
/// Shared by the data-loading rules (OOM505, OOM601, OOM602): recognising DataLoader calls.

#include "rules/common.h"

namespace oomlint::rules {

inline bool isDataLoaderCall(const Module& m, NodeId call) {
  const std::string& c = m.canonical(call);
  return c == "torch.utils.data.DataLoader" || c == "torch.utils.data.dataloader.DataLoader";
}

/// The local function a `collate_fn=` / argument names, or UINT32_MAX.
inline uint32_t localFunctionNamed(const Module& m, NodeId e) {
  if (e == kNone || m.expr(e).kind != ExprKind::Name) return UINT32_MAX;
  for (uint32_t i = 1; i < m.functions.size(); ++i)
    if (!m.functions[i].isLambda && m.functions[i].name == m.expr(e).text) return i;
  return UINT32_MAX;
}

/// The local class called as `Cls(...)`, or -1.
inline int32_t localClassCalled(const Module& m, NodeId call) {
  if (call == kNone || m.expr(call).kind != ExprKind::Call) return -1;
  NodeId callee = m.expr(call).lhs;
  if (m.expr(callee).kind != ExprKind::Name) return -1;
  for (size_t c = 0; c < m.classes.size(); ++c)
    if (m.classes[c].name == m.expr(callee).text) return static_cast<int32_t>(c);
  return -1;
}

}  // namespace oomlint::rules
