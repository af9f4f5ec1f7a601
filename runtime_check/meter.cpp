#include "meter.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <unordered_map>

#ifdef OOMLINT_PROBE_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime_api.h>
#endif

namespace oomlint::probe {
namespace {

std::atomic<int64_t> gCurrent{0};
std::atomic<int64_t> gPeak{0};

/// What the wrapped allocator gave us for each live block. PyTorch requires a CPU DataPtr's
/// context to be its data pointer (raw_allocate asserts it), so the bookkeeping lives here,
/// keyed by that pointer, instead of in a context object.
struct Block {
  void* context;
  c10::DeleterFnPtr deleter;
  size_t bytes;
};
std::mutex gMutex;
std::unordered_map<void*, Block>& blocks() {
  static auto* m = new std::unordered_map<void*, Block>();  // outlives static destruction
  return *m;
}

void countedDelete(void* data) {
  Block b{};
  {
    std::lock_guard<std::mutex> lock(gMutex);
    auto it = blocks().find(data);
    if (it == blocks().end()) return;
    b = it->second;
    blocks().erase(it);
  }
  gCurrent -= static_cast<int64_t>(b.bytes);
  if (b.deleter) b.deleter(b.context);
}

/// Wraps the default CPU allocator and counts live bytes. Written against both LibTorch 1.13
/// (`allocate` const) and 2.x (`allocate` non-const, `copy_data` required): both overloads exist,
/// and the one the base class declares is the override.
class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* base) : base_(base) {}

  c10::DataPtr allocate(size_t n) const { return wrap(n); }
  c10::DataPtr allocate(size_t n) { return wrap(n); }
  c10::DeleterFnPtr raw_deleter() const override { return &countedDelete; }
  void copy_data(void* dest, const void* src, std::size_t count) const { std::memcpy(dest, src, count); }

 private:
  c10::DataPtr wrap(size_t n) const {
    c10::DataPtr inner = base_->allocate(n);
    void* data = inner.get();
    c10::DeleterFnPtr deleter = inner.get_deleter();
    void* context = inner.move_context().release();
    if (data == nullptr) {
      // Zero-byte allocations: nothing to count; hand the original back.
      return c10::DataPtr(data, context, deleter, c10::Device(c10::DeviceType::CPU));
    }
    {
      std::lock_guard<std::mutex> lock(gMutex);
      blocks()[data] = Block{context, deleter, n};
    }
    int64_t now = gCurrent += static_cast<int64_t>(n);
    int64_t seen = gPeak.load();
    while (now > seen && !gPeak.compare_exchange_weak(seen, now)) {
    }
    return c10::DataPtr(data, data, &countedDelete, c10::Device(c10::DeviceType::CPU));
  }
  c10::Allocator* base_;
};

class CpuMeter final : public Meter {
 public:
  CpuMeter() {
    static std::once_flag once;
    std::call_once(once, [] {
      static CountingAllocator counting(c10::GetAllocator(c10::DeviceType::CPU));
      c10::SetAllocator(c10::DeviceType::CPU, &counting, /*priority=*/255);
    });
  }
  MemorySample sample() override {
    MemorySample s;
    s.allocated = gCurrent.load();
    s.peak = gPeak.load();
    s.reserved = s.allocated;
    return s;
  }
  void resetPeak() override { gPeak = gCurrent.load(); }
  std::string name() const override { return "cpu (counting allocator)"; }
};

#ifdef OOMLINT_PROBE_CUDA
class CudaMeter final : public Meter {
 public:
  explicit CudaMeter(int index) : index_(index) {}
  MemorySample sample() override {
    namespace alloc = c10::cuda::CUDACachingAllocator;
    auto stats = alloc::getDeviceStats(static_cast<c10::DeviceIndex>(index_));
    MemorySample s;
    s.allocated = stats.allocated_bytes[0].current;
    s.peak = stats.allocated_bytes[0].peak;
    s.reserved = stats.reserved_bytes[0].current;
    s.segments = stats.segment[0].allocated;
    size_t freeBytes = 0, total = 0;
    if (cudaMemGetInfo(&freeBytes, &total) == cudaSuccess) s.driverUsed = static_cast<int64_t>(total - freeBytes);
    return s;
  }
  void resetPeak() override { c10::cuda::CUDACachingAllocator::resetPeakStats(static_cast<c10::DeviceIndex>(index_)); }
  void synchronize() override { cudaDeviceSynchronize(); }
  void releaseCache() override { c10::cuda::CUDACachingAllocator::emptyCache(); }
  std::string name() const override {
    cudaDeviceProp prop{};
    cudaGetDeviceProperties(&prop, index_);
    return std::string("cuda:") + std::to_string(index_) + " (" + prop.name + ")";
  }

 private:
  int index_;
};
#endif

}  // namespace

std::unique_ptr<Meter> makeCpuMeter() { return std::make_unique<CpuMeter>(); }

std::unique_ptr<Meter> makeCudaMeter([[maybe_unused]] int index) {
#ifdef OOMLINT_PROBE_CUDA
  return std::make_unique<CudaMeter>(index);
#else
  return nullptr;
#endif
}

bool cudaBuilt() {
#ifdef OOMLINT_PROBE_CUDA
  return true;
#else
  return false;
#endif
}

}  // namespace oomlint::probe
