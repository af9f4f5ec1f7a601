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

/// The previous step's gradients kept through the forward `forwardCall` by a `zero_grad` after it
/// (OOM302): what they add to the step's peak, "peak". The peak is the forward's (gradients live)
/// or the backward's (gradients freed just before it): max(forward peak + G, backward peak) less
/// max(forward peak, backward peak). Only where the forward peaks at 2·P or more of activations,
/// so that neither the optimizer's transients nor the parameter gradients the backward makes decide
/// the peak instead, and where the loss (outside the network) cannot move it by a tenth.
EstimatedCost gradientsThroughForwardOf(const Facts& f, NodeId forwardCall);

/// The state an optimizer that allocates it when built (Adagrad's `sum`) keeps for frozen
/// parameters (OOM305): P times the element size of each frozen module, "retained". Only where
/// each frozen module is sized (Facts::frozenModulesBefore lists them).
EstimatedCost frozenOptimizerStateOf(const Facts& f, const std::vector<NodeId>& frozenModules, std::string_view optimizer);

/// Micro-batch losses summed over `loop` and back-propagated once (OOM104): the graphs of all
/// micro-batches but one, kept to the backward's peak, when they outweigh its transients ("peak").
EstimatedCost summedGraphsOf(const Facts& f, NodeId summand, NodeId loop);
/// What one iteration of a carried state's update keeps (OOM107): the tensors the assignment
/// `stmt` makes from the state bound to `name` and saves for backward, all of which the next
/// iteration's graph links to ("growth"). The state's shape is read from its binding before `loop`.
EstimatedCost carriedStepOf(const Facts& f, NodeId stmt, NodeId loop, std::string_view name);
/// A `backward(create_graph=True)` (OOM106): the forward's graph plus the gradient graph the
/// backward builds over it (about the same size: it saves a gradient per saved activation), kept
/// through `.grad`. "growth" when the loop zeroes gradients in place (`set_to_none=False`) or not
/// at all, else "retained" until the next zero_grad.
EstimatedCost createGraphOf(const Facts& f, NodeId backwardCall);

/// A float32 loss over low-precision logits (OOM404), at the finding `call` (the `.float()` or the
/// loss): what the loss adds to the peak over the logits, 3·N·4 bytes for N logits: the fp32
/// log-probabilities it keeps for backward, their gradient and the logits' fp32 gradient, all live
/// at the log-softmax's backward ("peak"). Only where the logits' shape is stated.
EstimatedCost fp32LossOf(const Facts& f, NodeId call);

/// Hand-written attention (OOM401): the B·H·L·S probabilities the softmax keeps for backward (the
/// matmul with the values keeps the same tensor), which the fused kernel never materialises
/// ("saved", per call). Only where q's and k's shapes are stated, the scores reach the softmax
/// through scalar scaling alone and the probabilities reach the matmul unchanged (a dropout
/// between them keeps more).
EstimatedCost attentionProbabilitiesOf(const Facts& f, NodeId softmaxCall, NodeId scoresProduct, NodeId consumer);

/// A checkpoint around one cheap op in a module class's forward (OOM402, at the `checkpoint` call):
/// what checkpointing each instance of that class whole would save on a training forward the file
/// states, A_fwd as written less A_fwd with every instance keeping only its input ("peak": those
/// activations are all live when backward starts). Per-op checkpoints save nothing, so this is
/// the memory the finding leaves on the table.
EstimatedCost blockCheckpointOf(const Facts& f, NodeId checkpointCall);

}  // namespace oomlint::rules
