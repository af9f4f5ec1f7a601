// Part of pass 4 (values), after the backward evidence: a dict whose history the evidence proves
// through one entry only (`out = module.training_step(batch)`, `out["loss"].backward()`) and whose
// entry is then replaced by a copy without history (`out["loss"] = out["loss"].detach()`) is no
// longer known to carry history where that replacement runs first: what its other entries hold
// is unknown, as it was before the evidence.
#include "facts/builder.h"

namespace oomlint {

void FactsBuilder::forgetDetachedEntries() {
  if (entryProof_.empty()) return;
  for (NodeId r = 0; r < m_.exprs.size(); ++r) {
    const Expr& x = m_.expr(r);
    if (x.kind != ExprKind::Name || x.stmt == kNone || f_.values_[r].history != Tri::Yes) continue;
    NodeId site = f_.useSite_[r];
    if (site == kNone || site == x.stmt) continue;
    auto proof = entryProof_.find(site);
    if (proof == entryProof_.end() || proof->second == "*") continue;
    NodeId value = m_.stmt(site).value;
    // Proven by the evidence alone (a forward's own output keeps its history).
    if (value == kNone || historyEvidence_.empty() || historyEvidence_[value] == kNone) continue;
    // Back from the read to the assignment, 256 statements at most: a long function stays linear.
    const std::vector<NodeId>& stmts = f_.statementsOf(m_.stmt(x.stmt).function);
    uint32_t from = f_.posInFn_[site] + 1, to = f_.posInFn_[x.stmt];
    for (uint32_t i = to, budget = 256; i-- > from && budget-- > 0;) {
      const Stmt& st = m_.stmt(stmts[i]);
      if (st.kind != StmtKind::Assign || st.targets.count != 1 || st.value == kNone) continue;
      const Expr& t = m_.expr(st.target);
      if (t.kind != ExprKind::Subscript || m_.expr(t.lhs).kind != ExprKind::Name || m_.expr(t.lhs).text != x.text) continue;
      if (t.rhs == kNone || m_.expr(t.rhs).kind != ExprKind::String || stringContents(m_.expr(t.rhs).text) != proof->second) continue;
      if (f_.values_[st.value].history != Tri::No || !f_.dominates(stmts[i], x.stmt)) continue;
      f_.values_[r].history = Tri::Unknown;
      break;
    }
  }
}

}  // namespace oomlint
