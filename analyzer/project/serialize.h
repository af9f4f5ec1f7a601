#pragma once
/// A module's exports and the questions its analysis asked, as text for the results cache: a
/// later run reads an unchanged module's summaries without parsing it, and keeps its findings
/// when every answer it relied on is still the same.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "project/exports.h"

namespace oomlint::project {

/// The questions one analysis asked (FileView), by kind.
struct Questions {
  std::vector<std::string> functions, classes, callers;
  uint8_t program = 0;  // the ProgramFact bits asked
};

struct CachedModule {
  FileExports exports;
  Questions questions;
  uint64_t answered = 0;  // the fingerprint of the answers the analysis had
};

std::string encode(const CachedModule& c);
/// False when the text is not what encode() writes (then the module is analysed again).
bool decode(std::string_view text, CachedModule& out);

}  // namespace oomlint::project
