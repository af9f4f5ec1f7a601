#pragma once
/// `oomlint check --verify`: runs oomlint-probe for the findings that have a probe, with sizes
/// read from the flagged file where it states them, and attaches the measured cost to each finding.

#include <string>
#include <vector>

#include "engine/engine.h"

namespace oomlint {

struct VerifyOptions {
  std::string probePath;     // --probe, else $OOMLINT_PROBE, else next to oomlint, else PATH
  std::string workloadFile;  // --workload: sizes for every probe run
  std::string device = "auto";
  int steps = 6;
};

/// Finds the probe executable; "" when there is none.
std::string locateProbe(const std::string& hint);

/// Runs the probes and fills Finding::measured: with oomlint-probe where one is found, else with
/// its PyTorch twins (oomlint/probe.py beside the binary) on $OOMLINT_PYTHON or python3. Returns ""
/// or a message for stderr.
std::string verifyFindings(std::vector<FileResult>& results, const VerifyOptions& opts);

}  // namespace oomlint
