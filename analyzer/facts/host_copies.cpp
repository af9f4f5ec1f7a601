// Asked on demand: where a function copies a collection it filled in a loop to the host. A
// device tensor's `.cpu()` is how its values reach NumPy, a file or a metric; on a host tensor it
// does nothing. Written after the loop for the whole collection, it says what its author expects
// the loop to have collected: tensors on the GPU.
#include "facts/facts.h"

namespace oomlint {

namespace {

/// The calls that gather a collection's tensors into one, on the device they are on.
bool gathers(std::string_view canon) {
  return canon == "torch.cat" || canon == "torch.concat" || canon == "torch.concatenate" || canon == "torch.stack" ||
         canon == "torch.vstack" || canon == "torch.hstack";
}

/// `e` is a `.cpu()` (or `.to("cpu")`) call on a value.
bool copiesToHost(const Module& m, NodeId e) {
  std::string_view meth = methodName(m, e);
  if (meth == "cpu") return m.canonical(e).empty();
  if (meth != "to" || !m.canonical(e).empty()) return false;
  NodeId dev = positionalArg(m, e, 0);
  if (dev == kNone) dev = keywordArg(m, e, "device");
  return dev != kNone && m.expr(dev).kind == ExprKind::String && m.expr(dev).text.find("cpu") != std::string_view::npos;
}

}  // namespace

const std::unordered_map<std::string_view, std::vector<NodeId>>& Facts::hostCopiesIn(uint32_t fn) const {
  auto [it, fresh] = hostCopies_.try_emplace(fn);
  if (!fresh) return it->second;
  auto& copies = it->second;
  // The collections `e` holds the tensors of: a name, what a gathering call or a tensor method
  // makes of one, or a name bound (before the copy) from such a value (`feats = torch.cat(feats)`).
  auto roots = [&](auto&& self, NodeId e, NodeId copy, int depth) -> void {
    if (e == kNone || depth > 6) return;
    const Expr& x = m_.expr(e);
    if (x.kind == ExprKind::Name) {
      std::vector<NodeId>& at = copies[x.text];
      if (!at.empty() && at.back() == copy) return;  // reached already through another path
      at.push_back(copy);
      for (NodeId a : assignmentsOf(fn, x.text))
        if (m_.stmt(a).span.begin < m_.expr(copy).span.begin) self(self, m_.stmt(a).value, copy, depth + 1);
      return;
    }
    if (x.kind != ExprKind::Call) return;
    if (gathers(m_.canonical(e))) return self(self, positionalArg(m_, e, 0), copy, depth + 1);
    NodeId recv = receiverOf(m_, e);
    if (recv != kNone && m_.canonical(e).empty()) self(self, recv, copy, depth + 1);
  };
  for (NodeId s : statementsOf(fn))
    for (NodeId call : callsOf(s))
      if (copiesToHost(m_, call)) roots(roots, receiverOf(m_, call), call, 0);
  return copies;
}

NodeId Facts::hostCopyAfter(uint32_t fn, uint32_t offset, std::string_view name) const {
  if (name.empty() || name.find('.') != std::string_view::npos) return kNone;
  const auto& copies = hostCopiesIn(fn);
  auto it = copies.find(name);
  if (it == copies.end()) return kNone;
  for (NodeId call : it->second)  // in source order
    if (m_.expr(call).span.begin > offset) return call;
  return kNone;
}

}  // namespace oomlint
