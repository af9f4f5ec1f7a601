#pragma once
/// What a recorded run says about memory: the growth per step and the lines whose blocks outlive
/// their step, the peak and what is live at it, fragmentation, and where an out-of-memory error
/// struck. docs/trace.md says how each figure is computed.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "trace/trace.h"

namespace oomlint::trace {

/// What a block is, read from the frames that allocated it (docs/trace.md lists the rules).
enum class Kind : uint8_t { Parameters, Gradients, OptimizerState, Activations, Other };
constexpr size_t kKinds = 5;
const char* kindName(Kind kind);

/// Blocks that share their innermost frame in the program's own files.
struct LineGroup {
  int32_t frame = -1;  // a frame id; -1: no frame of the program's own files
  int64_t bytes = 0;
  int64_t blocks = 0;
  int64_t steps = 0;      // growth: how many steps left a block behind
  double perStep = 0;     // growth: bytes / the steps measured
  std::vector<uint32_t> stacks;  // the distinct stacks of its blocks (the join reads their frames)
  std::vector<uint32_t> hooks;   // growth: hooks that were called with its blocks in the step that made them
  std::array<int64_t, kKinds> kinds{};  // peak: bytes of each kind
};

struct Analysis {
  size_t steps = 0;
  /// Growth: least-squares slope of the allocated (reserved) bytes at each step's end, over
  /// steps 2..n (step 1 creates the gradients and the optimizer's state).
  bool slopeKnown = false;
  double slopeAllocated = 0, slopeReserved = 0;
  /// Blocks allocated in steps 2..n-1 and still live when step n ended, by line: `growth` when
  /// at least three of those steps (all of them, when fewer) left blocks, `keptOnce` otherwise.
  int64_t window = 0;
  std::vector<LineGroup> growth, keptOnce;
  double growthPerStep = 0;  // the growth groups' bytes per step, summed
  /// The highest allocated total while the run was recorded, and what was live at it.
  int64_t peakAllocated = 0, peakReserved = 0, peakStep = 0;
  std::array<int64_t, kKinds> peakKinds{};
  std::vector<LineGroup> peak;
  /// An out-of-memory event in the allocator's history.
  bool oom = false;
  int64_t oomStep = 0, oomRequested = 0, oomFree = 0;
  int32_t oomFrame = -1;
  /// The OOM's line in the program's own files: from the event's stack, else the error's traceback.
  std::string oomFile;
  int64_t oomLine = 0;
  std::vector<std::string> notes;  // what limits the figures above (lost history, too few steps)
};

Analysis analyze(const Trace& trace);

/// The innermost frame of stack `s` in one of the program's own files, or -1.
int32_t userFrame(const Trace& trace, uint32_t stack);

}  // namespace oomlint::trace
