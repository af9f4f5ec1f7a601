#pragma once
/// `oomlint trace`: runs a Python training program under the bootstrap that records its GPU
/// memory (packaging/python/oomlint/trace.py), or reads a saved trace (--report), and reports
/// growth, the peak and an out-of-memory error, joined with what `check` finds in its files.

#include <cstdint>
#include <string>
#include <vector>

namespace oomlint {

struct TraceArgs {
  std::vector<std::string> command;  // what follows `--`: python [OPTIONS] SCRIPT|-m MODULE [ARGS]
  std::string report;                // --report: a saved trace to read instead of running
  std::string traceFile = "oomlint-trace.json";
  std::string format = "text";       // text, json, svg
  std::string outputFile;            // the report's destination (default: standard output)
  int64_t steps = 0;                 // stop after this many steps (0: run to the end)
  std::string device;                // CUDA device index for the run
  bool cppFrames = false;
  int64_t maxEvents = 1000000;
  std::string failOnGrowth;          // bytes per step ("1MiB"): exit 1 above it
  bool noCheck = false;              // report without running `check` on the frames' files
  std::string root;                  // where the frames' relative paths are found
  std::string config;                // --config for the check
};

int runTrace(const TraceArgs& args);

/// "1048576", "512KiB", "1.5MiB", "2G": bytes, or -1 when it is not a size.
int64_t parseByteSize(const std::string& text);

}  // namespace oomlint
