#pragma once
/// How a measured cost (`check --verify`) reads in every format: formatting is the report's job,
/// so the text, JSON and SARIF writers and the LSP hover all say it the same way.

#include <string>

#include "engine/rule.h"

namespace oomlint::report {

/// One human line: "measured on cuda:0 (...): peak +3.0 GiB (4.0 GiB vs 1.0 GiB), growth +2.2 MiB/step".
std::string describeMeasured(const MeasuredCost& m);

}  // namespace oomlint::report
