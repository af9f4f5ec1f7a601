// libFuzzer target: arbitrary bytes as a recorded run (`oomlint trace`'s JSON). Bad input must come
// back as a TraceError, never a crash; a trace that parses goes through the analysis, the join and
// every report.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "trace/analysis.h"
#include "trace/join.h"
#include "trace/render.h"
#include "trace/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace oomlint::trace;
  try {
    Trace trace = parseTrace(std::string_view(reinterpret_cast<const char*>(data), size));
    Analysis analysis = analyze(trace);
    std::vector<StaticFinding> findings;
    Join joined = join(trace, analysis, findings, nullptr);
    ReportInput in{trace, analysis, findings, joined, {}};
    (void)renderText(in);
    (void)renderJson(in);
    (void)renderSvg(in);
  } catch (const TraceError&) {
  }
  return 0;
}
