#pragma once
// Stand-ins for what a C++ file names but no header of its parse declares.
//
// A LibTorch file checked on its own (bundled mode) or with a header missing names types,
// functions and namespaces that Clang cannot resolve: `ConvNet model(10);` from "model.h",
// `for (auto& b : loader)` over a loader declared there, an out-of-line `Trainer::evaluate`.
// Clang drops each such declaration, and every expression built on it after that: a training
// loop whose model comes from a project header lowers to nothing. The front end parses such a
// file a second time with a generated header that declares each unresolved name as a permissive
// stand-in (a type that converts to anything and has every member the file uses), so the code
// that uses them is lowered; what the stand-ins return is unknown to the facts, as it should be.

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace oomlint::cpp {

/// An error Clang reported in the main file about a name it could not resolve.
struct UnresolvedName {
  std::string message;  // Clang's text: "unknown type name 'ConvNet'"
  uint32_t offset = 0;  // where, in the main file
};

/// True for the errors that standinHeader can answer (unknown types, templates, identifiers,
/// members of a namespace, members of a stand-in).
bool isUnresolvedNameError(std::string_view message);

/// Accumulates the names a file leaves unresolved over successive parses.
class Standins {
 public:
  /// Reads one parse's unresolved-name errors against the file's text. Returns true when they
  /// named something not already declared (another parse with header() may lower more).
  bool learn(const std::vector<UnresolvedName>& errors, std::string_view source);
  /// The header declaring every stand-in learned so far ("" when none).
  std::string header() const;
  /// How many names were learned.
  size_t size() const {
    return types_.size() + templates_.size() + values_.size() + scopes_.size() + scopedTypes_.size() + scopedTemplates_.size() +
           scopedValues_.size() + members_.size() + bundledMembers_.size();
  }
  /// The bundled LibTorch declarations of this parse: a member of their options structs or of
  /// Tensor that they lack (`CrossEntropyFuncOptions().label_smoothing(0.1)`) is then renamed to
  /// the catch-all member each of them declares, so that what is built on it keeps its type.
  void setBundledHeader(std::string_view text) { bundledHeader_ = text; }

 private:
  struct Scoped {
    std::string scope, name;
    auto operator<=>(const Scoped&) const = default;
  };
  /// Members written after `.` or `->` anywhere in the file: each becomes a member of the
  /// stand-in type, so a chain `a.b.c()` resolves in one parse.
  void scanMembers(std::string_view source);
  /// Every `ns::name` chain the file writes under a namespace learned so far, declared at once
  /// by what follows each name, so the namespace's members need no parse of their own.
  void scanScopedNames(std::string_view source);
  /// `namespace po = boost::program_options;` and `using resnet::ResNet;` where the namespace is
  /// one no header declares: the alias needs its target declared (not a namespace of its own
  /// name), and a name brought in by `using` is declared in its namespace, of the kind its uses
  /// in the file show (`ResNet<Block> net(...)` is a template).
  void scanAliases(std::string_view source);
  /// A name learned unqualified that a `using` brings in from a stand-in namespace goes there.
  bool redirectUsing(std::set<std::string>& kind, const std::string& name);
  /// The file defines members of `name` out of line (`void Name::run() {`).
  static bool definesMembersOf(std::string_view source, const std::string& name);
  /// The class declaring a name that is called and used as a scope, its scope's members nested.
  std::string classScope(const std::string& path, const std::string& name) const;

  std::set<std::string> types_, templates_, values_, scopes_;
  std::set<Scoped> scopedTypes_, scopedTemplates_, scopedValues_;
  std::set<std::string> members_, methods_;  // members_: all; methods_: those only ever called
  std::set<std::string> bundledMembers_;     // members the bundled declarations' classes lack
  std::string_view bundledHeader_;
  std::set<std::string> aliases_;             // namespace aliases whose target is a stand-in
  std::vector<std::pair<std::string, std::string>> aliasTargets_;  // every `namespace a = t;` of the file
  std::vector<Scoped> usings_;                // `using scope::name;` of the file
  std::map<std::string, int> usingKinds_;     // those names' uses: 1 as a type, 2 as a template
  std::set<std::string> classScopes_;         // names called and used as a scope (Standins::classScope)
  std::set<std::string> usingClasses_;        // names a `using` brings in that the file calls and uses as a scope
  static constexpr int kUsedAsType = 1, kUsedAsTemplate = 2, kUsedAsScope = 4, kCalled = 8;
  bool scanned_ = false;
  bool aliasesScanned_ = false;
};

}  // namespace oomlint::cpp
