#pragma once
/// Inside the Python front end: how the incremental document (python/incremental.h) joins the
/// model fragments of its chunks, each lowered in its own coordinates, into one Module.

#include <cstdint>
#include <vector>

#include "model/model.h"

namespace oomlint::python {

/// Appends fragment `f` (lowered in its own coordinates) to `m`, moved to `byteOffset` /
/// `lineOffset`. Its top-level statements go to `topLevel`; `m` gets its module body at the end,
/// where a whole-file lowering puts it.
void splice(Module& m, const Module& f, uint32_t byteOffset, uint32_t lineOffset, std::vector<NodeId>& topLevel);
/// What splice() gathers module-wide from `f`: its imports (a later one rebinds a name) and flags.
/// Also for a fragment whose arrays `m` already holds from an earlier splice.
void addModuleWide(Module& m, const Module& f);

}  // namespace oomlint::python
