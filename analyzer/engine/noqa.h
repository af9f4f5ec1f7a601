#pragma once
/// Suppression comments: `# noqa`, `# noqa: OOM101, OOM102` on the reported line, and the
/// file-level `# oomlint: noqa` (optionally with codes). Codes are case-insensitive.

#include <string>
#include <string_view>
#include <vector>

#include "model/model.h"

namespace oomlint {

struct NoqaDirective {
  uint32_t line = 0;
  uint32_t begin = 0, end = 0;  // byte range of the directive inside the comment
  bool all = false;             // bare `# noqa`
  bool fileLevel = false;       // `# oomlint: noqa`
  std::vector<std::string> codes;  // upper-cased
};

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

 private:
  std::vector<NoqaDirective> directives_;
};

}  // namespace oomlint
