#pragma once
/// Suppression comments: `# noqa`, `# noqa: OOM101, OOM102` on the reported line, and the
/// file-level `# oomlint: noqa` (optionally with codes). Codes are case-insensitive.
/// In C++, clang-tidy's forms as clang-tidy reads them: `// NOLINT`, `// NOLINT(oom101)`,
/// `// NOLINTNEXTLINE(...)`, `// NOLINTBEGIN(...)` ... `// NOLINTEND(...)`, with globs (`oom1*`,
/// `*`); and `// noqa: OOM101`.

#include <string>
#include <string_view>
#include <vector>

#include "engine/rule.h"
#include "engine/selection.h"
#include "model/model.h"

namespace oomlint {

struct NoqaDirective {
  uint32_t line = 0;
  uint32_t begin = 0, end = 0;  // byte range of the directive inside the comment
  bool all = false;             // bare `# noqa`
  bool fileLevel = false;       // `# oomlint: noqa`
  std::vector<std::string> codes;  // upper-cased; C++ NOLINT lists may hold globs (`OOM1*`)
  /// Which lines a directive covers: its own (noqa, NOLINT), the next (NOLINTNEXTLINE), or a
  /// range opened by NOLINTBEGIN and closed by the next NOLINTEND.
  enum class Scope : uint8_t { Line, NextLine, Begin, End } scope = Scope::Line;
  bool nolint = false;  // a clang-tidy form (left alone by OOM900 and --add-noqa)
};

/// Parses one C++ comment (`// ...` or `/* ... */`): NOLINT forms and `// noqa`.
bool parseCppDirective(std::string_view comment, NoqaDirective& out);

/// Parses one comment's text; returns false when it holds no directive.
bool parseNoqaComment(std::string_view comment, NoqaDirective& out);

/// All directives of a module (from the comments the front end kept).
std::vector<NoqaDirective> collectNoqa(const Module& m);

class Suppressions {
 public:
  explicit Suppressions(const Module& m);
  /// True when a finding with `code` reported on `line` is suppressed.
  bool suppressed(std::string_view code, uint32_t line) const;
  const std::vector<NoqaDirective>& directives() const { return directives_; }
  /// OOM900: the directives naming an enabled oomlint rule that reports nothing where they
  /// apply (or a code that is no oomlint rule), given the findings before suppression; each with
  /// a safe fix that removes what is unused. clang-tidy NOLINT lists and bare `# noqa` are left alone.
  std::vector<Finding> unused(const std::vector<Finding>& raw, const RuleSelection& selection) const;

 private:
  struct Range {
    uint32_t first, last;
    std::vector<std::string> codes;  // empty = all
  };
  const Module& m_;
  std::vector<NoqaDirective> directives_;
  std::vector<Range> ranges_;  // NOLINTBEGIN / NOLINTEND
};

}  // namespace oomlint
