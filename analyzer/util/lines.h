#pragma once
/// Splitting text into lines that keep their line breaks: joining them gives the text back,
/// which is what diffs and notebook cells (nbformat's source lists) need.

#include <string>
#include <vector>

namespace oomlint {

inline std::vector<std::string> splitKeepingBreaks(const std::string& text) {
  std::vector<std::string> out;
  size_t b = 0;
  while (b < text.size()) {
    size_t nl = text.find('\n', b);
    size_t e = nl == std::string::npos ? text.size() : nl + 1;
    out.emplace_back(text, b, e - b);
    b = e;
  }
  return out;
}

}  // namespace oomlint
