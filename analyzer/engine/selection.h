#pragma once
/// Which rules run, chosen with code prefixes the way ruff does: `OOM1` selects OOM101..OOM199,
/// `ALL` selects everything; for each rule the most specific matching selector decides.

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/rule.h"

#include "engine/torch_version.h"

namespace oomlint {

struct SelectorSet {
  std::vector<std::string> select;        // empty: the default set
  bool selectGiven = false;
  std::vector<std::string> extendSelect;
  std::vector<std::string> ignore;
  std::unordered_map<std::string, Severity> severity;  // code -> overridden severity
};

class RuleSelection {
 public:
  RuleSelection();  // the default set
  explicit RuleSelection(const SelectorSet& s);
  bool enabled(std::string_view code) const;
  /// Effective severity (default or overridden by config).
  Severity severityOf(std::string_view code, Severity fallback) const;
  /// A string that changes whenever the selection or severities change (cache key).
  std::string fingerprint() const;
  /// Returns a copy with `codes` also ignored (per-file-ignores). `OOM000` among them hides
  /// syntax errors: valid code the parser gets wrong must not block a commit forever.
  RuleSelection without(const std::vector<std::string>& codes) const;
  /// Syntax errors (OOM000) are reported; only per-file-ignores naming OOM000 turn them off.
  bool reportsSyntaxErrors() const { return syntaxErrors_; }
  /// The oldest PyTorch the file must run on: rules suggest nothing newer (part of the fingerprint).
  const TorchVersion& targetTorch() const { return targetTorch_; }
  void setTargetTorch(TorchVersion v) { targetTorch_ = v; }

 private:
  bool syntaxErrors_ = true;
  TorchVersion targetTorch_;
  std::vector<std::string> enabled_;
  std::unordered_map<std::string, Severity> severity_;
};

/// Validates a selector ("OOM1", "OOM101", "ALL"); returns false for one that matches no rule.
/// `syntaxToo`: `OOM000` (syntax errors) is also one, where it can be ignored (per-file-ignores).
bool isValidSelector(std::string_view selector, bool syntaxToo = false);

}  // namespace oomlint
