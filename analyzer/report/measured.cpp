#include "report/measured.h"

#include <cmath>
#include <cstdio>

#include "util/bytes.h"

namespace oomlint::report {

std::string describeMeasured(const MeasuredCost& m) {
  if (!m.present) return {};
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
