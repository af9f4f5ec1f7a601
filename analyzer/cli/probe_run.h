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

/// The device oomlint-probe's `--device` resolves to ("cuda" or "cpu"), asked before anything runs.
std::string probeDevice(const std::string& probe, const VerifyOptions& opts);

/// One probe invocation: `code` on `stated` (written to a temporary file in $TMPDIR, removed
/// after) or on `flags`. Null when the probe failed.
nlohmann::json invokeProbe(const std::string& probe, const VerifyOptions& opts, const std::string& code,
                           const nlohmann::json& stated, const std::string& flags);

/// What the probe's JSON says about `probeCode`; nothing when it does not name it.
std::optional<MeasuredCost> measuredFrom(const nlohmann::json& doc, const std::string& probeCode);

}  // namespace oomlint
