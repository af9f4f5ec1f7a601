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

/// OOM900 has no check of its own: the suppression pass (engine/noqa.cpp) knows which
/// directives suppressed something while it applies them, and reports the others.
class Oom900 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
};

}  // namespace

const Rule& oom900() {
  static const Oom900 rule;
  return rule;
}

}  // namespace oomlint::rules
