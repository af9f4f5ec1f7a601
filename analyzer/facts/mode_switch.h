#pragma once
/// Reading `model.eval()` / `model.train(flag)` calls: shared by the evaluation contexts and the
/// inference-wrapper pass.

#include "model/model.h"

namespace oomlint {

/// The mode the outermost `eval()` / `train(...)` of a chain of module methods that return the
/// module (`to`, `cuda`, `half`, ...) leaves it in: 'e' (`eval()`, `train(False)`), 't'
/// (`train()`, `train(True)`), or 0 for none or a flag not written as a literal. `base` is the
/// chain's receiver (`model` in `model.cuda().eval()`).
char moduleModeSwitch(const Module& m, NodeId call, NodeId& base);

}  // namespace oomlint
