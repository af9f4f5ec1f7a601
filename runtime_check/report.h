#pragma once
/// Probe reports: a terminal table, JSON (with provenance) and an SVG chart per probe.

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "probe.h"

namespace oomlint::probe {

struct Provenance {
  std::string device;     // "cuda:0 (NVIDIA H200)" / "cpu (counting allocator)"
  std::string libtorch;   // TORCH_VERSION
  std::string driver;     // CUDA driver version, when known
  std::string date;       // UTC, ISO 8601
  std::string command;    // how it was run
};

void writeTable(std::ostream& os, const std::vector<ProbeResult>& results, const Provenance& p);
nlohmann::json toJson(const std::vector<ProbeResult>& results, const Provenance& p, const Workload& w);
/// A line chart of device bytes per step for both variants.
std::string toSvg(const ProbeResult& r);
std::string humanBytes(double bytes);

}  // namespace oomlint::probe
