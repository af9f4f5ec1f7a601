#include "notebook/scan.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <functional>

namespace oomlint::notebook_scan {

namespace {

bool isDigit(char c) { return c >= '0' && c <= '9'; }

bool hex4(std::string_view t, size_t at, uint32_t& v) {
  if (at + 4 > t.size()) return false;
  v = 0;
  for (size_t k = 0; k < 4; ++k) {
    char c = t[at + k];
    uint32_t d = isDigit(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : 16;
    if (d == 16) return false;
    v = v * 16 + d;
  }
  return true;
}

void appendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

/// The length of the well-formed UTF-8 sequence at t[i] (a byte >= 0x80), or 0 (RFC 3629:
/// no overlong forms, no surrogates, nothing above U+10FFFF), as nlohmann's lexer checks it.
size_t utf8Length(std::string_view t, size_t i) {
  unsigned char c = static_cast<unsigned char>(t[i]);
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c == 0xE0) n = 3, lo = 0xA0;
  else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) n = 3;
  else if (c == 0xED) n = 3, hi = 0x9F;
  else if (c == 0xF0) n = 4, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3) n = 4;
  else if (c == 0xF4) n = 4, hi = 0x8F;
  else return 0;
  if (i + n > t.size()) return 0;
  unsigned char second = static_cast<unsigned char>(t[i + 1]);
  if (second < lo || second > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    unsigned char ck = static_cast<unsigned char>(t[i + k]);
    if (ck < 0x80 || ck > 0xBF) return 0;
  }
  return n;
}

/// The string token at t[i] (an opening quote), read as nlohmann reads it: `i` ends past its
/// closing quote, and its text is appended to `out` when given.
bool readString(std::string_view t, size_t& i, std::string* out) {
  if (i >= t.size() || t[i] != '"') return false;
  ++i;
  for (;;) {
    size_t run = i;
    while (i < t.size()) {
      unsigned char c = static_cast<unsigned char>(t[i]);
      if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) break;
      ++i;
    }
    if (out) out->append(t.substr(run, i - run));
    if (i >= t.size()) return false;
    unsigned char c = static_cast<unsigned char>(t[i]);
    if (c == '"') {
      ++i;
      return true;
    }
    if (c < 0x20) return false;
    if (c >= 0x80) {
      size_t n = utf8Length(t, i);
      if (n == 0) return false;
      if (out) out->append(t.substr(i, n));
      i += n;
      continue;
    }
    if (i + 1 >= t.size()) return false;  // a backslash
    char escape = t[i + 1];
    i += 2;
    char plain = 0;
    switch (escape) {
      case '"': plain = '"'; break;
      case '\\': plain = '\\'; break;
      case '/': plain = '/'; break;
      case 'b': plain = '\b'; break;
      case 'f': plain = '\f'; break;
      case 'n': plain = '\n'; break;
      case 'r': plain = '\r'; break;
      case 't': plain = '\t'; break;
      case 'u': {
        uint32_t cp = 0, low = 0;
        if (!hex4(t, i, cp)) return false;
        i += 4;
        if (cp >= 0xDC00 && cp <= 0xDFFF) return false;  // a low surrogate alone
        if (cp >= 0xD800 && cp <= 0xDBFF) {               // must be followed by its low half
          if (i + 1 >= t.size() || t[i] != '\\' || t[i + 1] != 'u' || !hex4(t, i + 2, low) || low < 0xDC00 || low > 0xDFFF)
            return false;
          i += 6;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        }
        if (out) appendUtf8(*out, cp);
        continue;
      }
      default: return false;
    }
    if (out) *out += plain;
  }
}

/// A JSON number token at t[i]; false for one nlohmann would reject (a malformed one, or one
/// beyond a double's range).
bool readNumber(std::string_view t, size_t& i) {
  size_t start = i;
  bool integer = true;
  if (i < t.size() && t[i] == '-') ++i;
  if (i >= t.size()) return false;
  if (t[i] == '0') ++i;
  else if (t[i] >= '1' && t[i] <= '9') while (i < t.size() && isDigit(t[i])) ++i;
  else return false;
  if (i < t.size() && t[i] == '.') {
    integer = false;
    if (++i >= t.size() || !isDigit(t[i])) return false;
    while (i < t.size() && isDigit(t[i])) ++i;
  }
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    integer = false;
    if (++i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    if (i >= t.size() || !isDigit(t[i])) return false;
    while (i < t.size() && isDigit(t[i])) ++i;
  }
  if (integer && i - start <= 19) return true;
  double v = 0;  // a float, or an integer too long for 64 bits (nlohmann reads it as a double)
  auto [end, ec] = std::from_chars(t.data() + start, t.data() + i, v);
  return ec == std::errc() && end == t.data() + i && std::isfinite(v);
}

class Scanner {
 public:
  Scanner(std::string_view t, bool strict) : t_(t), strict_(strict) {}

  bool scan(Scanned& out) {
    std::vector<bool> seen(3, false);  // cells, nbformat, metadata
    bool ok = object([&](std::string_view key) {
      if (key == "cells") return once(seen, 0) && cellList(out.cells);
      if (!strict_) return skipValue();
      if (key == "nbformat") return once(seen, 1) && token(out.nbformat);
      if (key == "metadata") return once(seen, 2) && metadata(out);
      return skipValue();
    });
    ws();
    return ok && i_ == t_.size() && (!strict_ || seen[0]);
  }

