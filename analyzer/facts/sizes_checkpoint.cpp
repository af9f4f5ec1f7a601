// What checkpointing a module class's forward whole would save over the network as written
// (sizes.h, blockCheckpointGain): the measure of OOM402's per-op checkpoints.
#include <algorithm>
#include <map>

#include "facts/facts.h"
#include "facts/sizes.h"

namespace oomlint {

std::optional<BlockCheckpointGain> Sizes::blockCheckpointGain(int32_t cls) const {
  if (cls < 0) return std::nullopt;
  for (NodeId e = 0; e < m_.exprs.size(); ++e) {
    if (m_.expr(e).kind != ExprKind::Call || !f_.isForwardCall(e) || m_.expr(e).argCount != 1) continue;
    // A training forward: in evaluation nothing is kept for backward, per op or per block.
    if (f_.evalOpener(e) != kNone || f_.inEvalContext(m_.expr(e).stmt)) continue;
    NodeId callee = moduleCalled(e);
    const KnownNetwork* net = networkOf(callee);
    if (!net) continue;
    int bytes = moduleDtype(callee, net->elementBytes);
    auto input = shapeOf(positionalArg(m_, e, 0));
    if (!bytes || !input) continue;
    // The same network with each instance of the class as one checkpointed segment of its own.
    KnownNetwork whole = *net;
    uint32_t next = 1;
    for (const LayerSize& l : whole.layers) next = std::max(next, l.checkpointSegment + 1);
    std::map<uint32_t, uint32_t> segmentOf;  // instance -> its segment
    for (LayerSize& l : whole.layers)
      for (const LayerSize::Block& b : l.blocks) {
        if (b.cls != cls) continue;
        auto [it, added] = segmentOf.try_emplace(b.instance, next);
        next += added;
        l.checkpointSegment = it->second;
        break;
      }
    if (segmentOf.empty()) continue;
    auto asWritten = forwardOn(*net, bytes, *input, false, false);
    auto blocks = forwardOn(whole, bytes, *input, false, false);
    if (!asWritten || !blocks || asWritten->saved <= blocks->saved) continue;
    return BlockCheckpointGain{asWritten->saved, blocks->saved, static_cast<int>(segmentOf.size()), asWritten->basis};
  }
  return std::nullopt;
}

}  // namespace oomlint
