#pragma once
// Reading C++ text for the stand-ins (cpp/standins.h): tokens past comments and literals, and
// what the text after a name says it is (a scope, a call, a template, a type). Internal to the
// C++ front end.

#include <cstddef>
#include <string>
#include <string_view>

namespace oomlint::cpp::text {

bool isIdentStart(char c);
bool isIdentChar(char c);
/// An identifier (and not the stand-ins' own namespace).
bool isPlainName(const std::string& s);
/// Identifiers joined by `::`.
bool isScopePath(const std::string& s);

/// A small reader of C++ text that skips comments, string and character literals.
class Tokens {
 public:
  explicit Tokens(std::string_view s) : s_(s) {}
  /// The next token's offset at or after `at`, past spaces and comments (s_.size() at the end).
  size_t next(size_t at) const {
    while (at < s_.size()) {
      if (std::isspace(static_cast<unsigned char>(s_[at]))) {
        ++at;
      } else if (s_.compare(at, 2, "//") == 0) {
        size_t nl = s_.find('\n', at);
        at = nl == std::string_view::npos ? s_.size() : nl + 1;
      } else if (s_.compare(at, 2, "/*") == 0) {
        size_t end = s_.find("*/", at + 2);
        at = end == std::string_view::npos ? s_.size() : end + 2;
      } else {
        return at;
      }
    }
    return s_.size();
  }
  /// The end of the token that starts at `at`: an identifier, a literal, or one character.
  size_t end(size_t at) const {
    if (at >= s_.size()) return at;
    char c = s_[at];
    if (isIdentChar(c)) {
      while (at < s_.size() && isIdentChar(s_[at])) ++at;
      return at;
    }
    if (c == '"' || c == '\'') {
      for (++at; at < s_.size() && s_[at] != c && s_[at] != '\n'; ++at)
        if (s_[at] == '\\') ++at;
      return std::min(at + 1, s_.size());
    }
    return at + 1;
  }
  bool startsWith(size_t at, std::string_view text) const { return s_.compare(at, text.size(), text) == 0; }
  std::string_view at(size_t begin, size_t end) const { return s_.substr(begin, end - begin); }
  size_t size() const { return s_.size(); }

 private:
  std::string_view s_;
};

/// What follows a name written at `offset`: a scope (`N::`), a call (`f(`), a template argument
/// list (`T<`), what follows a type (`T x`, `T>`, `T...`, `T& x,`), or anything else (a value's place).
enum class After { Scope, Call, Angle, Typed, Other };
After whatFollows(const Tokens& t, std::string_view source, size_t offset);
/// The name at `offset` is a whole template argument (`vector<uchar>`, `map<K, Row>`).
bool templateArgument(const Tokens& t, std::string_view source, size_t offset);
/// Where `name` is written as a whole word from `offset` on, within the statement (the offset
/// itself when it is not found).
size_t memberAt(const Tokens& t, std::string_view source, size_t offset, const std::string& name);

}  // namespace oomlint::cpp::text
