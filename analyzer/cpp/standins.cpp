#include "cpp/standins.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace oomlint::cpp {
namespace {

bool isIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

/// The text between the first pair of quotes after `prefix` in `message` ("unknown type name
/// 'X'" -> X); "" when the message does not start with `prefix`.
std::string quotedAfter(std::string_view message, std::string_view prefix) {
  if (message.substr(0, prefix.size()) != prefix) return {};
  size_t open = message.find('\'', prefix.size());
  if (open == std::string_view::npos) return {};
  size_t close = message.find('\'', open + 1);
  if (close == std::string_view::npos) return {};
  return std::string(message.substr(open + 1, close - open - 1));
}

/// "... in namespace 'torch::nn'" -> torch::nn; "" when the message names no namespace.
std::string namespaceOf(std::string_view message) {
  constexpr std::string_view kIn = " in namespace '";
  size_t at = message.find(kIn);
  if (at == std::string_view::npos) return {};
  size_t close = message.find('\'', at + kIn.size());
  return close == std::string_view::npos ? std::string() : std::string(message.substr(at + kIn.size(), close - at - kIn.size()));
}

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
/// list (`T<`), what follows a type (`T x`, `T>`, `T...`), or anything else (a value's place).
enum class After { Scope, Call, Angle, Typed, Other };
After whatFollows(const Tokens& t, std::string_view source, size_t offset) {
  size_t nameEnd = t.end(t.next(offset));
  size_t n = t.next(nameEnd);
  if (t.startsWith(n, "::")) return After::Scope;
  if (t.startsWith(n, "(")) return After::Call;
  if (t.startsWith(n, "<")) return After::Angle;
  if (t.startsWith(n, ">") || t.startsWith(n, "...") || (n < source.size() && isIdentStart(source[n]))) return After::Typed;
  return After::Other;
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

/// Names after `.` or `->` that are not a member to declare: the stand-in's own, and `operator`
/// (`x.operator()(...)`), which cannot be declared as a plain member.
constexpr std::array<std::string_view, 8> kOwnMembers = {"begin", "end", "Any", "BatchType", "ExampleType", "value_type", "element_type", "operator"};

}  // namespace

bool isUnresolvedNameError(std::string_view m) {
  for (std::string_view p : {"unknown type name '", "use of undeclared identifier '", "no template named '", "no member named '",
                             "no type named '", "unknown class name '"})
    if (m.substr(0, p.size()) == p) return true;
  return false;
}

void Standins::scanMembers(std::string_view source) {
  Tokens t(source);
  std::set<std::string> notCalled;
  for (size_t at = t.next(0); at < t.size(); at = t.next(t.end(at))) {
    bool arrow = t.startsWith(at, "->");
    if (!arrow && !(t.startsWith(at, ".") && !(at + 1 < t.size() && std::isdigit(static_cast<unsigned char>(source[at + 1]))))) continue;
    size_t name = t.next(at + (arrow ? 2 : 1));
    if (t.startsWith(name, "template")) name = t.next(t.end(name));
    if (name >= t.size() || !isIdentStart(source[name])) continue;
    std::string member(t.at(name, t.end(name)));
    if (std::find(kOwnMembers.begin(), kOwnMembers.end(), member) != kOwnMembers.end()) continue;
    members_.insert(member);
    size_t after = t.next(t.end(name));
    bool called = t.startsWith(after, "(") || t.startsWith(after, "<");
    if (!called) notCalled.insert(member);
  }
  for (const std::string& mname : members_)
    if (!notCalled.count(mname)) methods_.insert(mname);
}

bool Standins::learn(const std::vector<UnresolvedName>& errors, std::string_view source) {
  size_t before = size() - members_.size();
  Tokens t(source);
  auto add = [&](std::set<std::string>& into, const std::string& name) {
    if (isPlainName(name)) into.insert(name);
  };
  for (const UnresolvedName& e : errors) {
    const std::string& msg = e.message;
    After after = e.offset < source.size() ? whatFollows(t, source, e.offset) : After::Other;
    if (std::string n = quotedAfter(msg, "unknown type name"); !n.empty()) {
      add(after == After::Angle ? templates_ : types_, n);
    } else if (std::string u = quotedAfter(msg, "unknown class name"); !u.empty()) {
      add(types_, u);
    } else if (std::string v = quotedAfter(msg, "use of undeclared identifier"); !v.empty()) {
      add(after == After::Scope ? scopes_ : values_, v);
    } else if (std::string tn = quotedAfter(msg, "no template named"); !tn.empty()) {
      std::string ns = namespaceOf(msg);
      if (ns.empty()) add(templates_, tn);
      else if (isScopePath(ns) && isPlainName(tn)) scopedTemplates_.insert({ns, tn});
    } else {
      // "no type named" / "no member named 'Y' in namespace 'N'": Clang says type where it tried
      // a declaration (`Net net(config::classes);`), so the next token decides.
      std::string mem = quotedAfter(msg, "no type named");
      if (mem.empty()) mem = quotedAfter(msg, "no member named");
      std::string ns = namespaceOf(msg);
      if (mem.empty() || !isScopePath(ns) || !isPlainName(mem)) continue;  // a class's member: scanMembers
      // Clang may point at the qualifier (`cxxopts::Options x`): what follows the member decides.
      after = whatFollows(t, source, memberAt(t, source, e.offset, mem));
      if (after == After::Scope) scopes_.insert(ns + "::" + mem);
      else if (after == After::Angle) scopedTemplates_.insert({ns, mem});
      else if (after == After::Typed) scopedTypes_.insert({ns, mem});
      else scopedValues_.insert({ns, mem});
    }
  }
  scanScopedNames(source);
  bool learned = size() - members_.size() > before;
  if (learned && !scanned_) {
    scanMembers(source);
    scanned_ = true;
  }
  return learned;
}

void Standins::scanScopedNames(std::string_view source) {
  if (scopes_.empty()) return;
  Tokens t(source);
  for (size_t at = t.next(0); at < t.size(); at = t.next(t.end(at))) {
    if (!isIdentStart(source[at]) || (at > 0 && (isIdentChar(source[at - 1]) || source[at - 1] == ':'))) continue;
    // `ns::a::b`: the longest chain of names joined by `::` that starts here.
    std::string scope(t.at(at, t.end(at)));
    if (!scopes_.count(scope)) continue;
    size_t cur = at;
    while (true) {
      size_t colons = t.next(t.end(cur));
      if (!t.startsWith(colons, "::")) break;
      size_t name = t.next(colons + 2);
      if (name >= t.size() || !isIdentStart(source[name])) break;
      std::string member(t.at(name, t.end(name)));
      switch (whatFollows(t, source, name)) {
        case After::Scope: scopes_.insert(scope + "::" + member); break;
        case After::Angle: scopedTemplates_.insert({scope, member}); break;
        case After::Typed: scopedTypes_.insert({scope, member}); break;
        default: scopedValues_.insert({scope, member}); break;
      }
      scope += "::" + member;
      cur = name;
    }
  }
}

std::string Standins::header() const {
  if (size() == 0) return {};
  std::string h =
      "// oomlint: stand-ins for names no header of this parse declares\n"
      "namespace oomlint_standin {\n"
      "struct Any {\n"
      "  template <class... A> Any(A&&...);\n"
      "  Any(const Any&);\n"
      "  template <class T> operator T&() const;\n"
      "  template <class... A> Any& operator()(A&&...) const;\n"
      "  Any* operator->() const;\n"
      "  Any& operator*() const;\n"
      "  template <class I> Any& operator[](I&&) const;\n"
      "  Any* begin() const;\n"
      "  Any* end() const;\n"
      "  Any& operator=(const Any&);\n"
      "  template <class T> Any& operator=(T&&);\n"
      "  Any& operator++(); Any& operator++(int); Any& operator--(); Any& operator--(int);\n"
      "  Any& operator-() const; Any& operator+() const; Any& operator!() const; Any& operator~() const;\n"
      "  using BatchType = Any; using ExampleType = Any; using value_type = Any; using element_type = Any;\n";
  for (const char* op : {"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="})
    h += std::string("  template <class T> Any& operator") + op + "(const T&);\n";
  for (const std::string& name : members_)
    h += methods_.count(name) ? "  template <class... T, class... A> Any& " + name + "(A&&...) const;\n" : "  static Any " + name + ";\n";
  h += "};\n";
  // Any on one side only: an exact match, so neither the built-in operators (which would convert
  // the stand-in) nor each other make the call ambiguous; Any on both sides takes the plain one.
  h += "template <class T> struct NotAny { using type = Any&; };\ntemplate <> struct NotAny<Any> {};\n";
  for (const char* op : {"+", "-", "*", "/", "%", "==", "!=", "<", ">", "<=", ">=", "&", "|", "^"}) {
    std::string o = op;
    h += "template <class T> typename NotAny<T>::type operator" + o + "(const Any&, const T&);\n";
    h += "template <class T> typename NotAny<T>::type operator" + o + "(const T&, const Any&);\n";
    h += "Any& operator" + o + "(const Any&, const Any&);\n";
  }
  // `total += x.item<double>()`: a plain variable updated from a stand-in.
  h += "template <class T> struct OtherRef { using type = T&; };\ntemplate <> struct OtherRef<Any> {};\n";
  for (const char* op : {"+=", "-=", "*=", "/="})
    h += std::string("template <class T> typename OtherRef<T>::type operator") + op + "(T&, const Any&);\n";
  // Streams: `std::cout << x << std::endl` keeps the stream on the left.
  h += "template <class T> T& operator<<(T&, const Any&);\ntemplate <class T> T& operator>>(T&, const Any&);\n";
  h += "}  // namespace oomlint_standin\n";
  // One declaration a name: a type (which also serves as a scope, `Trainer::evaluate`), else a
  // template, else a namespace, else a value.
  for (const std::string& n : types_) h += "using " + n + " = ::oomlint_standin::Any;\n";
  for (const std::string& n : templates_)
    if (!types_.count(n)) h += "template <class...> using " + n + " = ::oomlint_standin::Any;\n";
  // A scope inside a namespace that also names a type there (`ns::Foo x;` and `ns::Foo::bar`)
  // stays the type.
  auto scopedType = [&](const std::string& path) {
    size_t colons = path.rfind("::");
    if (colons == std::string::npos) return false;
    Scoped k{path.substr(0, colons), path.substr(colons + 2)};
    return scopedTypes_.count(k) || scopedTemplates_.count(k);
  };
  for (const std::string& s : scopes_)
    if (!types_.count(s) && !templates_.count(s) && !scopedType(s)) h += "namespace " + s + " {}\n";
  for (const std::string& n : values_)
    if (!types_.count(n) && !templates_.count(n) && !scopes_.count(n)) h += "inline ::oomlint_standin::Any " + n + ";\n";
  for (const Scoped& s : scopedTypes_) h += "namespace " + s.scope + " { using " + s.name + " = ::oomlint_standin::Any; }\n";
  for (const Scoped& s : scopedTemplates_)
    if (!scopedTypes_.count(s)) h += "namespace " + s.scope + " { template <class...> using " + s.name + " = ::oomlint_standin::Any; }\n";
  for (const Scoped& s : scopedValues_)
    if (!scopedTypes_.count(s) && !scopedTemplates_.count(s) && !scopes_.count(s.scope + "::" + s.name))
      h += "namespace " + s.scope + " { inline ::oomlint_standin::Any " + s.name + "; }\n";
  return h;
}

}  // namespace oomlint::cpp
