#pragma once
/// What the editor says about linting, from `initializationOptions`, `workspace/didChangeConfiguration`
/// and `workspace/configuration` (section "oomlint"). The names follow ruff's server settings, so
/// an editor configured for one reads naturally for the other.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"

namespace oomlint::lsp {

struct EditorSettings {
  /// Which of the editor's settings and the project's configuration file wins. `editorFirst`: the
  /// editor's rule lists apply on top of the file's, as command-line flags do; `filesystemFirst`:
  /// a configuration file, where one applies, is used alone; `editorOnly`: files are ignored.
  enum class Preference { EditorFirst, FilesystemFirst, EditorOnly };

  std::optional<std::vector<std::string>> select, ignore, extendSelect;
  std::string configuration;  // one configuration file for every document (`--config`)
  Preference preference = Preference::EditorFirst;
  bool fixAll = true;            // offer `source.fixAll.oomlint` (fix on save)
  bool unsafeFixes = true;       // offer unsafe fixes among quick fixes, marked "(unsafe)"
  bool showSyntaxErrors = true;  // publish OOM000

  /// Reads the keys present in `settings` (flat, or rule lists under "lint"); absent keys keep
  /// their values, `null` resets one. A key of the wrong type is left as it was and said in `problems`.
  void update(const nlohmann::json& settings, std::vector<std::string>& problems);
  nlohmann::json toJson() const;
  /// The overrides a document's configuration is resolved with. `fileConfigApplies`: a
  /// configuration file was found for the document (filesystemFirst then ignores the editor).
  CliOverrides overrides(bool fileConfigApplies) const;
};

}  // namespace oomlint::lsp
