#pragma once
/// The probes' network and input: the checked file's own layers when `--workload` states them
/// (shape-faithful), else the generic MLP of the workload's width and depth.

#include <torch/torch.h>

#include "probe.h"

namespace oomlint::probe {

/// The stated layers (Linear ... LSTM, see LayerSpec) in order, or the generic MLP, on the
/// workload's device and dtype.
torch::nn::Sequential makeMlp(const Workload& w);

/// One input for makeMlp's network: the stated shape (token ids for an Embedding first), else
/// rows x the first layer's width, else the generic batch x width.
torch::Tensor input(const Workload& w);

}  // namespace oomlint::probe
