#pragma once
/// A recorded training run (`oomlint trace`): the CUDA caching allocator's history of one device,
/// cut into steps, as the bootstrap (packaging/python/oomlint/trace.py) or oomlint/trace.h writes
/// it. docs/trace.md gives the JSON schema; this is its in-memory form, flat and id-addressed like
/// the program model, so a million events cost a few tens of megabytes.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace oomlint::trace {

/// A malformed or unreadable trace. The message says where ("events[12]: stack 99 ...").
struct TraceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct SourceFile {
  std::string path;   // relative to the run's folder when it was under it
  bool user = false;  // the program's own file: not the standard library, site-packages or C++
};

struct Frame {
  uint32_t file = 0;
  uint32_t line = 0;
  std::string name;
};

enum class Action : uint8_t { Alloc, Free, SegmentAlloc, SegmentFree, Oom };

struct Event {
  Action action = Action::Alloc;
  uint32_t stack = 0;
  uint64_t addr = 0;  // Oom: the device's free bytes
  int64_t size = 0;   // Oom: the bytes asked for
};

/// The allocator's counters when step `index` ended, and where its mark fell in `events`.
struct Step {
  int64_t index = 0;
  int64_t allocated = 0, reserved = 0, peakAllocated = 0;
  int64_t event = -1;  // events before this index belong to this step or earlier; -1: mark lost
  double seconds = 0;  // since the run started
};

/// A hook function of the program's own files (module or tensor hook), by its lines.
struct Hook {
  uint32_t file = 0;
  uint32_t firstLine = 0, lastLine = 0;
  std::string name;
};

/// A tensor a hook was called with: a hook that keeps a layer's output allocates nothing, so this
/// is how a kept block is tied to it.
struct HookCall {
  int64_t step = 0;  // the step the call fell in (1-based)
  uint64_t addr = 0; // the tensor's data pointer
  uint32_t hook = 0;
};

struct RunInfo {
  std::vector<std::string> argv;
  std::string cwd, python, torch, deviceName, frames, ended;
  int64_t device = 0, totalMemory = 0, exitCode = 0, stepsLimit = 0;
  int64_t baselineAllocated = 0;  // allocated before the program started (the CUDA libraries' workspaces)
  bool historyDropped = false;
  bool history = true;  // false: steps and counters only
  double seconds = 0;
};

/// Where an out-of-memory error surfaced in the program's own code (from its traceback).
struct OomSite {
  bool present = false;
  std::string message, file, name;
  int64_t line = 0;
};

struct Trace {
  RunInfo run;
  std::vector<SourceFile> files;
  std::vector<Frame> frames;
  /// Stack s is stackFrames[stackStart[s] .. stackStart[s + 1]), innermost frame first.
  std::vector<uint32_t> stackStart{0};
  std::vector<uint32_t> stackFrames;
  std::vector<Step> steps;
  std::vector<Event> events;
  std::vector<Hook> hooks;
  std::vector<HookCall> hookCalls;
  OomSite oom;

  size_t stackCount() const { return stackStart.size() - 1; }
  /// The frames of stack `s`, innermost first.
  std::pair<const uint32_t*, const uint32_t*> stack(uint32_t s) const {
    return {stackFrames.data() + stackStart[s], stackFrames.data() + stackStart[s + 1]};
  }
};

/// Parses a trace's JSON text. Throws TraceError on anything that is not a well-formed trace of a
/// version this build reads; never reads out of bounds on hostile input.
Trace parseTrace(std::string_view text);
/// Reads and parses the file at `path` (TraceError when it cannot be read).
Trace readTraceFile(const std::string& path);

}  // namespace oomlint::trace
