#include "report/measured.h"

#include <cmath>
#include <cstdio>

#include "util/bytes.h"

namespace oomlint::report {

std::string describeMeasured(const MeasuredCost& m) {
  if (!m.present) return {};
  if (m.cost == "correctness")
    return "not a memory cost: the rule is about what the step computes (measured on " + m.device + ": peak " +
           humanBytes(static_cast<double>(m.peakAnti)) + " vs " + humanBytes(static_cast<double>(m.peakFix)) + " with the fix)";
  if (m.cost == "time") {
    if (m.device.rfind("cpu", 0) == 0)
      return "not measurable on CPU: the cost is GPU time (caching-allocator calls, host-to-device copies, syncs); run "
             "--verify on a CUDA device";
    char buf[160];
    double pct = m.msFix > 0 ? 100.0 * (m.msAnti - m.msFix) / m.msFix : 0;
    std::snprintf(buf, sizeof buf, ": %.2f ms vs %.2f ms per step with the fix (%+.0f%%)", m.msAnti, m.msFix, pct);
    return "measured on " + m.device + buf;
  }
  std::string s = "measured on " + m.device + ": peak " + humanBytes(static_cast<double>(m.peakAnti - m.peakFix)) + " (" +
                  humanBytes(static_cast<double>(m.peakAnti)) + " vs " + humanBytes(static_cast<double>(m.peakFix)) +
                  " with the fix)";
  if (std::fabs(m.growthAnti - m.growthFix) >= 1) s += ", growth " + humanBytes(m.growthAnti - m.growthFix) + "/step";
  if (m.msAnti > 0 && m.msFix > 0 && std::fabs(m.msAnti - m.msFix) / m.msFix > 0.1) {
    char buf[64];
    std::snprintf(buf, sizeof buf, ", %+.0f%% time/step", 100.0 * (m.msAnti - m.msFix) / m.msFix);
    s += buf;
  }
  return s;
}

}  // namespace oomlint::report
