#pragma once
/// `check --verify` on a machine without a GPU: the probes run the file's network on the CPU,
/// where a 4096-row batch through 2048-wide layers takes seconds a step. So the CPU runs measure a
/// few small batches and carry the figures to the file's own batch when they are linear in rows.

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/rule.h"

namespace oomlint {

/// The batch sizes a CPU run of `workload` (a stated network) measures: 16, 32 and 64 when a step
/// at its own batch is slow (more than 2^28 multiply-adds: rows times the layers' weights, about a
/// fifth of a second on a 2-core CPU) and the batch can be scaled; none (measure at full size)
/// otherwise.
std::vector<int64_t> cpuRowPoints(const nlohmann::json& workload);

/// The batch a stated workload (`--workload` JSON of the probe) runs: its input's first dimension.
int64_t workloadRows(const nlohmann::json& workload);

/// `workload` with its batch set to `rows`: the input's first dimension, `rows`, and a View
/// target's leading dimension when that is the batch. Null when the batch cannot be told apart.
nlohmann::json withRows(const nlohmann::json& workload, int64_t rows);

/// The growth per step and the bytes retained after the run at `fullRows`, from measurements at
/// `points` (increasing, three of them), when they are linear in rows: the middle measurement lies
/// within 5% (or 64 KiB) of the line through the outer two. They are sums of what is live, so a
/// line holds. Peaks and time per step stay the largest run's: a peak is the largest of several
/// phases, and which one sets it can change above the batches measured. False when not linear.
bool extrapolateToRows(const std::vector<int64_t>& points, const std::vector<MeasuredCost>& at, int64_t fullRows,
                       MeasuredCost& out);

}  // namespace oomlint
