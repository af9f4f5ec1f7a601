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

/// A loop that switches every module of a collection (`for key in models.keys():
/// models[key].eval()`, `for m in self.nets.values(): m.train()`, `for _, m in d.items():
/// m.eval()`, `for m in modules: m.eval()`): the mode, and `collection` set to the collection's
/// expression (`models`). 0 for any other statement.
char collectionModeSwitch(const Module& m, NodeId loop, NodeId& collection);

}  // namespace oomlint
