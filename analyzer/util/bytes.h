#pragma once
/// Human-readable byte counts ("1.5 GiB"), shared by the analyzer's --verify output and the
/// probe's reports (header-only: the probe also builds on its own, without the analyzer library).

#include <cmath>
#include <cstdio>
#include <string>

namespace oomlint {

/// `decimals` digits after the point: 1 reads best in prose; the trace's per-step growth takes 2,
/// so that 1.00 and 1.02 MiB read apart.
inline std::string humanBytes(double bytes, int decimals = 1) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = std::fabs(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s%.*f %s", bytes < 0 ? "-" : "", decimals, v, units[u]);
  return buf;
}

}  // namespace oomlint
