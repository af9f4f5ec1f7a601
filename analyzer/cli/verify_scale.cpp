#include "cli/verify_scale.h"

#include <array>
#include <cmath>

namespace oomlint {

namespace {

/// Multiply-adds of one forward: the rows times each layer's weights (a convolution's by its
/// kernel too). A rough cost, enough to tell a run of seconds from one of minutes.
double forwardCost(const nlohmann::json& workload) {
  double weights = 0;
  for (const nlohmann::json& layer : workload.value("layers", nlohmann::json::array())) {
    double w = static_cast<double>(layer.value("in", int64_t{0})) * static_cast<double>(layer.value("out", int64_t{0}));
    if (auto kernel = layer.find("kernel"); kernel != layer.end() && kernel->is_array())
      for (const nlohmann::json& k : *kernel)
        if (k.is_number_integer()) w *= static_cast<double>(k.get<int64_t>());
    weights += w;
  }
  return weights * static_cast<double>(workload.value("rows", int64_t{0}));
}

}  // namespace

std::vector<int64_t> cpuRowPoints(const nlohmann::json& workload) {
  if (!workload.is_object() || workloadRows(workload) <= 64 || withRows(workload, 1).is_null()) return {};
  if (forwardCost(workload) <= static_cast<double>(int64_t{1} << 28)) return {};
  return {16, 32, 64};
}

int64_t workloadRows(const nlohmann::json& workload) {
  if (!workload.is_object()) return 0;
  auto shape = workload.find("shape");
  if (shape != workload.end() && shape->is_array() && !shape->empty() && (*shape)[0].is_number_integer())
    return (*shape)[0].get<int64_t>();
  auto rows = workload.find("rows");
  return rows != workload.end() && rows->is_number_integer() ? rows->get<int64_t>() : 0;
}

nlohmann::json withRows(const nlohmann::json& workload, int64_t rows) {
  int64_t full = workloadRows(workload);
  auto shape = workload.find("shape");
  if (full <= 0 || shape == workload.end() || !shape->is_array() || shape->empty()) return nullptr;
  nlohmann::json out = workload;
  // `rows` is every dimension but the last: it scales with the batch.
  int64_t perBatch = 1;
  for (size_t i = 1; i + 1 < shape->size(); ++i) perBatch *= (*shape)[i].get<int64_t>();
  out["shape"][0] = rows;
  out["rows"] = rows * perBatch;
  for (nlohmann::json& layer : out["layers"]) {
    if (layer.value("kind", "") != "View") continue;
    auto size = layer.find("size");
    if (size == layer.end() || !size->is_array() || size->empty()) return nullptr;
    if ((*size)[0] != full) return nullptr;  // a reshape that folds the batch into another dimension
    (*size)[0] = rows;
  }
  return out;
}

bool extrapolateToRows(const std::vector<int64_t>& points, const std::vector<MeasuredCost>& at, int64_t fullRows,
                       MeasuredCost& out) {
  if (points.size() != 3 || at.size() != 3) return false;
  for (const MeasuredCost& m : at)
    if (!m.present) return false;
  out = at.back();
  const double r0 = static_cast<double>(points[0]), r1 = static_cast<double>(points[1]), r2 = static_cast<double>(points[2]);
  auto carry = [&](auto field, auto& target) {
    double y0 = static_cast<double>(at[0].*field), y1 = static_cast<double>(at[1].*field), y2 = static_cast<double>(at[2].*field);
    double slope = (y2 - y0) / (r2 - r0);
    double middle = y0 + slope * (r1 - r0);
    if (std::fabs(y1 - middle) > std::max(0.05 * std::fabs(y1), 65536.0)) return false;
    target = static_cast<std::remove_reference_t<decltype(target)>>(std::llround(y0 + slope * (static_cast<double>(fullRows) - r0)));
    return true;
  };
  // Peaks stay the largest run's: a peak is the largest of several phases (the forward, the
  // backward, the optimizer's step), and which phase sets it can change between batch 64 and the
  // file's own, where three small batches cannot see it.
  return carry(&MeasuredCost::retainedAnti, out.retainedAnti) && carry(&MeasuredCost::retainedFix, out.retainedFix) &&
         carry(&MeasuredCost::growthAnti, out.growthAnti) && carry(&MeasuredCost::growthFix, out.growthFix);
}

}  // namespace oomlint
