#pragma once
/// Applying fixes: in passes until nothing is left (bounded), refusing any fix whose result no
/// longer parses, and writing files atomically (temporary file + rename, mode kept).

#include <string>
#include <vector>

#include "engine/engine.h"

namespace oomlint {

struct FixOptions {
  bool unsafe = false;  // also apply unsafe fixes
  int maxPasses = 8;
  /// Offsets no fix may cross (where a notebook's cells begin in its module), kept up to date as
  /// fixes shift the text.
  std::vector<uint32_t>* boundaries = nullptr;
};

struct FixOutcome {
  std::string source;    // the fixed text (== input when nothing applied)
  size_t applied = 0;    // fixes applied over all passes
  size_t refused = 0;    // fixes dropped because the result would not parse
  std::vector<std::string> appliedCodes;
};

/// Fixes `source` in memory. Files with syntax errors are left alone (as ruff does).
FixOutcome applyFixes(const std::string& path, const std::string& source, const CheckOptions& check, const FixOptions& opts);

struct AddNoqaOutcome {
  std::string source;
  size_t added = 0;    // findings newly suppressed
  size_t skipped = 0;  // findings on lines that cannot take a comment (inside a multi-line string)
};

/// `--add-noqa`: appends `# noqa: CODE` to every line with a finding (merging into an existing
/// directive), so a codebase can adopt oomlint and fix findings over time.
AddNoqaOutcome addNoqaDirectives(const std::string& path, const std::string& source, const CheckOptions& check);

/// Applies `edits` (non-overlapping) to `source`.
std::string applyEdits(const std::string& source, std::vector<Edit> edits);

/// Replaces `path`'s contents atomically: a temporary file in the same folder, fsync, rename.
/// The file's permission bits are kept. Returns an error message, or "" on success.
std::string writeFileAtomically(const std::string& path, const std::string& contents);

/// A unified diff (3 lines of context) between two texts, with `---`/`+++` headers naming `path`.
std::string unifiedDiff(const std::string& path, const std::string& before, const std::string& after);

/// `--diff` for any file: a notebook's changed cells each get a diff headed `path:cell N`.
std::string fileDiff(const std::string& path, const std::string& before, const std::string& after);

}  // namespace oomlint
