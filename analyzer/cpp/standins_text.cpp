// Reading C++ text for the stand-ins: see cpp/standins_text.h.
#include "cpp/standins_text.h"

#include <cctype>

namespace oomlint::cpp::text {

bool isIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool isPlainName(const std::string& s) {
  if (s.empty() || !isIdentStart(s[0])) return false;
  for (char c : s)
    if (!isIdentChar(c)) return false;
  return s != "oomlint_standin";
}

bool isScopePath(const std::string& s) {
  size_t start = 0;
  while (true) {
    size_t colons = s.find("::", start);
    if (!isPlainName(s.substr(start, colons == std::string::npos ? std::string::npos : colons - start))) return false;
    if (colons == std::string::npos) return true;
    start = colons + 2;
  }
}

/// What follows a name written at `offset`: a scope (`N::`), a call (`f(`), a template argument
/// list (`T<`), what follows a type (`T x`, `T>`, `T...`), or anything else (a value's place).
After whatFollows(const Tokens& t, std::string_view source, size_t offset) {
  size_t nameEnd = t.end(t.next(offset));
  size_t n = t.next(nameEnd);
  if (t.startsWith(n, "::")) return After::Scope;
  if (t.startsWith(n, "(")) return After::Call;
  if (t.startsWith(n, "<")) return After::Angle;
  if (t.startsWith(n, ">") || t.startsWith(n, "...") || (n < source.size() && isIdentStart(source[n]))) return After::Typed;
  // `T& x,`, `T* x)`, `T&& x =`: a declarator, not `a & b`.
  if (t.startsWith(n, "&") || t.startsWith(n, "*")) {
    size_t d = t.next(n + (t.startsWith(n, "&&") ? 2 : 1));
    if (d < source.size() && isIdentStart(source[d])) {
      size_t after = t.next(t.end(d));
      for (std::string_view end : {",", ")", "=", ";", "{", "["})
        if (t.startsWith(after, end) && !t.startsWith(after, "==")) return After::Typed;
    }
  }
  return After::Other;
}

/// The name at `offset` is a whole template argument (`vector<uchar>`, `map<K, Row>`): after `<`
/// or `,`, before `>` or `,`, with a `<` before it on the same statement.
bool templateArgument(const Tokens& t, std::string_view source, size_t offset) {
  size_t start = t.next(offset);
  size_t n = t.next(t.end(start));
  if (!(t.startsWith(n, ">") || t.startsWith(n, ","))) return false;
  size_t b = start;
  while (b > 0 && std::isspace(static_cast<unsigned char>(source[b - 1]))) --b;
  if (b == 0 || (source[b - 1] != '<' && source[b - 1] != ',')) return false;
  for (size_t k = b; k > 0; --k) {
    char c = source[k - 1];
    if (c == '<') return k >= 2 && isIdentChar(source[k - 2]);
    if (c == ';' || c == '{' || c == '}' || c == '(' || c == ')') return false;
  }
  return false;
}

/// Where `name` is written as a whole word from `offset` on, within the statement (the offset
/// itself when it is not found).
size_t memberAt(const Tokens& t, std::string_view source, size_t offset, const std::string& name) {
  for (size_t at = t.next(offset), steps = 0; at < t.size() && steps < 16; at = t.next(t.end(at)), ++steps) {
    if (t.at(at, t.end(at)) == name) return at;
    if (source[at] == ';' || source[at] == '{') break;
  }
  return offset;
}

}  // namespace oomlint::cpp::text
