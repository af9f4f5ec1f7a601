#include "cpp/standins.h"

#include <algorithm>
#include <cctype>

#include "cpp/standins_text.h"

namespace oomlint::cpp {

using namespace text;

namespace {

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

/// "no member named 'X' in 'torch::nn::functional::CrossEntropyFuncOptions'" -> the class; ""
/// for a namespace or another message.
std::string classOf(std::string_view message) {
  constexpr std::string_view kIn = " in '";
  size_t at = message.find(kIn);
  if (at == std::string_view::npos || message.find(" in namespace '") != std::string_view::npos) return {};
  size_t close = message.find('\'', at + kIn.size());
  return close == std::string_view::npos ? std::string() : std::string(message.substr(at + kIn.size(), close - at - kIn.size()));
}

/// A class of the bundled declarations that declares the catch-all member: options structs and
/// Tensor (include/torch/torch.h, OOMLINT_MISSING_MEMBER).
bool hasCatchAllMember(std::string_view cls) {
  bool torch = cls.starts_with("torch::") || cls.starts_with("at::") || cls.starts_with("c10::");
  return torch && (cls.ends_with("Options") || cls == "at::Tensor" || cls == "c10::Tensor" || cls == "torch::Tensor");
}

/// `text` declares `name` as something other than a parameter: a whole identifier not followed
/// by `=`, `,` or `)` (a parameter's name, which renaming leaves harmless).
bool declares(std::string_view text, std::string_view name) {
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = text.find(name); at != std::string_view::npos; at = text.find(name, at + 1)) {
    size_t end = at + name.size();
    if ((at > 0 && ident(text[at - 1])) || (end < text.size() && ident(text[end]))) continue;
    while (end < text.size() && text[end] == ' ') ++end;
    if (end < text.size() && (text[end] == '=' || text[end] == ',' || text[end] == ')')) continue;
    return true;
  }
  return false;
}

/// Names the standard library declares as members or functions that a user file may include
/// after the stand-ins header: renaming them would break those headers.
bool standardName(std::string_view name) {
  for (std::string_view s : {"min", "max", "size", "data", "begin", "end", "count", "find", "swap", "get", "reset", "clear",
                             "mean", "stddev", "value", "first", "second", "type", "copy", "fill", "move", "sort", "abs",
                             "p", "a", "b", "lambda", "alpha", "beta", "seed", "param", "erase", "insert", "front", "back"})
    if (name == s) return true;
  return false;
}

}  // namespace

bool isUnresolvedNameError(std::string_view m) {
  for (std::string_view p : {"unknown type name '", "use of undeclared identifier '", "no template named '", "no member named '",
                             "no type named '", "unknown class name '"})
    if (m.substr(0, p.size()) == p) return true;
  return false;
}

