// The stand-ins' reading of the whole file (cpp/standins.h): members written after `.` or `->`,
// names under a stand-in namespace, namespace aliases and `using` declarations, out-of-line
// member definitions.
#include <algorithm>
#include <array>
#include <cctype>

#include "cpp/standins.h"
#include "cpp/standins_text.h"

namespace oomlint::cpp {

using namespace text;

namespace {

/// Names after `.` or `->` that are not a member to declare: the stand-in's own, and `operator`
/// (`x.operator()(...)`), which cannot be declared as a plain member.
constexpr std::array<std::string_view, 8> kOwnMembers = {"begin", "end", "Any", "BatchType", "ExampleType", "value_type", "element_type", "operator"};

}  // namespace

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

bool Standins::definesMembersOf(std::string_view source, const std::string& name) {
  // `Name::member(...) {`, `Name::Name(...) : ...`, `Name::member(...) const`: out-of-line
  // definitions, which a namespace of that name still reads and a class would reject.
  Tokens t(source);
  for (size_t at = t.next(0); at < t.size(); at = t.next(t.end(at))) {
    if (t.at(at, t.end(at)) != name || (at > 0 && (isIdentChar(source[at - 1]) || source[at - 1] == ':'))) continue;
    size_t colons = t.next(t.end(at));
    if (!t.startsWith(colons, "::")) continue;
    size_t member = t.next(colons + 2);
    if (t.startsWith(member, "~")) member = t.next(member + 1);
    if (member >= t.size() || !isIdentStart(source[member])) continue;
    size_t open = t.next(t.end(member));
    if (!t.startsWith(open, "(")) continue;
    int depth = 0;
    size_t k = open;
    for (; k < t.size(); k = t.next(t.end(k))) {
      if (source[k] == '(') ++depth;
      else if (source[k] == ')' && --depth == 0) break;
    }
    size_t after = t.next(k + 1);
    if (t.startsWith(after, "{") || (t.startsWith(after, ":") && !t.startsWith(after, "::")) || t.startsWith(after, "const") ||
        t.startsWith(after, "override") || t.startsWith(after, "noexcept"))
      return true;
  }
  return false;
}

void Standins::scanAliases(std::string_view source) {
  Tokens t(source);
  // A `::`-joined path of names from `at`, and where it ends.
  auto path = [&](size_t at, size_t& end) {
    std::string out;
    if (t.startsWith(at, "::")) at = t.next(at + 2);
    while (at < t.size() && isIdentStart(source[at])) {
      out += std::string(t.at(at, t.end(at)));
      end = t.end(at);
      size_t colons = t.next(end);
      if (!t.startsWith(colons, "::")) break;
      out += "::";
      at = t.next(colons + 2);
    }
    return out;
  };
  for (size_t at = t.next(0); at < t.size(); at = t.next(t.end(at))) {
    std::string_view word = t.at(at, t.end(at));
    if (word != "namespace" && word != "using") continue;
    if (at > 0 && isIdentChar(source[at - 1])) continue;
    size_t first = t.next(t.end(at));
    if (first >= t.size()) break;
    if (word == "namespace") {
      // `namespace po = boost::program_options;`
      if (!isIdentStart(source[first])) continue;
      std::string alias(t.at(first, t.end(first)));
      size_t eq = t.next(t.end(first));
      if (!t.startsWith(eq, "=")) continue;
      size_t end = eq;
      std::string target = path(t.next(eq + 1), end);
      if (!isScopePath(target) || !t.startsWith(t.next(end), ";")) continue;
      aliasTargets_.push_back({alias, target});
      continue;
    }
    // `using scope::name;` (not `using namespace x;`, not `using X = Y;`)
    if (t.at(first, t.end(first)) == "namespace" || t.at(first, t.end(first)) == "typename") continue;
    size_t end = first;
    std::string full = path(first, end);
    size_t colons = full.rfind("::");
    if (colons == std::string::npos || !t.startsWith(t.next(end), ";")) continue;
    usings_.push_back({full.substr(0, colons), full.substr(colons + 2)});
  }
  // The kind of each name a `using` brings in, from its uses (each is also checked as it is learned).
  for (const Scoped& u : usings_)
    for (size_t at = t.next(0); at < t.size(); at = t.next(t.end(at))) {
      if (t.at(at, t.end(at)) != u.name || (at > 0 && (isIdentChar(source[at - 1]) || source[at - 1] == ':'))) continue;
      After after = whatFollows(t, source, at);
      if (after == After::Angle) usingKinds_[u.name] |= kUsedAsTemplate;
      else if (after == After::Typed) usingKinds_[u.name] |= kUsedAsType;
      else if (after == After::Scope) usingKinds_[u.name] |= kUsedAsScope;
      else if (after == After::Call) usingKinds_[u.name] |= kCalled;
    }
  for (const Scoped& u : usings_) {
    int uses = usingKinds_[u.name];
    // A `using` cannot name a namespace: a name it brings in that is used as a scope is a class.
    if ((uses & kUsedAsScope) && !definesMembersOf(source, u.name)) usingClasses_.insert(u.name);
  }
}

void Standins::scanScopedNames(std::string_view source) {
  if (scopes_.empty()) return;
  Tokens t(source);
  for (size_t at = t.next(0); at < t.size(); at = t.next(t.end(at))) {
    if (!isIdentStart(source[at]) || (at > 0 && (isIdentChar(source[at - 1]) || source[at - 1] == ':'))) continue;
    // `ns::a::b`: the longest chain of names joined by `::` that starts here.
    std::string scope(t.at(at, t.end(at)));
    if (aliases_.count(scope)) {  // `po::variables_map` is a member of what `po` names
      for (const auto& [alias, target] : aliasTargets_)
        if (alias == scope) scope = target;
    } else if (usingClasses_.count(scope)) {  // `Dataset::Mode::kTest` after `using data::Dataset;`
      for (const Scoped& u : usings_)
        if (u.name == scope && classScopes_.count(u.scope + "::" + u.name)) scope = u.scope + "::" + u.name;
      if (scope.find("::") == std::string::npos) continue;
    } else if (!scopes_.count(scope)) {
      continue;
    }
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

}  // namespace oomlint::cpp
