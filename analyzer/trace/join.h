#pragma once
/// Joins a run's measurements with what `check` finds in the files of its frames: which finding
/// explains a growing line or a line that dominates the peak, which growth has no finding (what
/// the rules miss), and which growth finding ran without growth on this run.

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "trace/analysis.h"
#include "trace/trace.h"

namespace oomlint::trace {

/// One finding of `check --output-format json`, as much of it as the join needs.
struct StaticFinding {
  std::string code, message, file;
  int64_t line = 0;
  std::vector<std::pair<std::string, int64_t>> related;  // (file, line) of each piece of evidence
  bool estimated = false;
  double estimateBytes = 0;
  std::string estimateMeasure;  // "growth", "peak", "retained", "saved"
};

/// Reads `check --output-format json` output (TraceError when it is not that).
std::vector<StaticFinding> parseFindings(const std::string& json);

/// How a finding came to explain a line: its evidence names a line of the blocks' stacks, or
/// (growth rules) the line is in the loop the finding reports on.
enum class Match : uint8_t { None, Evidence, SameLoop };

struct Explanation {
  int32_t finding = -1;  // index into the findings, -1: none
  Match match = Match::None;
  std::vector<int32_t> also;  // other findings that explain it too (a loss both summed and stored)
};

struct Join {
  std::vector<Explanation> growth;  // per Analysis::growth
  std::vector<Explanation> peak;    // per Analysis::peak (only lines with >= 10% of the peak)
  std::vector<int32_t> unconfirmed; // growth findings whose code ran, with no growth explained
};

/// The first and last line of each loop in `file` (for growth findings' loops). Empty when the
/// file cannot be read.
using LoopLines = std::function<std::vector<std::pair<uint32_t, uint32_t>>(const std::string& file)>;

/// Whether `code` reports memory that piles up step after step (OOM101-104, OOM107, OOM108).
bool growthRule(const std::string& code);

Join join(const Trace& trace, const Analysis& analysis, const std::vector<StaticFinding>& findings,
          const LoopLines& loops);

}  // namespace oomlint::trace
