// libFuzzer target: fixes on any input that parses must keep it parsing, and fixing twice must
// change nothing the second time.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "engine/engine.h"
#include "fix/fix.h"
#include "python/frontend.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace oomlint;
  static const CheckOptions opts = [] {
    SelectorSet s;
    s.select = {"ALL"};
    s.selectGiven = true;
    CheckOptions o;
    o.selection = RuleSelection(s);
    return o;
  }();
  std::string source(reinterpret_cast<const char*>(data), size);
  if (source.find('\0') != std::string::npos || !python::parsesCleanly(source)) return 0;
  FixOptions fo;
  fo.unsafe = true;
  FixOutcome once = applyFixes("fuzz.py", source, opts, fo);
  if (!python::parsesCleanly(once.source)) std::abort();  // a fix broke the file
  FixOutcome twice = applyFixes("fuzz.py", once.source, opts, fo);
  if (twice.source != once.source) std::abort();  // not idempotent
  return 0;
}
