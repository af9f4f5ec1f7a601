// Tensor layout facts for attention: which axis a score matmul contracts, and what a softmax call
// normalises. Hand-written token attention is `q @ k^T` over the per-head feature axis (the last
// axis a projection's reshape leaves), giving an L×S map; channel attention (`q^T @ k`, or q and k
// permuted so the sequence axis is last) contracts the sequence and gives a C×C map.
#include <algorithm>
#include <string>
#include <vector>

#include "facts/builder.h"
#include "facts/torch_api.h"

namespace oomlint {

namespace {

/// An integer literal, `-2` included.
bool intLiteral(const Module& m, NodeId e, long& out) {
  if (e == kNone) return false;
  const Expr& x = m.expr(e);
  if (x.kind == ExprKind::Number) {
    try {
      out = std::stol(std::string(x.text.empty() ? m.textOf(e) : x.text));
    } catch (...) {
      return false;
    }
    return true;
  }
  if (x.kind == ExprKind::UnaryOp && x.text == "-" && intLiteral(m, x.lhs, out)) {
    out = -out;
    return true;
  }
  return false;
}

bool isMatmulExpr(const Module& m, NodeId e) {
  const Expr& x = m.expr(e);
  if (x.kind == ExprKind::BinOp) return x.text == "@";
  if (x.kind != ExprKind::Call) return false;
  const std::string& c = m.canonical(e);
  if (c == "torch.matmul" || c == "torch.bmm") return true;
  std::string_view meth = methodName(m, e);
  return c.empty() && (meth == "matmul" || meth == "bmm");
}

}  // namespace

/// Follows a name to the value its last assignment gave it (one tuple unpack included).
static NodeId definitionOf(const Facts& f, const Module& m, NodeId e) {
  std::vector<NodeId> defs;
  f.definitionsOf(e, defs);
  for (auto it = defs.rbegin(); it != defs.rend(); ++it) {
    const Stmt& st = m.stmt(*it);
    if (st.kind != StmtKind::Assign) continue;
    // `q, k, v = qkv[0] * scale, qkv[1], qkv[2]`: the element that binds the name.
    const Expr& t = m.expr(st.target), &v = m.expr(st.value);
    if (t.kind == ExprKind::Container && v.kind == ExprKind::Container && t.argCount == v.argCount)
      for (uint32_t i = 0; i < t.argCount; ++i) {
        const Expr& ti = m.expr(m.args[t.firstArg + i].value);
        if (ti.kind == ExprKind::Name && ti.text == m.expr(e).text) return m.args[v.firstArg + i].value;
      }
    return st.value;
  }
  return kNone;
}

/// The integer arguments of `permute(0, 2, 1, 3)` or `permute((0, 2, 1, 3))`; false when any is not a literal.
static bool permuteIndices(const Module& m, NodeId call, std::vector<long>& out) {
  out.clear();
  const Expr& x = m.expr(call);
  const Expr* list = &x;
  if (x.argCount == 1 && m.expr(m.args[x.firstArg].value).kind == ExprKind::Container) list = &m.expr(m.args[x.firstArg].value);
  for (const Arg& a : argsOf(m, *list)) {
    long v = 0;
    if (!intLiteral(m, a.value, v)) return false;
    out.push_back(v);
  }
  return out.size() >= 2;
}

/// Methods that keep the layout of the tensor they are called on.
static bool keepsLayout(std::string_view meth) {
  return meth == "contiguous" || meth == "float" || meth == "half" || meth == "to" || meth == "type_as" || meth == "clone" ||
         meth == "bfloat16" || meth == "detach";
}

/// The rank a `.view(...)` / `.reshape(...)` gives its result, or 0 when unknown.
static long rankOf(const Facts& f, const Module& m, NodeId e, int depth = 0) {
  if (e == kNone || depth > 4) return 0;
  const Expr& x = m.expr(e);
  if (x.kind == ExprKind::Name) return rankOf(f, m, definitionOf(f, m, e), depth + 1);
  if (x.kind != ExprKind::Call) return 0;
  std::string_view meth = methodName(m, e);
  if ((meth == "view" || meth == "reshape") && x.argCount >= 2) {
    for (const Arg& a : argsOf(m, x))
      if (!a.keyword.empty() || m.expr(a.value).kind == ExprKind::Container) return 0;
    return static_cast<long>(x.argCount);
  }
  if (meth == "transpose" || meth == "contiguous" || meth == "softmax") return rankOf(f, m, receiverOf(m, e), depth + 1);
  return 0;
}

/// The operand swaps its last two axes (`k.transpose(-2, -1)`, `k.mT`, `k.permute(0, 1, 3, 2)`),
/// directly or through the names it was assigned from.
static bool transposedLastTwo(const Facts& f, const Module& m, NodeId e, long assumedRank, int depth = 0) {
  if (e == kNone || depth > 6) return false;
  const Expr& x = m.expr(e);
  switch (x.kind) {
    case ExprKind::Attribute: return x.text == "mT" || x.text == "T" || x.text == "mH";
    case ExprKind::Name: return transposedLastTwo(f, m, definitionOf(f, m, e), assumedRank, depth + 1);
    case ExprKind::BinOp: return (x.text == "*" || x.text == "/") && transposedLastTwo(f, m, x.lhs, assumedRank, depth + 1);
    case ExprKind::Call: {
      std::string_view meth = methodName(m, e);
      long a = 0, b = 0;
      if (meth == "transpose" && intLiteral(m, positionalArg(m, e, 0), a) && intLiteral(m, positionalArg(m, e, 1), b)) {
        if ((a == -1 && b == -2) || (a == -2 && b == -1)) return true;
        // `transpose(2, 3)` swaps the last two only of a 4-D tensor (`.view(B, H, T, D)`).
        long rank = rankOf(f, m, receiverOf(m, e));
        if (rank == 0) rank = assumedRank;
        return rank > 0 && std::min(a, b) == rank - 2 && std::max(a, b) == rank - 1;
      }
      if (meth == "permute") {
        // The feature axis (the largest index) moves to second-to-last: a transpose of the last two.
        std::vector<long> p;
        if (!permuteIndices(m, e, p) || p.size() < 3) return false;
        long maxIndex = *std::max_element(p.begin(), p.end());
        return p[p.size() - 2] == maxIndex && p.back() != maxIndex;
      }
      if (keepsLayout(meth) && receiverOf(m, e) != kNone) return transposedLastTwo(f, m, receiverOf(m, e), assumedRank, depth + 1);
      return false;
    }
    default: return false;
  }
}

/// What the operand's last axis is, from the `permute` that laid it out (through names, unbind,
/// indexing, elementwise ops): Yes when another axis was moved last (`.permute(2, 0, 3, 4, 1)`:
/// the sequence, a channels-last layout), No when the last axis stayed last (the projection's
/// feature axis, `.permute(2, 0, 3, 1, 4)`), Unknown without a permute to read.
static Tri sequenceAxisLast(const Facts& f, const Module& m, NodeId e, int depth = 0) {
  if (e == kNone || depth > 8) return Tri::Unknown;
  const Expr& x = m.expr(e);
  switch (x.kind) {
    case ExprKind::Name: return sequenceAxisLast(f, m, definitionOf(f, m, e), depth + 1);
    case ExprKind::Subscript: return sequenceAxisLast(f, m, x.lhs, depth + 1);
    case ExprKind::BinOp: return sequenceAxisLast(f, m, x.lhs, depth + 1);
    case ExprKind::Call: {
      std::string_view meth = methodName(m, e);
      if (meth == "permute") {
        std::vector<long> p;
        if (!permuteIndices(m, e, p)) return Tri::Unknown;
        return p.back() != *std::max_element(p.begin(), p.end()) ? Tri::Yes : Tri::No;
      }
      if (meth == "transpose") return Tri::Unknown;
      NodeId recv = receiverOf(m, e);
      if (recv != kNone && m.canonical(e).empty()) return sequenceAxisLast(f, m, recv, depth + 1);
      // `F.normalize(q, dim=-1)` keeps the layout of its input.
      if (torch_api::startsWith(m.canonical(e), "torch.")) return sequenceAxisLast(f, m, positionalArg(m, e, 0), depth + 1);
      return Tri::Unknown;
    }
    default: return Tri::Unknown;
  }
}

/// The tensor whose last two axes a transposing expression swaps (`k` of `k.transpose(-2, -1)`,
/// of `k.mT`, of `k = k.permute(0, 2, 3, 1)`).
static NodeId transposeBase(const Facts& f, const Module& m, NodeId e, int depth = 0) {
  if (e == kNone || depth > 6) return kNone;
  const Expr& x = m.expr(e);
  switch (x.kind) {
    case ExprKind::Name: return transposeBase(f, m, definitionOf(f, m, e), depth + 1);
    case ExprKind::Attribute: return x.lhs;
    case ExprKind::BinOp: return transposeBase(f, m, x.lhs, depth + 1);
    case ExprKind::Call: {
      std::string_view meth = methodName(m, e);
      if (meth == "transpose" || meth == "permute") return receiverOf(m, e);
      if (keepsLayout(meth)) return transposeBase(f, m, receiverOf(m, e), depth + 1);
      return kNone;
    }
    default: return kNone;
  }
}

Tri Facts::contractsFeatureAxis(NodeId e) const {
  const Expr& x = m_.expr(e);
  if (x.kind == ExprKind::Call && m_.canonical(e) == "torch.einsum") {
    // `einsum("bhid,bhjd->bhij", q, k)`: the contracted letter is the last of both inputs, the
    // output ends with one free letter of each, and the letter is the usual feature one.
    NodeId spec = positionalArg(m_, e, 0);
    if (spec == kNone || m_.expr(spec).kind != ExprKind::String) return Tri::Unknown;
    std::string s;
    for (char c : m_.expr(spec).text)
      if (c != ' ' && c != '"' && c != '\'' && c != 'r' && c != 'f') s += c;
    size_t arrow = s.find("->"), comma = s.find(',');
    if (arrow == std::string::npos || comma == std::string::npos || comma > arrow) return Tri::Unknown;
    std::string a = s.substr(0, comma), b = s.substr(comma + 1, arrow - comma - 1), out = s.substr(arrow + 2);
    if (a.empty() || b.empty() || out.size() < 2 || b.find(',') != std::string::npos) return Tri::Unknown;
    char contracted = a.back();
    if (b.back() != contracted || out.find(contracted) != std::string::npos) return Tri::No;
    char i = out[out.size() - 2], j = out.back();
    if (a.find(i) == std::string::npos || b.find(j) == std::string::npos || b.find(i) != std::string::npos) return Tri::Unknown;
    return (contracted == 'd' || contracted == 'c' || contracted == 'e' || contracted == 'f' || contracted == 'k') ? Tri::Yes
                                                                                                                    : Tri::Unknown;
  }
  if (!isMatmulExpr(m_, e)) return Tri::Unknown;
  NodeId lhs = kNone, rhs = kNone;
  if (x.kind == ExprKind::BinOp) {
    lhs = x.lhs;
    rhs = x.rhs;
  } else if (receiverOf(m_, e) != kNone && m_.canonical(e).empty()) {
    lhs = receiverOf(m_, e);
    rhs = positionalArg(m_, e, 0);
  } else {
    lhs = positionalArg(m_, e, 0);
    rhs = positionalArg(m_, e, 1);
  }
  if (lhs == kNone || rhs == kNone) return Tri::Unknown;
  // `bmm` takes 3-D operands; attention with `@` / matmul is usually 4-D (B, H, L, D).
  bool bmm = m_.canonical(e) == "torch.bmm" || methodName(m_, e) == "bmm";
  long assumedRank = bmm ? 3 : 4;
  bool lhsT = transposedLastTwo(*this, m_, lhs, assumedRank), rhsT = transposedLastTwo(*this, m_, rhs, assumedRank);
  if (rhsT && !lhsT) {
    // `q @ k^T`: contracts what is last in q and in k before the transpose.
    if (sequenceAxisLast(*this, m_, lhs) == Tri::Yes || sequenceAxisLast(*this, m_, transposeBase(*this, m_, rhs)) == Tri::Yes)
      return Tri::No;
    return Tri::Yes;
  }
  // `q^T @ k` with q laid out feature-last contracts the sequence: a channel map.
  if (lhsT && !rhsT && sequenceAxisLast(*this, m_, transposeBase(*this, m_, lhs)) == Tri::No) return Tri::No;
  return Tri::Unknown;
}

NodeId Facts::softmaxInput(NodeId call) const {
  const Expr& c = m_.expr(call);
  if (c.kind != ExprKind::Call) return kNone;
  const std::string& canon = m_.canonical(call);
  if (canon == "torch.softmax" || canon == "torch.nn.functional.softmax" || canon == "torch.special.softmax")
    return positionalArg(m_, call, 0);
  // `self.softmax = nn.Softmax(dim=-1)`, `self.attn_fn = partial(F.softmax, dim=-1)`.
  NodeId ctor = constructorOf(c.lhs);
  if (ctor != kNone) {
    const std::string& cc = m_.canonical(ctor);
    if (cc == "torch.nn.Softmax") return positionalArg(m_, call, 0);
    if (cc == "functools.partial") {
      const std::string& inner = m_.canonical(positionalArg(m_, ctor, 0));
      if (inner == "torch.softmax" || inner == "torch.nn.functional.softmax") return positionalArg(m_, call, 0);
    }
  }
  // `scores.softmax(-1)` on a tensor (not `self.softmax(x)` on a module or object).
  NodeId recv = receiverOf(m_, call);
  if (canon.empty() && methodName(m_, call) == "softmax" && recv != kNone) {
    Kind k = kindOf(recv);
    if (k != Kind::Module && k != Kind::Instance && k != Kind::Class) return recv;
  }
  // A function of this file that returns the softmax of a parameter (`masked_softmax(x, mask)`).
  for (uint32_t t : callTargets(call)) {
    int p = summaries_[t].softmaxOfParam;
    if (p < 0) continue;
    bool bound = m_.functions[t].cls >= 0 && m_.expr(c.lhs).kind == ExprKind::Attribute;
    return positionalArg(m_, call, static_cast<uint32_t>(bound ? p - 1 : p));
  }
  return kNone;
}

}  // namespace oomlint
