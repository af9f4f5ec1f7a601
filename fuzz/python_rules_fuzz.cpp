// libFuzzer target: arbitrary bytes through the Python front end, every rule and every output format.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "engine/engine.h"
#include "report/report.h"

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
  std::vector<FileResult> results{checkSource("fuzz.py", source, opts)};
  std::ostringstream sink;
  report::Options ro;
  for (report::Format f : {report::Format::Full, report::Format::Json, report::Format::Sarif, report::Format::Github,
                           report::Format::Gitlab, report::Format::Junit})
    report::write(sink, f, results, ro);
  return 0;
}
