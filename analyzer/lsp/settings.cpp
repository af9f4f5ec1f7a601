#include "lsp/settings.h"

namespace oomlint::lsp {

using nlohmann::json;

namespace {

void readList(const json& s, const char* key, std::optional<std::vector<std::string>>& out, std::vector<std::string>& problems) {
  if (!s.contains(key)) return;
  const json& v = s[key];
  if (v.is_null()) {
    out.reset();
    return;
  }
  std::vector<std::string> codes;
  bool ok = v.is_array();
  if (ok)
    for (const json& c : v) {
      if (!c.is_string()) ok = false;
      else codes.push_back(c.get<std::string>());
    }
  if (!ok) {
    problems.push_back(std::string("`") + key + "` must be a list of rule codes or prefixes");
    return;
  }
  out = std::move(codes);
}

void readBool(const json& s, const char* key, bool& out, bool fallback, std::vector<std::string>& problems) {
  if (!s.contains(key)) return;
  if (s[key].is_null()) out = fallback;
  else if (s[key].is_boolean()) out = s[key].get<bool>();
  else problems.push_back(std::string("`") + key + "` must be true or false");
}

const char* preferenceName(EditorSettings::Preference p) {
  switch (p) {
    case EditorSettings::Preference::FilesystemFirst: return "filesystemFirst";
    case EditorSettings::Preference::EditorOnly: return "editorOnly";
    default: return "editorFirst";
  }
}

}  // namespace

void EditorSettings::update(const json& settings, std::vector<std::string>& problems) {
  if (!settings.is_object()) return;
  for (const json* s : {&settings, settings.contains("lint") && settings["lint"].is_object() ? &settings["lint"] : nullptr}) {
    if (!s) continue;
    readList(*s, "select", select, problems);
    readList(*s, "ignore", ignore, problems);
    readList(*s, "extendSelect", extendSelect, problems);
  }
  if (settings.contains("configuration")) {
    const json& c = settings["configuration"];
    if (c.is_null()) configuration.clear();
    else if (c.is_string()) configuration = c.get<std::string>();
    else problems.push_back("`configuration` must be the path of a configuration file");
  }
  if (settings.contains("configurationPreference")) {
    const json& p = settings["configurationPreference"];
    if (p == "editorFirst" || p.is_null()) preference = Preference::EditorFirst;
    else if (p == "filesystemFirst") preference = Preference::FilesystemFirst;
    else if (p == "editorOnly") preference = Preference::EditorOnly;
    else problems.push_back("`configurationPreference` must be editorFirst, filesystemFirst or editorOnly");
  }
  readBool(settings, "fixAll", fixAll, true, problems);
  readBool(settings, "unsafeFixes", unsafeFixes, true, problems);
  readBool(settings, "showSyntaxErrors", showSyntaxErrors, true, problems);
}

json EditorSettings::toJson() const {
  auto list = [](const std::optional<std::vector<std::string>>& l) { return l ? json(*l) : json(nullptr); };
  return {{"select", list(select)},
          {"ignore", list(ignore)},
          {"extendSelect", list(extendSelect)},
          {"configuration", configuration.empty() ? json(nullptr) : json(configuration)},
          {"configurationPreference", preferenceName(preference)},
          {"fixAll", fixAll},
          {"unsafeFixes", unsafeFixes},
          {"showSyntaxErrors", showSyntaxErrors}};
}

CliOverrides EditorSettings::overrides(bool fileConfigApplies) const {
  CliOverrides o;
  if (preference == Preference::FilesystemFirst && fileConfigApplies) return o;
  o.select = select;
  o.ignore = ignore;
  o.extendSelect = extendSelect;
  o.configFile = configuration;
  o.isolated = preference == Preference::EditorOnly && configuration.empty();
  return o;
}

}  // namespace oomlint::lsp