 private:
  /// In a strict scan, a key read here may come once: which of two nlohmann keeps is not ours to guess.
  bool once(std::vector<bool>& seen, size_t k) {
    if (strict_ && seen[k]) return false;
    seen[k] = true;
    return true;
  }
  void ws() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t' || t_[i_] == '\n' || t_[i_] == '\r')) ++i_;
  }
  bool at(char c) {
    ws();
    return i_ < t_.size() && t_[i_] == c;
  }
  /// A string token; its decoded text when asked for.
  bool string(std::string* decoded = nullptr) {
    if (!at('"')) return false;
    if (strict_) {
      if (decoded) decoded->clear();
      return readString(t_, i_, decoded);
    }
    size_t start = i_++;
    bool escapes = false;
    while (i_ < t_.size() && t_[i_] != '"') {
      if (t_[i_] == '\\') {
        escapes = true;
        ++i_;
      }
      ++i_;
    }
    if (i_ >= t_.size()) return false;
    ++i_;
    if (decoded) {
      if (!escapes) decoded->assign(t_.substr(start + 1, i_ - start - 2));
      else if (!decodeString(t_.substr(start, i_ - start), *decoded)) return false;
    }
    return true;
  }
  bool object(const std::function<bool(std::string_view)>& value) {
    if (!at('{') || !deeper()) return false;
    ++i_;
    bool ok = false;
    if (at('}')) {
      ++i_;
      ok = true;
    } else {
      for (;;) {
        std::string key;
        if (!string(&key) || !at(':')) break;
        ++i_;
        if (!value(key)) break;
        if (at(',')) {
          ++i_;
          continue;
        }
        if (at('}')) {
          ++i_;
          ok = true;
        }
        break;
      }
    }
    --depth_;
    return ok;
  }
  bool array(const std::function<bool()>& element) {
    if (!at('[') || !deeper()) return false;
    ++i_;
    bool ok = false;
    if (at(']')) {
      ++i_;
      ok = true;
    } else {
      for (;;) {
        if (!element()) break;
        if (at(',')) {
          ++i_;
          continue;
        }
        if (at(']')) {
          ++i_;
          ok = true;
        }
        break;
      }
    }
    --depth_;
    return ok;
  }
  /// Nesting is bounded, so that no text runs the stack out.
  bool deeper() { return ++depth_ <= kMaxDepth || (--depth_, false); }
  /// A number or a literal (its token into `out`); strings, objects and arrays are false.
  bool token(std::string& out) {
    ws();
    size_t start = i_;
    if (i_ < t_.size() && (t_[i_] == '-' || isDigit(t_[i_]))) {
      if (!readNumber(t_, i_)) return false;
    } else {
      for (std::string_view literal : {"true", "false", "null"})
        if (t_.substr(i_, literal.size()) == literal) {
          i_ += literal.size();
          break;
        }
      if (i_ == start) return false;
    }
    out.assign(t_.substr(start, i_ - start));
    return true;
  }
  bool skipValue() {
    ws();
    if (i_ >= t_.size()) return false;
    char c = t_[i_];
    if (c == '{') return object([&](std::string_view) { return skipValue(); });
    if (c == '[') return array([&] { return skipValue(); });
    if (c == '"') return string();
    if (strict_) {
      std::string ignored;
      return token(ignored);
    }
    size_t start = i_;
    while (i_ < t_.size() && std::string_view(",]} \t\r\n").find(t_[i_]) == std::string_view::npos) ++i_;
    return i_ > start;
  }
  /// `"metadata"`: the kernel's language (kernelspec.language, language_info.name), when strings.
  bool metadata(Scanned& out) {
    if (!at('{')) return skipValue();
    std::vector<bool> seen(2, false);
    return object([&](std::string_view key) {
      bool spec = key == "kernelspec", info = key == "language_info";
      if (!spec && !info) return skipValue();
      if (!once(seen, spec ? 0 : 1)) return false;
      if (!at('{')) return skipValue();
      std::optional<std::string>& slot = spec ? out.kernelLanguage : out.languageName;
      std::string_view wanted = spec ? "language" : "name";
      std::vector<bool> inner(1, false);
      return object([&](std::string_view k) {
        if (k != wanted) return skipValue();
        if (!once(inner, 0)) return false;
        if (!at('"')) return skipValue();
        slot.emplace();
        return string(&*slot);
      });
    });
  }
  bool cellList(std::vector<Cell>& cells) {
    return array([&] {
      Cell c;
      std::vector<bool> seen(2, false);  // cell_type, source
      bool ok = object([&](std::string_view key) {
        if (key == "cell_type") {
          if (!once(seen, 0)) return false;
          return string(&c.type);  // not a string: a strict scan leaves it to the slow way
        }
        if (key != "source") return skipValue();
        if (!once(seen, 1)) return false;
        ws();
        c.hasSource = true;
        c.begin = i_;
        std::string* text = strict_ ? &c.text : nullptr;
        auto item = [&] {
          ws();
          size_t b = i_;
          if (text) c.itemStarts.push_back(text->size());
          if (!at('"')) return false;
          if (strict_ ? !readString(t_, i_, text) : !string()) return false;
          c.items.emplace_back(b, i_);
          return true;
        };
        bool done;
        if (at('[')) {
          c.array = true;
          done = array(item);
        } else {
          done = item();
        }
        c.end = i_;
        return done;
      });
      cells.push_back(std::move(c));
      return ok;
    });
  }

  static constexpr int kMaxDepth = 512;
  std::string_view t_;
  size_t i_ = 0;
  bool strict_;
  int depth_ = 0;
};

}  // namespace

bool scan(std::string_view text, Scanned& out, bool strict) {
  out = Scanned{};
  return Scanner(text, strict).scan(out);
}

bool decodeString(std::string_view token, std::string& out) {
  out.clear();
  size_t i = 0;
  return readString(token, i, &out) && i == token.size();
}

}  // namespace oomlint::notebook_scan
