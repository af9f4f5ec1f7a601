// Attention dataflow facts: where a softmax's scores come from (an L×S score matmul), where its
// probabilities go (a matmul with the values, or out of the function), and whether the function
// has a fused kernel beside it. Built on the def-use index, so each question costs the uses it
// reads, not the length of the function.
#include <algorithm>
#include <string_view>
#include <vector>

#include "facts/builder.h"
#include "facts/torch_api.h"

namespace oomlint {

namespace {

/// `@`, `matmul`, `bmm` or `einsum`: what multiplies scores or probabilities.
bool isProduct(const Module& m, NodeId e) {
  const Expr& x = m.expr(e);
  if (x.kind == ExprKind::BinOp) return x.text == "@";
  if (x.kind != ExprKind::Call) return false;
  const std::string& c = m.canonical(e);
  if (c == "torch.matmul" || c == "torch.bmm" || c == "torch.einsum") return true;
  std::string_view meth = methodName(m, e);
  return c.empty() && (meth == "matmul" || meth == "bmm");
}

bool isFusedAttentionKernel(std::string_view name) {
  return name == "scaled_dot_product_attention" || name == "flash_attn_func" || name == "flash_attn_varlen_func" ||
         name == "flash_attn_qkvpacked_func" || name == "memory_efficient_attention" || name == "flex_attention";
}

/// `return attn` / `return out, attn`: the probabilities themselves leave the function.
bool returnsAlias(const Module& m, NodeId value, const std::vector<std::string_view>& aliases) {
  if (value == kNone) return false;
  auto isAlias = [&](NodeId e) {
    const Expr& x = m.expr(e);
    return x.kind == ExprKind::Name && std::find(aliases.begin(), aliases.end(), x.text) != aliases.end();
  };
  if (isAlias(value)) return true;
  const Expr& v = m.expr(value);
  if (v.kind == ExprKind::Container)
    for (const Arg& a : argsOf(m, v))
      if (isAlias(a.value)) return true;
  return false;
}

}  // namespace

bool Facts::callsFusedAttention(uint32_t fn) const {
  if (fusedAttention_.empty()) fusedAttention_.assign(m_.functions.size(), 0);
  uint8_t& known = fusedAttention_[fn];
  if (known == 0) {
    known = 1;
    for (NodeId s : fnStmts_[fn])
      for (NodeId c : stmtCalls_[s])
        if (isFusedAttentionKernel(calleeName(m_, c))) known = 2;
  }
  return known == 2;
}

NodeId Facts::attentionScores(NodeId e) const {
  std::vector<NodeId> work{e};
  std::vector<NodeId> seen, defs;
  for (size_t i = 0; i < work.size() && i < 24; ++i) {
    NodeId cur = work[i];
    NodeId found = kNone;
    bool channel = false;
    forSubtree(cur, [&](NodeId x) {
      if (found != kNone || !isProduct(m_, x)) return;
      Tri c = contractsFeatureAxis(x);
      if (c == Tri::Yes) found = x;
      if (c == Tri::No) channel = true;
    });
    if (found != kNone) return found;
    if (channel) return kNone;
    forSubtree(cur, [&](NodeId x) {
      if (m_.expr(x).kind != ExprKind::Name || m_.expr(x).canonical != 0) return;
      definitionsOf(x, defs);
      for (NodeId site : defs) {
        NodeId v = m_.stmt(site).value;
        if (v == kNone || std::find(seen.begin(), seen.end(), v) != seen.end()) continue;
        seen.push_back(v);
        work.push_back(v);
      }
    });
  }
  return kNone;
}

NodeId Facts::probabilitiesConsumer(NodeId softmax) const {
  NodeId s = m_.expr(softmax).stmt;
  if (s == kNone) return kNone;
  const Stmt& st = m_.stmt(s);
  // `softmax(...) @ v` in one expression.
  if (st.value != kNone) {
    NodeId direct = kNone;
    const Span& ss = m_.expr(softmax).span;
    forSubtree(st.value, [&](NodeId x) {
      const Span& xs = m_.expr(x).span;
      bool inside = xs.begin >= ss.begin && xs.end <= ss.end;
      if (direct == kNone && isProduct(m_, x) && xs.begin <= ss.begin && xs.end >= ss.end && x != softmax && !inside) direct = x;
    });
    if (direct != kNone) return direct;
  }
  if (st.kind != StmtKind::Assign || st.target == kNone || m_.expr(st.target).kind != ExprKind::Name) return kNone;
  uint32_t fn = st.function;
  auto byPosition = [&](NodeId a, uint32_t pos) { return m_.stmt(a).span.begin < pos; };
  auto readsName = [&](NodeId stmt, std::string_view name) {
    const std::vector<NodeId>& readers = readersOf(fn, name);
    auto it = std::lower_bound(readers.begin(), readers.end(), m_.stmt(stmt).span.begin, byPosition);
    return it != readers.end() && *it == stmt;
  };
  // One alias: its readers from where it was bound up to the statement that rebinds it without reading it.
  struct Alias {
    std::string_view name;
    std::vector<NodeId>::const_iterator next, end;
  };
  std::vector<Alias> aliases;
  auto addAlias = [&](std::string_view name, NodeId boundAt) {
    uint32_t from = m_.stmt(boundAt).span.end;
    const std::vector<NodeId>& readers = readersOf(fn, name);
    const std::vector<NodeId>& assigns = assignmentsOf(fn, name);
    uint32_t until = UINT32_MAX;
    for (auto a = std::lower_bound(assigns.begin(), assigns.end(), from, byPosition); a != assigns.end(); ++a)
      if (!readsName(*a, name) && !exclusive(*a, boundAt)) {  // a rebinding on another branch leaves this one
        until = m_.stmt(*a).span.begin;
        break;
      }
    aliases.push_back(Alias{name, std::lower_bound(readers.begin(), readers.end(), from, byPosition),
                            std::lower_bound(readers.begin(), readers.end(), until, byPosition)});
  };
  addAlias(m_.expr(st.target).text, s);
  std::vector<std::string_view> names{m_.expr(st.target).text};
  NodeId multiplied = kNone;
  for (;;) {
    // The next statement, in source order, that reads any alias.
    NodeId t = kNone;
    for (const Alias& a : aliases)
      if (a.next != a.end && (t == kNone || m_.stmt(*a.next).span.begin < m_.stmt(t).span.begin)) t = *a.next;
    if (t == kNone) break;
    for (Alias& a : aliases)
      if (a.next != a.end && *a.next == t) ++a.next;
    const Stmt& ts = m_.stmt(t);
    if (ts.kind == StmtKind::Return && returnsAlias(m_, ts.value, names)) return kNone;  // probabilities are wanted
    if (ts.kind == StmtKind::Assign && ts.target != kNone && m_.expr(ts.target).kind == ExprKind::Attribute) return kNone;
    std::string_view meth = ts.kind == StmtKind::Expr ? methodName(m_, ts.value) : std::string_view{};
    if (meth == "append" || meth == "extend") return kNone;
    NodeId mm = kNone;
    forSubtree(ts.value, [&](NodeId x) {
      if (mm != kNone || !isProduct(m_, x)) return;
      for (std::string_view a : names)
        if (mentionsPath(x, a)) mm = x;
    });
    if (mm != kNone) {
      if (multiplied == kNone) multiplied = mm;
    } else if (ts.kind == StmtKind::Assign && ts.target != kNone && m_.expr(ts.target).kind == ExprKind::Name) {
      std::string_view renamed = m_.expr(ts.target).text;  // `attn = dropout(attn)`, `p = attn.float()`
      if (std::find(names.begin(), names.end(), renamed) == names.end() && aliases.size() < 8) {
        names.push_back(renamed);
        addAlias(renamed, t);
      }
    }
  }
  return multiplied;
}

}  // namespace oomlint
