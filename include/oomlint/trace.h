#pragma once
/// oomlint/trace.h: `oomlint trace` for LibTorch C++ training programs. Header-only, C++17.
///
///     #include <oomlint/trace.h>
///     int main() {
///       oomlint::trace::start();            // records when run under `oomlint trace`, else nothing
///       for (...) { ...; optimizer.step(); oomlint::trace::step(); }
///     }                                     // the trace is written at exit
///
///     oomlint trace -- ./build/train ARGS   (build with -g, so that frames have file and line)
///
/// Under `oomlint trace` (OOMLINT_TRACE_OUTPUT set) `start()` turns on the CUDA caching
/// allocator's history, with the C++ stack of every allocation, and the trace is written, in the
/// JSON that Python runs write (docs/trace.md), when the program exits, when `--steps N` steps are
/// done (the program then exits with 0), or when an exception ends it (an out-of-memory error
/// included, which still ends the program as it would have). Outside `oomlint trace` every call
/// does nothing, so the header can stay in the program.
///
/// Builds against LibTorch 2.1 or newer with CUDA. Against a LibTorch without CUDA (Debian's 1.13
/// is CPU only) or older than 2.1 it compiles too; under `oomlint trace` `start()` then says why it
/// cannot record and exits with 2, as the Python bootstrap does. OOMLINT_TRACE_CUDA=0 or 1 overrides
/// the detection of CUDA headers (1 needs LibTorch's CUDA libraries linked: ${TORCH_LIBRARIES}).

#include <torch/torch.h>
#include <torch/version.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#ifndef OOMLINT_TRACE_CUDA
#if __has_include(<cuda_runtime_api.h>) && __has_include(<c10/cuda/CUDACachingAllocator.h>) && \
    (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1))
#define OOMLINT_TRACE_CUDA 1
#else
#define OOMLINT_TRACE_CUDA 0
#endif
#endif

#if OOMLINT_TRACE_CUDA
#include "trace_run.h"
#include "trace_symbols.h"

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <type_traits>
#include <utility>
#endif

