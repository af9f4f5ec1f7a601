// libFuzzer target: arbitrary bytes through the Clang front end (bundled declarations, the
// precompiled prelude), the lowering into the model, every rule, and --fix's C++ rendering.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "engine/engine.h"

namespace {
#ifdef OOMLINT_CPP_PLUGIN
const int kPluginPathSet = ::setenv("OOMLINT_CPP_FRONTEND", OOMLINT_CPP_PLUGIN, 0);
#endif
}  // namespace

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
  // A path with no compile_commands.json above it: the bundled mode every user gets first.
  FileResult r = checkSource("/tmp/oomlint_fuzz/input.cpp", source, opts);
  for (const Finding& f : r.findings)
    for (const Edit& e : f.fix.edits)
      if (e.begin > e.end || e.end > source.size()) __builtin_trap();  // a fix outside the file
  return 0;
}
