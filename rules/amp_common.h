#pragma once
/// Shared by the mixed-precision rules (OOM404, OOM701, OOM702): recognising autocast contexts.

#include <string>

#include "rules/common.h"

namespace oomlint::rules {

/// Any autocast context manager or decorator, current or deprecated.
inline bool isAutocast(const std::string& c) {
  return c == "torch.autocast" || c == "torch.amp.autocast" || c == "torch.cuda.amp.autocast" ||
         c == "torch.cpu.amp.autocast" || c == "torch.amp.autocast_mode.autocast";
}

/// The deprecated spellings and what replaces them.
inline bool isDeprecatedAmp(const std::string& c) {
  return c == "torch.cuda.amp.autocast" || c == "torch.cpu.amp.autocast" || c == "torch.cuda.amp.GradScaler";
}

}  // namespace oomlint::rules
