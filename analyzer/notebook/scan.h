#pragma once
/// One pass over a notebook's JSON text: where each cell's "source" sits (so fixes are written back
/// in place), and, for a plainly written notebook, everything readNotebook needs without building
/// a JSON document first: its cells' types and text, its nbformat and its kernel's language.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace oomlint::notebook_scan {

struct Cell {
  std::string type;
  bool hasSource = false, array = false;
  size_t begin = 0, end = 0;                        // the "source" value's bytes
  std::vector<std::pair<size_t, size_t>> items;     // each string token of it, quotes included
  std::string text;                                 // the source, decoded (strict scans only)
  std::vector<size_t> itemStarts;                   // where each item starts in `text` (strict scans only)
};

struct Scanned {
  std::vector<Cell> cells;
  // Read by strict scans only.
  std::string nbformat;                             // the value's token as written ("4")
  std::optional<std::string> kernelLanguage;        // metadata.kernelspec.language, when a string
  std::optional<std::string> languageName;          // metadata.language_info.name, when a string
};

/// Locates each cell's "source" in a notebook's text; false when the text is not laid out as
/// an object holding a "cells" list of objects.
///
/// `strict`: also true only when the text is JSON exactly as nlohmann's parser accepts it
/// (literals, numbers, escapes, control characters, UTF-8, nothing after the value), written
/// plainly: no key read here given twice, every cell an object with a string "cell_type", every
/// "source" text, and the decoded text filled in. Anything else is false, and the caller reads
/// the notebook the slow way, with the same messages as before.
bool scan(std::string_view text, Scanned& out, bool strict);

/// The text of one JSON string token (quotes included), as nlohmann decodes it; false for a token
/// it would reject (a bad escape, a lone surrogate, a raw control character, ill-formed UTF-8).
bool decodeString(std::string_view token, std::string& out);

}  // namespace oomlint::notebook_scan
