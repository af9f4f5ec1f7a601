#pragma once
/// How the results cache is written down (cache.h): an index of one line per file, in numbers and
/// length-prefixed strings (`<n>:<bytes>`, so a path may hold any byte), read without a JSON
/// parser, since a warm check of a settled project reads little else; only a file's findings and
/// dependencies, when it has any, are JSON.

#include <charconv>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engine/engine.h"

namespace oomlint::cache_format {

/// The index file's first line.
inline constexpr std::string_view kIndexMagic = "oomlint results cache\n";

/// Findings as JSON, and back; findingsFrom throws on anything it cannot read (an unknown code).
nlohmann::json findingsJson(const std::vector<Finding>& findings);
std::vector<Finding> findingsFrom(const nlohmann::json& array);

/// Reads the index front to back; every method throws std::runtime_error on text it does not expect.
struct IndexReader {
  std::string_view text;
  size_t at = 0;

  [[noreturn]] static void bad() { throw std::runtime_error("format"); }
  void expect(std::string_view word) {
    if (text.substr(at, word.size()) != word) bad();
    at += word.size();
  }
  template <typename Int>
  Int number() {
    Int v{};
    auto [end, ec] = std::from_chars(text.data() + at, text.data() + text.size(), v);
    if (ec != std::errc()) bad();
    at = static_cast<size_t>(end - text.data());
    return v;
  }
  /// A length-prefixed string.
  std::string_view string() {
    size_t n = number<size_t>();
    expect(":");
    if (n > text.size() - at) bad();
    std::string_view s = text.substr(at, n);
    at += n;
    return s;
  }
};

/// Appends `s` as IndexReader::string reads it.
void appendString(std::string& out, std::string_view s);

}  // namespace oomlint::cache_format
