#pragma once
/// `oomlint trace` reports: text for people, JSON for tools, an SVG chart of memory per step.

#include <string>
#include <vector>

#include "trace/analysis.h"
#include "trace/join.h"
#include "trace/trace.h"

namespace oomlint::trace {

struct ReportInput {
  const Trace& trace;
  const Analysis& analysis;
  const std::vector<StaticFinding>& findings;
  const Join& join;
  std::string checkNote;  // why no findings were joined ("--no-check", "check failed: ..."), if so
};

std::string renderText(const ReportInput& in);
std::string renderJson(const ReportInput& in);
std::string renderSvg(const ReportInput& in);

/// "+1.00 MiB/step": growth with two decimals, so that 1.00 and 1.02 read apart.
std::string perStep(double bytes);

}  // namespace oomlint::trace