bool Standins::learn(const std::vector<UnresolvedName>& errors, std::string_view source) {
  size_t before = size() - members_.size();
  Tokens t(source);
  if (!aliasesScanned_) {
    scanAliases(source);
    aliasesScanned_ = true;
  }
  auto add = [&](std::set<std::string>& into, const std::string& name) {
    if (isPlainName(name)) into.insert(name);
  };
  for (const UnresolvedName& e : errors) {
    const std::string& msg = e.message;
    After after = e.offset < source.size() ? whatFollows(t, source, e.offset) : After::Other;
    if (std::string n = quotedAfter(msg, "unknown type name"); !n.empty()) {
      std::set<std::string>& kind = after == After::Angle ? templates_ : types_;
      if (!redirectUsing(kind, n)) add(kind, n);
    } else if (std::string u = quotedAfter(msg, "unknown class name"); !u.empty()) {
      if (!redirectUsing(types_, u)) add(types_, u);
    } else if (std::string v = quotedAfter(msg, "use of undeclared identifier"); !v.empty()) {
      // `uchar first = ...;`, `std::vector<uchar>`: a type Clang could not tell from a value.
      bool typed = after == After::Typed || (after == After::Other && templateArgument(t, source, e.offset));
      std::set<std::string>& kind = after == After::Scope ? scopes_ : typed ? types_ : values_;
      if (!redirectUsing(kind, v)) add(kind, v);
    } else if (std::string tn = quotedAfter(msg, "no template named"); !tn.empty()) {
      std::string ns = namespaceOf(msg);
      if (ns.empty() && !redirectUsing(templates_, tn)) add(templates_, tn);
      else if (isScopePath(ns) && isPlainName(tn)) scopedTemplates_.insert({ns, tn});
    } else {
      // "no type named" / "no member named 'Y' in namespace 'N'": Clang says type where it tried
      // a declaration (`Net net(config::classes);`), so the next token decides.
      std::string mem = quotedAfter(msg, "no type named");
      if (mem.empty()) mem = quotedAfter(msg, "no member named");
      if (!bundledHeader_.empty() && !mem.empty() && isPlainName(mem) && hasCatchAllMember(classOf(msg)) &&
          !declares(bundledHeader_, mem) && !standardName(mem)) {
        bundledMembers_.insert(mem);
        continue;
      }
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
  // An alias of a namespace no header declares is no namespace of its own: its target is.
  for (const auto& [alias, target] : aliasTargets_)
    if (aliases_.count(alias) || scopes_.count(alias) || scopes_.count(target.substr(0, target.find("::")))) {
      aliases_.insert(alias);
      scopes_.insert(target);
    }
  for (const std::string& a : aliases_) scopes_.erase(a);
  scanScopedNames(source);
  // `using resnet::ResNet;`: declared in its namespace once that is a stand-in.
  for (const Scoped& u : usings_)
    if (scopes_.count(u.scope)) redirectUsing(values_, u.name);
  for (const std::string& s : scopes_)
    if (s.find("::") == std::string::npos && values_.count(s) && !types_.count(s) && !templates_.count(s) && !definesMembersOf(source, s))
      classScopes_.insert(s);
  bool learned = size() - members_.size() > before;
  if (learned && !scanned_) {
    scanMembers(source);
    scanned_ = true;
  }
  return learned;
}

bool Standins::redirectUsing(std::set<std::string>& kind, const std::string& name) {
  for (const Scoped& u : usings_) {
    if (u.name != name || !isScopePath(u.scope)) continue;
    // Declared where the `using` finds it; the uses in the file outrank the one error's guess.
    int uses = usingKinds_.count(name) ? usingKinds_.at(name) : 0;
    if (usingClasses_.count(name)) classScopes_.insert(u.scope + "::" + name);
    else if ((uses & kUsedAsTemplate) || &kind == &templates_) scopedTemplates_.insert(u);
    else if ((uses & kUsedAsType) || &kind == &types_) scopedTypes_.insert(u);
    else scopedValues_.insert(u);
    return true;
  }
  return false;
}

std::string Standins::classScope(const std::string& path, const std::string& name) const {
  std::string h = "struct " + name + " : ::oomlint_standin::Any {\n  using Any::Any;\n";
  std::set<std::string> declared{name};
  for (const std::string& s : scopes_) {
    size_t colons = s.rfind("::");
    if (colons == std::string::npos || s.substr(0, colons) != path) continue;
    std::string member = s.substr(colons + 2);
    if (declared.insert(member).second) h += classScope(s, member);
  }
  for (const Scoped& s : scopedTypes_)
    if (s.scope == path && declared.insert(s.name).second) h += "  using " + s.name + " = ::oomlint_standin::Any;\n";
  for (const Scoped& s : scopedTemplates_)
    if (s.scope == path && declared.insert(s.name).second) h += "  template <class...> using " + s.name + " = ::oomlint_standin::Any;\n";
  for (const Scoped& s : scopedValues_)
    if (s.scope == path && declared.insert(s.name).second) h += "  static inline ::oomlint_standin::Any " + s.name + ";\n";
  return h + "};\n";
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
      // A braced list deduces no template argument (`Dataset(root, {160, 160})`): these take it.
      "  Any(const Any&, const Any&, const Any& = {}, const Any& = {}, const Any& = {}, const Any& = {}, const Any& = {}, const Any& = {});\n"
      "  Any& operator()(const Any&, const Any& = {}, const Any& = {}, const Any& = {}, const Any& = {}, const Any& = {}, const Any& = {}, const Any& = {}) const;\n"
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
    // `vm["lr"].as<float>()`, `x.item<double>()`: what the first template argument names.
    // ... and a braced list, which deduces nothing (`x.index({Slice(), Slice(0, -1)})`).
    h += methods_.count(name) ? "  template <class R = Any, class... T, class... A> R& " + name + "(A&&...) const;\n  Any& " + name +
                                    "(const Any&, const Any& = {}, const Any& = {}, const Any& = {}, const Any& = {}, const Any& = {}) const;\n"
                              : "  static Any " + name + ";\n";
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
  // Members the bundled classes lack: each is their catch-all member.
  for (const std::string& name : bundledMembers_) h += "#define " + name + " oomlint_missing_member\n";
  // One declaration a name: a type (which also serves as a scope, `Trainer::evaluate`), else a
  // template, else a namespace, else a value.
  // A name called and used as a scope (`CIFAR10(path)`, `CIFAR10::Mode::kTest`) is a class with
  // its scope's members nested in it; what is under it is declared there, not in a namespace.
  auto underClass = [&](const std::string& path) {
    for (const std::string& c : classScopes_)
      if (path == c || path.rfind(c + "::", 0) == 0) return true;
    return false;
  };
  for (const std::string& c : classScopes_) {
    size_t colons = c.rfind("::");
    if (colons == std::string::npos) h += classScope(c, c);
    else h += "namespace " + c.substr(0, colons) + " {\n" + classScope(c, c.substr(colons + 2)) + "}\n";
  }
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
    if (!types_.count(s) && !templates_.count(s) && !scopedType(s) && !underClass(s)) h += "namespace " + s + " {}\n";
  for (const std::string& n : values_)
    if (!types_.count(n) && !templates_.count(n) && !scopes_.count(n)) h += "inline ::oomlint_standin::Any " + n + ";\n";
  auto isClass = [&](const Scoped& s) { return classScopes_.count(s.scope + "::" + s.name) > 0; };
  for (const Scoped& s : scopedTypes_)
    if (!underClass(s.scope) && !isClass(s)) h += "namespace " + s.scope + " { using " + s.name + " = ::oomlint_standin::Any; }\n";
  for (const Scoped& s : scopedTemplates_)
    if (!scopedTypes_.count(s) && !underClass(s.scope) && !isClass(s))
      h += "namespace " + s.scope + " { template <class...> using " + s.name + " = ::oomlint_standin::Any; }\n";
  for (const Scoped& s : scopedValues_)
    if (!scopedTypes_.count(s) && !scopedTemplates_.count(s) && !scopes_.count(s.scope + "::" + s.name) && !underClass(s.scope) && !isClass(s))
      h += "namespace " + s.scope + " { inline ::oomlint_standin::Any " + s.name + "; }\n";
  return h;
}

}  // namespace oomlint::cpp
