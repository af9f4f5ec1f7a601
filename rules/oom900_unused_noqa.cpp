// OOM900 unused-noqa (off by default). The check runs in the engine, which alone sees findings
// before suppression; this file holds the rule's metadata, documentation and the computation.
#include <algorithm>

#include "engine/engine.h"
#include "engine/noqa.h"
#include "engine/selection.h"
#include "rules/common.h"
#include "rules/registry.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM900", "unused-noqa", Severity::Warning, true, true, FixKind::Safe, false, false,
    "A noqa directive names an oomlint code that suppresses nothing",
    R"doc(## What it does
Off by default (enable with `--extend-select OOM900`). Flags a `# noqa: OOM...` (or file-level
`# oomlint: noqa: OOM...`) that names an oomlint rule which reports nothing there, or a code that
is not an oomlint rule. Codes of other tools (`E501`) and bare `# noqa` are left alone, and so are
codes of rules that are not enabled (they might fire under another configuration).

## Why is this bad?
Stale suppressions hide future findings on that line and tell readers a problem exists that does
not. They accumulate after refactors and after `--add-noqa` migrations.

## Example
```python
total += loss.item()  # noqa: OOM101
```

## Use instead
```python
total += loss.item()
```

## Fix safety
Safe: removes the unused codes, or the whole directive when nothing else is left in it.
)doc",
};

class Oom900 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
};

bool isOomCode(std::string_view c) { return c.size() > 3 && c.substr(0, 3) == "OOM"; }

}  // namespace

const Rule& oom900() {
  static const Oom900 rule;
  return rule;
}

std::vector<Finding> unusedNoqa(const Module& m, const std::vector<Finding>& raw, const RuleSelection& selection) {
  std::vector<Finding> out;
  for (const NoqaDirective& d : collectNoqa(m)) {
    if (d.all || d.nolint) continue;  // clang-tidy's NOLINT lists are shared with other checks
    std::vector<std::string> unused, kept;
    for (const std::string& code : d.codes) {
      if (!isOomCode(code)) {
        kept.push_back(code);
        continue;
      }
      const Rule* r = nullptr;
      for (const Rule* x : allRules())
        if (x->info().code == code) r = x;
      if (r && !selection.enabled(code)) {
        kept.push_back(code);
        continue;
      }
      bool used = r && std::any_of(raw.begin(), raw.end(), [&](const Finding& f) {
                    return f.code == code && (d.fileLevel || f.span.line == d.line);
                  });
      (used ? kept : unused).push_back(code);
    }
    if (unused.empty()) continue;
    Finding f;
    f.code = kInfo.code;
    f.severity = selection.severityOf(kInfo.code, kInfo.severity);
    std::string list;
    for (const std::string& c : unused) list += (list.empty() ? "`" : ", `") + c + "`";
    f.message = "unused `noqa` directive (suppresses nothing: " + list + ")";
    f.span.begin = d.begin;
    f.span.end = d.end;
    f.span.line = d.line;
    f.span.col = d.begin - m.lineStarts[d.line - 1];
    f.span.endLine = d.line;
    f.span.endCol = d.end - m.lineStarts[d.line - 1];
    f.hasFix = true;
    f.fix.applicability = Applicability::Safe;
    Edit e;
    if (kept.empty()) {
      // Drop the directive and the spaces before it.
      uint32_t b = d.begin;
      while (b > m.lineStarts[d.line - 1] && (m.source[b - 1] == ' ' || m.source[b - 1] == '\t')) --b;
      e.begin = b;
      e.end = d.end;
      f.fix.message = "Remove the unused `noqa` directive";
    } else {
      std::string codes;
      for (const std::string& c : kept) codes += (codes.empty() ? "" : ", ") + c;
      e.begin = d.begin;
      e.end = d.end;
      e.content = d.fileLevel ? "# oomlint: noqa: " + codes : "# noqa: " + codes;
      f.fix.message = "Remove the unused codes";
    }
    f.fix.edits.push_back(e);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace oomlint::rules
