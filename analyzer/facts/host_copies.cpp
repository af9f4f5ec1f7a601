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

NodeId Facts::hostCopyAfter(NodeId loop, std::string_view name) const {
  if (loop == kNone || name.empty() || name.find('.') != std::string_view::npos) return kNone;
  uint32_t fn = m_.stmt(loop).function;
  uint32_t loopEnd = m_.stmt(loop).span.end;
  // `e` holds the collection's tensors: the name itself, what a gathering call or a tensor method
  // makes of it, or a name bound after the loop from such a value (`feats = torch.cat(feats)`).
  auto holds = [&](auto&& self, NodeId e, int depth) -> bool {
    if (e == kNone || depth > 6) return false;
    const Expr& x = m_.expr(e);
    if (x.kind == ExprKind::Name) {
      if (x.text == name) return true;
      for (NodeId a : assignmentsOf(fn, x.text))
        if (m_.stmt(a).span.begin > loopEnd && self(self, m_.stmt(a).value, depth + 1)) return true;
      return false;
    }
    if (x.kind != ExprKind::Call) return false;
    if (gathers(m_.canonical(e))) return self(self, positionalArg(m_, e, 0), depth + 1);
    NodeId recv = receiverOf(m_, e);
    return recv != kNone && m_.canonical(e).empty() && self(self, recv, depth + 1);
  };
  for (NodeId s : statementsOf(fn)) {
    if (m_.stmt(s).span.begin <= loopEnd) continue;
    for (NodeId call : callsOf(s))
      if (copiesToHost(m_, call) && holds(holds, receiverOf(m_, call), 0)) return call;
  }
  return kNone;
}

}  // namespace oomlint
