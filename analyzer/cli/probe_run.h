#pragma once
/// Running oomlint-probe for `check --verify` and reading what it prints: one process per probe,
/// so that the CLI can say what runs while the probe works.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/verify.h"
#include "engine/rule.h"

namespace oomlint {

/// `s` quoted for /bin/sh.
std::string shellQuote(const std::string& s);

/// What measures for --verify: oomlint-probe (LibTorch), or where none is installed, its PyTorch
/// twins (oomlint/probe.py, shipped beside the binary) run by a Python that has torch. Both take
/// the same arguments and print the same JSON.
struct ProbeCommand {
  std::string shell;  // the command's start, quoted for /bin/sh
  std::string name;   // "oomlint-probe" / "the PyTorch twins"
  std::string where;  // the probe's path / "PYTHON SCRIPT"
  bool twins = false;
};

/// The device the probe's `--device` resolves to ("cuda" or "cpu"), asked before anything runs;
/// else the last line the probe said instead (why it cannot run: the twins' Python cannot import
/// torch, CUDA was asked for and there is none), "" when it said nothing.
std::string probeDevice(const ProbeCommand& probe, const VerifyOptions& opts);

/// One probe invocation: `code` on `stated` (written to a temporary file in $TMPDIR, removed
/// after) or on `flags`. Null when the probe failed.
nlohmann::json invokeProbe(const ProbeCommand& probe, const VerifyOptions& opts, const std::string& code,
                           const nlohmann::json& stated, const std::string& flags);

/// What the probe's JSON says about `probeCode`; nothing when it does not name it.
std::optional<MeasuredCost> measuredFrom(const nlohmann::json& doc, const std::string& probeCode);

}  // namespace oomlint
