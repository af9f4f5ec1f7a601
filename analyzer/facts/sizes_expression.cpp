// What one tensor expression saves for backward (Sizes::expressionCost): the step of a recurrent
// state (`h = torch.tanh(cell(torch.cat([x, h], 1)))`) keeps exactly this, once per iteration.
#include <algorithm>

#include "facts/facts.h"
#include "facts/names.h"
#include "facts/sizes.h"
#include "facts/torch_api.h"

namespace oomlint {

namespace {

constexpr int kMaxDepth = 8;
using torch_api::startsWith;

double bytesOf(const KnownShape& s) {
  double n = s.elementBytes;
  for (int64_t d : s.dims) n *= static_cast<double>(d);
  return n;
}

/// `torch.cat([a, b], dim)`: the shapes agree but along `dim`, which adds up.
std::optional<KnownShape> concatenated(const std::vector<KnownShape>& parts, int64_t dim) {
  if (parts.empty()) return std::nullopt;
  KnownShape out = parts.front();
  int64_t rank = static_cast<int64_t>(out.dims.size());
  if (dim < 0) dim += rank;
  if (dim < 0 || dim >= rank) return std::nullopt;
  for (size_t i = 1; i < parts.size(); ++i) {
    const KnownShape& p = parts[i];
    if (p.dims.size() != out.dims.size() || p.elementBytes != out.elementBytes) return std::nullopt;
    for (int64_t d = 0; d < rank; ++d) {
      if (d == dim) out.dims[static_cast<size_t>(d)] += p.dims[static_cast<size_t>(d)];
      else if (p.dims[static_cast<size_t>(d)] != out.dims[static_cast<size_t>(d)]) return std::nullopt;
    }
  }
  return out;
}

void addBasis(std::string& basis, const std::string& more) {
  if (more.empty() || basis.find(more) != std::string::npos) return;
  if (!basis.empty()) basis += "; ";
  basis += more;
}

}  // namespace

std::optional<ExpressionCost> Sizes::expressionCost(NodeId e, const ShapeBindings& given) const {
  return costIn(e, given, 0);
}

std::optional<ExpressionCost> Sizes::costIn(NodeId e, const ShapeBindings& given, int depth) const {
  if (e == kNone || depth > kMaxDepth) return std::nullopt;
  const Expr& x = m_.expr(e);
  if (x.kind == ExprKind::Name) {
    auto it = given.find(x.text);
    auto shape = it != given.end() ? std::optional<KnownShape>(it->second) : shapeOf(e);
    if (!shape) return std::nullopt;
    return ExpressionCost{*shape, 0, false, shape->source};
  }
  if (x.kind != ExprKind::Call) return std::nullopt;
  const std::string& canon = m_.canonical(e);
  std::string_view meth = methodName(m_, e);
  if (canon == "torch.cat" || canon == "torch.concat" || canon == "torch.concatenate") {
    // Concatenation saves nothing (its backward only slices the gradient).
    NodeId list = positionalArg(m_, e, 0);
    if (list == kNone || m_.expr(list).kind != ExprKind::Container) return std::nullopt;
    NodeId dimArg = keywordArg(m_, e, "dim");
    if (dimArg == kNone) dimArg = positionalArg(m_, e, 1);
    int64_t dim = 0;
    if (dimArg != kNone) {
      auto v = intValue(dimArg);
      if (!v) return std::nullopt;
      dim = *v;
    }
    std::vector<KnownShape> parts;
    ExpressionCost out;
    for (const Arg& a : argsOf(m_, m_.expr(list))) {
      auto part = costIn(a.value, given, depth + 1);
      if (!part) return std::nullopt;
      parts.push_back(part->shape);
      out.saved += part->saved;
      addBasis(out.basis, part->basis);
    }
    auto shape = concatenated(parts, dim);
    if (!shape) return std::nullopt;
    out.shape = *shape;
    out.fresh = true;
    return out;
  }
  // An elementwise activation: `torch.tanh(t)`, `F.relu(t)`, `t.sigmoid()`.
  std::optional<LayerSize::Saves> saves;
  NodeId operand = kNone;
  if (startsWith(canon, "torch.") && m_.expr(e).argCount == 1) {
    std::string_view last = names::lastComponent(canon);
    bool plain = canon == "torch." + std::string(last) || canon == "torch.nn.functional." + std::string(last);
    if (plain) saves = elementwiseSaves(last);
    operand = positionalArg(m_, e, 0);
  } else if (canon.empty() && !meth.empty() && m_.expr(e).argCount == 0) {
    saves = elementwiseSaves(meth);
    operand = receiverOf(m_, e);
  }
  if (saves) {
    auto in = costIn(operand, given, depth + 1);
    if (!in) return std::nullopt;
    ExpressionCost out = *in;
    if (*saves == LayerSize::Saves::Output) out.saved += bytesOf(in->shape);
    else if (in->fresh) out.saved += bytesOf(in->shape);  // an input made here lives on for backward
    out.fresh = true;
    return out;
  }
  // A dtype conversion saves nothing; a new dtype is a new tensor.
  if (canon.empty() && !meth.empty() && conversionBytes(meth) && m_.expr(e).argCount == 0) {
    auto in = costIn(receiverOf(m_, e), given, depth + 1);
    if (!in) return std::nullopt;
    ExpressionCost out = *in;
    int bytes = conversionBytes(meth);
    out.fresh = in->fresh || bytes != in->shape.elementBytes;
    out.shape.elementBytes = bytes;
    return out;
  }
  // A forward of a network whose layers and widths the file states.
  if (!f_.isForwardCall(e) || x.argCount != 1) return std::nullopt;
  NodeId callee = moduleCalled(e);
  const KnownNetwork* net = networkOf(callee);
  if (!net) return std::nullopt;
  int bytes = moduleDtype(callee, net->elementBytes);
  auto in = costIn(positionalArg(m_, e, 0), given, depth + 1);
  if (!bytes || !in || in->shape.elementBytes != bytes) return std::nullopt;
  bool eval = f_.evalOpener(e) != kNone || f_.inEvalContext(x.stmt);
  auto fwd = forwardOn(*net, bytes, in->shape, eval, in->fresh);
  if (!fwd) return std::nullopt;
  ExpressionCost out;
  out.shape = in->shape;
  out.shape.dims.back() = fwd->outFeatures;
  out.saved = in->saved + fwd->saved;
  out.fresh = true;
  out.basis = net->source;
  addBasis(out.basis, in->basis);
  return out;
}

}  // namespace oomlint
