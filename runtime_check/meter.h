#pragma once
/// Memory meters. A probe asks the meter for the bytes its tensors hold right now and at peak.
///
/// CUDA: the caching allocator's device statistics (what tensors hold, and what the allocator
/// reserved from the driver), plus cudaMemGetInfo for what the allocator cannot see (the CUDA
/// context, cuBLAS workspaces). CPU: a counting allocator installed with c10::SetAllocator, so every
/// CPU tensor allocation is seen.

#include <cstdint>
#include <memory>
#include <string>

namespace oomlint::probe {

struct MemorySample {
  int64_t allocated = 0;  // bytes held by live tensors
  int64_t peak = 0;       // peak of `allocated` since the last resetPeak()
  int64_t reserved = 0;   // bytes the allocator holds from the driver (CUDA) / == allocated (CPU)
  int64_t driverUsed = 0; // device memory in use per the driver (CUDA), 0 on CPU
  int64_t segments = 0;   // cumulative cudaMalloc'ed segments (CUDA), 0 on CPU
};

class Meter {
 public:
  virtual ~Meter() = default;
  virtual MemorySample sample() = 0;
  virtual void resetPeak() = 0;
  /// Waits for queued device work so samples and timings are true.
  virtual void synchronize() {}
  /// Gives cached, unused blocks back (between probe variants, so each starts alike).
  virtual void releaseCache() {}
  virtual std::string name() const = 0;
};

/// The counting CPU meter; installs its allocator on first use (process-wide).
std::unique_ptr<Meter> makeCpuMeter();

/// The CUDA meter for device `index`; nullptr when this build has no CUDA.
std::unique_ptr<Meter> makeCudaMeter(int index);

bool cudaBuilt();

}  // namespace oomlint::probe
