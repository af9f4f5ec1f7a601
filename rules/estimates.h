#pragma once
/// Static cost estimates shared by the memory rules: the rule's formula, filled in with the sizes
/// the file states (facts/sizes.h). Each returns an absent estimate when a size is unknown.

#include "engine/rule.h"

namespace oomlint::rules {

/// The autograd graph `value` keeps alive, per iteration: the activations its forward saves
/// (A_fwd) plus what its loss saves (one output-sized tensor, in the loss's dtype). OOM101,
/// OOM107: "growth"; OOM105: "retained".
EstimatedCost graphOf(const Facts& f, NodeId value, std::string measure);
/// What storing `value` with its graph keeps beyond storing it detached, per iteration (OOM102):
/// the graph, less the stored tensor itself when the graph saves it.
EstimatedCost storedGraphOf(const Facts& f, NodeId value);
/// The bytes of the device tensor `value` kept per iteration (OOM103): a forward's output.
EstimatedCost outputOf(const Facts& f, NodeId value);
/// An evaluation forward with autograd on (OOM201): what it saves plus its output, less the two
/// consecutive activations a forward under no_grad holds at most.
EstimatedCost gradForwardOf(const Facts& f, NodeId forwardCall);
/// Gradient buffers kept through the forward (OOM301): P times the parameters' element size, for
/// the module `zero_grad` runs on or the one the optimizer was built over.
EstimatedCost gradientBuffersOf(const Facts& f, NodeId zeroGradCall);

}  // namespace oomlint::rules