namespace oomlint::trace {

namespace detail {

inline void say(const std::string& message) { std::fprintf(stderr, "oomlint trace: %s\n", message.c_str()); }

inline std::string environment(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

inline std::string torchVersion() {
  return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
         std::to_string(TORCH_VERSION_PATCH);
}

}  // namespace detail

#if !OOMLINT_TRACE_CUDA

/// Under `oomlint trace`: says why this build cannot record, and exits with 2 before training.
inline void start() {
  if (detail::environment("OOMLINT_TRACE_OUTPUT").empty()) return;
#if TORCH_VERSION_MAJOR < 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR < 1)
  detail::say("no CUDA in this build against LibTorch " + detail::torchVersion() +
              " (trace measures GPU memory, and needs LibTorch 2.1 or newer with CUDA); the program stops here");
#else
  detail::say("no CUDA in this build against LibTorch " + detail::torchVersion() +
              " (trace measures GPU memory; build against a CUDA LibTorch); the program stops here");
#endif
  std::exit(2);
}
inline void step() {}
inline void stop() {}

#else

namespace detail {

/// The context of a step's one-byte mark: the converter knows the mark by it and drops it.
struct MarkContext : c10::GatheredContext {};

/// An allocation's C++ stack, as return addresses; named when the trace is written.
struct Stack : c10::GatheredContext {
  std::vector<void*> pcs;
};

struct State {
  bool active = false, written = false;
  std::string output;
  int device = 0;
  int64_t stepsLimit = 0;
  size_t maxEvents = 1000000;
  bool progress = true;
  int64_t baseline = 0;
  std::chrono::steady_clock::time_point started, lastReport;
  std::vector<std::vector<double>> steps;  // step, allocated, reserved, peak, seconds
  std::shared_ptr<c10::GatheredContext> mark = std::make_shared<MarkContext>();
  std::terminate_handler previousTerminate = nullptr;
};

inline State& state() {
  static State s;
  return s;
}

/// recordHistory's parameters grew over 2.x: (enabled, recorder, entries, when) from 2.1, then a
/// clearHistory flag, then skipped actions. The rank picks the longest form this LibTorch declares.
struct Rank0 {};
struct Rank1 : Rank0 {};
struct Rank2 : Rank1 {};
namespace cca = c10::cuda::CUDACachingAllocator;
template <typename F>
auto recordHistory(Rank2, bool on, F fn, size_t n, cca::RecordContext when)
    -> decltype(cca::recordHistory(on, fn, n, when, false, std::vector<std::string>{}), void()) {
  cca::recordHistory(on, fn, n, when, false, std::vector<std::string>{});
}
template <typename F>
auto recordHistory(Rank1, bool on, F fn, size_t n, cca::RecordContext when)
    -> decltype(cca::recordHistory(on, fn, n, when, false), void()) {
  cca::recordHistory(on, fn, n, when, false);
}
template <typename F>
auto recordHistory(Rank0, bool on, F fn, size_t n, cca::RecordContext when)
    -> decltype(cca::recordHistory(on, fn, n, when), void()) {
  cca::recordHistory(on, fn, n, when);
}

/// Allocated, reserved and peak-allocated bytes of the device now (aggregate stats are index 0).
inline std::vector<double> counters(int device) {
  auto stats = cca::getDeviceStats(static_cast<c10::DeviceIndex>(device));
  return {static_cast<double>(stats.allocated_bytes[0].current), static_cast<double>(stats.reserved_bytes[0].current),
          static_cast<double>(stats.allocated_bytes[0].peak)};
}

inline double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

/// Set on the thread that allocates a step's mark, while it does.
inline bool& marking() {
  thread_local bool m = false;
  return m;
}

inline std::shared_ptr<c10::GatheredContext> gather() {
  if (marking()) return state().mark;
  auto stack = std::make_shared<Stack>();
  stack->pcs = symbols::capture(2);  // without capture() and gather()
  return stack;
}

/// The device's history as the trace's compact arrays (docs/trace.md).
inline std::string convert(const std::string& endedAs, const std::string& oomMessage) {
  State& st = state();
  auto info = cca::snapshot();
  const std::string cwd = currentFolder();
  static const std::vector<typename decltype(info.device_traces)::value_type::value_type> none;
  const auto& entries =
      static_cast<size_t>(st.device) < info.device_traces.size() ? info.device_traces[st.device] : none;
  using Entry = typename std::decay_t<decltype(entries)>::value_type;

  // Every allocation's C++ stack, named in one batch: the program's own files (its executable and
  // the libraries under its folder) by their debug information, the rest by their symbols.
  std::vector<void*> pcs;
  for (const Entry& e : entries)
    if (auto* stack = dynamic_cast<const Stack*>(e.context_.get())) pcs.insert(pcs.end(), stack->pcs.begin(), stack->pcs.end());
  std::sort(pcs.begin(), pcs.end());
  pcs.erase(std::unique(pcs.begin(), pcs.end()), pcs.end());
  const std::string self = symbols::detail::mainProgram();
  std::map<void*, std::vector<symbols::Frame>> named = symbols::name(pcs, [&](const std::string& library) {
    return library == self || library.rfind(cwd + "/", 0) == 0;
  });

  std::string files, frames, stacks, events, steps;
  std::map<std::string, size_t> fileIds;
  std::map<std::tuple<size_t, uint64_t, std::string>, size_t> frameIds;
  std::map<std::vector<size_t>, size_t> stackIds;
  auto list = [](std::string& out, const std::string& item) { out += (out.empty() ? "" : ",") + item; };
  auto fileId = [&](const std::string& path) {
    auto [it, added] = fileIds.emplace(path, fileIds.size());
    if (added) list(files, "[" + jsonText(shownPath(path, cwd)) + "," + (isUserFile(path, cwd) ? "true" : "false") + "]");
    return it->second;
  };
  auto stackId = [&](const c10::GatheredContext* context) {
    std::vector<size_t> ids;
    if (auto* stack = dynamic_cast<const Stack*>(context))
      for (void* pc : stack->pcs)
        for (const symbols::Frame& fr : named[pc]) {
          size_t file = fileId(fr.file);
          auto [it, added] = frameIds.emplace(std::make_tuple(file, fr.line, fr.function), frameIds.size());
          if (added) list(frames, "[" + std::to_string(file) + "," + std::to_string(fr.line) + "," + jsonText(fr.function) + "]");
          ids.push_back(it->second);
        }
    auto [it, added] = stackIds.emplace(ids, stackIds.size());
    if (added) {
      std::string s;
      for (size_t id : ids) list(s, std::to_string(id));
      list(stacks, "[" + s + "]");
    }
    return it->second;
  };

  std::vector<size_t> marks;
  std::set<size_t> markAddresses;
  size_t count = 0;
  bool outOfMemory = false;
  for (const Entry& e : entries) {
    const char* code = nullptr;
    switch (e.action_) {
      case Entry::ALLOC:
        if (e.context_.get() == st.mark.get()) {
          marks.push_back(count);
          markAddresses.insert(e.addr_);
          continue;
        }
        code = "a";
        break;
      case Entry::FREE_REQUESTED:
        if (markAddresses.count(e.addr_)) continue;
        code = "f";
        break;
      case Entry::FREE_COMPLETED:
        markAddresses.erase(e.addr_);
        continue;
      case Entry::SEGMENT_ALLOC:
      case Entry::SEGMENT_MAP:
        code = "sa";
        break;
      case Entry::SEGMENT_FREE:
      case Entry::SEGMENT_UNMAP:
        code = "sf";
        break;
      case Entry::OOM:
        code = "oom";
        outOfMemory = true;
        break;
      default:
        continue;
    }
    ++count;
    list(events, std::string("[\"") + code + "\"," + std::to_string(e.addr_) + "," + std::to_string(e.size_) + "," +
                     std::to_string(stackId(e.context_.get())) + "]");
  }

  // The history is a ring: when it overflowed, its first marks are gone and the last steps remain.
  const bool dropped = entries.size() >= st.maxEvents || marks.size() < st.steps.size();
  const size_t offset = st.steps.size() - std::min(marks.size(), st.steps.size());
  for (size_t i = 0; i < st.steps.size(); ++i) {
    const auto& s = st.steps[i];
    long long at = i >= offset ? static_cast<long long>(marks[i - offset]) : -1;
    char row[256];
    std::snprintf(row, sizeof row, "[%.0f,%.0f,%.0f,%.0f,%lld,%.6f]", s[0], s[1], s[2], s[3], at, s[4]);
    list(steps, row);
  }

  std::string ended = endedAs == "error" && outOfMemory ? "oom" : endedAs;
  std::string argv;
  for (const std::string& a : commandLine()) list(argv, jsonText(a));
  cudaDeviceProp props{};
  cudaGetDeviceProperties(&props, st.device);
  std::string oom = ended == "oom" ? "{\"message\":" + jsonText(oomMessage) + "}" : "null";
  return "{\"format\":\"oomlint-trace\",\"version\":1,\"run\":{\"argv\":[" + argv + "],\"cwd\":" + jsonText(cwd) +
         ",\"torch\":" + jsonText(torchVersion()) + ",\"language\":\"c++\",\"device\":" + std::to_string(st.device) +
         ",\"device_name\":" + jsonText(props.name) + ",\"total_memory\":" + std::to_string(props.totalGlobalMem) +
         ",\"frames\":\"c++\",\"steps_limit\":" + (st.stepsLimit > 0 ? std::to_string(st.stepsLimit) : "null") +
         ",\"ended\":" + jsonText(ended) + ",\"exit_code\":" + (ended == "exit" || ended == "steps" ? "0" : "1") +
         ",\"history\":true,\"history_dropped\":" + (dropped ? "true" : "false") +
         ",\"baseline_allocated\":" + std::to_string(st.baseline) + ",\"seconds\":" +
         std::to_string(secondsSince(st.started)) + "},\"files\":[" + files + "],\"frames\":[" + frames +
         "],\"stacks\":[" + stacks + "],\"steps\":[" + steps + "],\"events\":[" + events + "],\"oom\":" + oom + "}";
}

/// Writes the trace once; later calls do nothing. Never throws: the program's own outcome wins.
inline void write(const std::string& ended, const std::string& oomMessage = "") {
  State& st = state();
  if (!st.active || st.written) return;
  st.written = true;
  try {
    std::string text = convert(ended, oomMessage);
    recordHistory(Rank2{}, false, &gather, 0, cca::RecordContext::NEVER);
    std::string tmp = st.output + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "wb");
    bool ok = f && std::fwrite(text.data(), 1, text.size(), f) == text.size();
    ok = f && std::fclose(f) == 0 && ok;
    if (!ok || std::rename(tmp.c_str(), st.output.c_str()) != 0) {
      say("could not write " + st.output);
      return;
    }
    if (st.progress) say("wrote " + st.output + " (" + std::to_string(st.steps.size()) + " steps)");
  } catch (const std::exception& e) {
    say(std::string("could not write the trace: ") + e.what());
  }
}

inline void writeAtExit() { write("exit"); }

/// An exception nothing caught: the trace is written ("oom" when the allocator ran out), then the
/// program ends as it would have.
inline void writeOnTerminate() {
  std::string message = "uncaught exception";
  if (auto current = std::current_exception()) {
    try {
      std::rethrow_exception(current);
    } catch (const std::exception& e) {
      message = e.what();
    } catch (...) {
    }
  }
  message = message.substr(0, message.find('\n'));
  write("error", message);
  if (state().previousTerminate) state().previousTerminate();
  std::abort();
}

inline int64_t setting(const char* name, int64_t otherwise) {
  std::string v = environment(name);
  if (v.empty()) return otherwise;
  char* end = nullptr;
  long long n = std::strtoll(v.c_str(), &end, 10);
  if (*end != '\0' || n < 0) {
    say(std::string(name) + "=" + v + " is not a count; the program stops here");
    std::exit(2);
  }
  return n;
}

}  // namespace detail

/// Starts recording when run under `oomlint trace` (OOMLINT_TRACE_OUTPUT set); otherwise nothing.
/// Call it once, before the model is built, so that the trace sees every allocation.
inline void start() {
  detail::State& st = detail::state();
  st.output = detail::environment("OOMLINT_TRACE_OUTPUT");
  if (st.output.empty() || st.active) return;
  if (!torch::cuda::is_available()) {
    detail::say("no CUDA device is available to LibTorch " + detail::torchVersion() +
                " (trace measures GPU memory); the program stops here");
    std::exit(2);
  }
  st.device = static_cast<int>(detail::setting("OOMLINT_TRACE_DEVICE", 0));
  if (st.device >= static_cast<int>(torch::cuda::device_count())) {
    detail::say("--device " + std::to_string(st.device) + ": this machine has " +
                std::to_string(torch::cuda::device_count()) + " CUDA device(s)");
    std::exit(2);
  }
  st.stepsLimit = detail::setting("OOMLINT_TRACE_STEPS", 0);
  st.maxEvents = static_cast<size_t>(detail::setting("OOMLINT_TRACE_MAX_EVENTS", 1000000));
  st.progress = detail::environment("OOMLINT_TRACE_PROGRESS") != "0";
  c10::cuda::set_device(static_cast<c10::DeviceIndex>(st.device));
  {
    // cuBLAS makes a workspace per thread at its first product (the forward's thread and
    // autograd's): the libraries', not the program's, so made before the history starts.
    auto on = torch::TensorOptions().device(torch::Device(torch::kCUDA, st.device));
    auto w = torch::ones({8, 8}, on.requires_grad(true));
    auto b = torch::zeros({8}, on.requires_grad(true));
    torch::nn::functional::linear(w, w, b).sum().backward();
    torch::cuda::synchronize(st.device);
  }
  st.baseline = static_cast<int64_t>(detail::counters(st.device)[0]);
  detail::cca::resetPeakStats(static_cast<c10::DeviceIndex>(st.device));
  detail::recordHistory(detail::Rank2{}, true, &detail::gather, st.maxEvents, detail::cca::RecordContext::ALLOC);
  symbols::capture(0);  // backtrace() loads its unwinder on first use: not inside the allocator
  st.started = st.lastReport = std::chrono::steady_clock::now();
  st.active = true;
  std::atexit(detail::writeAtExit);
  st.previousTerminate = std::set_terminate(detail::writeOnTerminate);
}

/// Marks the end of a training step (after the optimizer's step). After `--steps N` steps the
/// trace is written and the program exits with 0.
inline void step() {
  detail::State& st = detail::state();
  if (!st.active || st.written) return;
  std::vector<double> c = detail::counters(st.device);
  st.steps.push_back({static_cast<double>(st.steps.size() + 1), c[0], c[1], c[2], detail::secondsSince(st.started)});
  detail::cca::resetPeakStats(static_cast<c10::DeviceIndex>(st.device));
  // A one-byte block allocated and freed here is the step's mark in the history.
  detail::marking() = true;
  void* mark = detail::cca::raw_alloc(1);
  detail::marking() = false;
  detail::cca::raw_delete(mark);
  if (st.progress && detail::secondsSince(st.lastReport) >= 2.0) {
    st.lastReport = std::chrono::steady_clock::now();
    char mib[32];  // as the Python bootstrap says it: "allocated 83.0 MiB"
    std::snprintf(mib, sizeof mib, "%.1f", static_cast<double>(c[0]) / 1048576.0);
    detail::say("step " + std::to_string(st.steps.size()) + ": allocated " + mib + " MiB");
  }
  if (st.stepsLimit > 0 && static_cast<int64_t>(st.steps.size()) >= st.stepsLimit) {
    detail::write("steps");
    std::exit(0);
  }
}

/// Writes the trace now, as it would be at exit; recording ends.
inline void stop() { detail::write("exit"); }

#endif
}  // namespace oomlint::trace
