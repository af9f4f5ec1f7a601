#pragma once
/// What a rule is: metadata, documentation and a check over the model and facts.
/// Rules never see tree-sitter or Clang nodes, so one rule serves Python and C++.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/torch_version.h"
#include "facts/facts.h"
#include "model/model.h"

namespace oomlint {

enum class Severity : uint8_t { Info, Warning, Error };
std::string_view severityName(Severity s);

/// How far a fix may be trusted: safe fixes keep behaviour and are applied by `--fix`; unsafe
/// ones need `--unsafe-fixes`; display-only fixes are advice that no tool applies.
enum class Applicability : uint8_t { DisplayOnly, Unsafe, Safe };
std::string_view applicabilityName(Applicability a);

struct Edit {
  uint32_t begin = 0, end = 0;  // byte range replaced
  std::string content;
};

struct Fix {
  Applicability applicability = Applicability::DisplayOnly;
  std::string message;  // "Replace with `loss.item()`"
  std::vector<Edit> edits;
};

/// What oomlint-probe measured for this finding's pattern (`check --verify`).
struct MeasuredCost {
  bool present = false;
  std::string device;     // "cuda:0 (NVIDIA H200)" / "cpu (counting allocator)"
  std::string workload;   // "width=4096 batch=32 ..." and where each size came from
  int64_t peakAnti = 0, peakFix = 0;
  int64_t retainedAnti = 0, retainedFix = 0;
  double growthAnti = 0, growthFix = 0;  // bytes per step
  double msAnti = 0, msFix = 0;
  std::string note;
  /// What the rule's cost is: "memory", "time" (allocator calls, copies, syncs: bytes say
  /// nothing, and a CPU run cannot show it) or "correctness" (a wrong result, not a cost).
  std::string cost = "memory";
};

/// What the sizes the file states say a finding costs, before anything runs (facts/sizes.h).
/// Absent when any size it needs is unknown.
struct EstimatedCost {
  bool present = false;
  double bytes = 0;
  /// What the bytes are: "growth" (kept per iteration, piling up), "peak" (added to the step's
  /// peak), "retained" (kept after the step) or "saved" (kept for backward by each call, so once
  /// per layer that runs it).
  std::string measure;
  std::string formula;  // the rule's formula with the values: "A_fwd = 7 saved activations + ..."
  std::string basis;    // where the sizes were read: the network's and the input's lines
  /// "+2.2 MiB per iteration": what the message's tail and the hover say.
  std::string summary() const;
};

/// A place that justifies a finding: where the history came from, where the target lives
/// outside the loop, the loop, the `eval()`. Users trust what they can check.
struct Related {
  Span span;
  std::string message;  // "`total` is defined here, outside the loop"
};

struct Finding {
  std::string_view code;  // points at the rule's static metadata
  std::string message;
  Span span;
  Severity severity = Severity::Warning;
  bool hasFix = false;
  Fix fix;
  MeasuredCost measured;
  EstimatedCost estimated;
  std::vector<Related> related;  // in the order a reader follows them
  /// The probe that measures this finding under `--verify`, when it is not the one its code names:
  /// the same pattern as this code writes it ("OOM305-adagrad": an optimizer that keeps state for
  /// frozen parameters, unlike the probe's Adam).
  std::string probe;

  /// Adds evidence: a `note:` in text output, `related` in JSON, SARIF relatedLocations, LSP
  /// relatedInformation. A span already noted (or the finding's own) is not repeated.
  Finding& note(const Span& where, std::string message);
  /// Sets the estimate and says it at the end of the message: "... (estimated +2.2 MiB per iteration)".
  Finding& withEstimate(EstimatedCost estimate);
  /// Sets the fix.
  Finding& withFix(Applicability applicability, std::string message, std::vector<Edit> edits = {});
};

enum class FixKind : uint8_t { None, DisplayOnly, Unsafe, Safe };

/// Static description of a rule. The documentation is what `oomlint rule CODE` prints.
struct RuleInfo {
  std::string_view code;
  std::string_view name;
  Severity severity = Severity::Warning;
  bool python = true;
  bool cpp = false;
  FixKind fix = FixKind::None;
  bool probe = false;
  bool enabledByDefault = true;
  std::string_view summary;  // one line, used as SARIF shortDescription
  std::string_view doc;      // Markdown: what it does, why it is bad, example, use instead, ...
};

/// What a rule sees while checking one file.
class Context {
 public:
  Context(const Module& m, const Facts& f, std::vector<Finding>& out, TorchVersion target = {})
      : m_(m), f_(f), out_(out), target_(target) {}
  const Module& module() const { return m_; }
  const Facts& facts() const { return f_; }
  Lang lang() const { return m_.lang; }
  /// The oldest PyTorch the file must run on: a fix or advice needing a newer API is not given.
  bool torchAtLeast(int major, int minor) const { return target_.atLeast(major, minor); }
  const TorchVersion& targetTorch() const { return target_; }
  /// Records a finding reported at `span` (its start line is where RULES.md says it goes).
  Finding& report(const RuleInfo& rule, const Span& span, std::string message);

 private:
  const Module& m_;
  const Facts& f_;
  std::vector<Finding>& out_;
  TorchVersion target_;
};

/// A rule registers for the events it needs; the engine makes one walk per file and dispatches.
class Rule {
 public:
  virtual ~Rule() = default;
  virtual const RuleInfo& info() const = 0;
  /// Called for every statement, in source order.
  virtual void onStatement(Context&, NodeId /*stmt*/) const {}
  /// Called for every call expression, in source order of statements.
  virtual void onCall(Context&, NodeId /*call*/) const {}
  /// Called once per function (index 0 is the module top level).
  virtual void onFunction(Context&, uint32_t /*fn*/) const {}
};

}  // namespace oomlint
