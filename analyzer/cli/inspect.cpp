#include "cli/inspect.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "files/walk.h"
#include "engine/engine.h"
#include "util/path.h"

namespace oomlint {

int showFiles(std::ostream& os, const std::vector<std::string>& paths, ConfigResolver& resolver, bool forceExclude) {
  WalkOptions wopts;
  wopts.forceExclude = forceExclude;
  WalkResult walked = collectFiles(paths.empty() ? std::vector<std::string>{"."} : paths, resolver, wopts);
  std::vector<std::string> files;
  for (const std::string& f : walked.files) files.push_back(absolutePath(f));
  std::sort(files.begin(), files.end());
  for (const std::string& f : files) os << f << "\n";
  for (const WalkIssue& issue : walked.issues) os << issue.path << ": " << issue.message << "\n";
  return walked.issues.empty() ? 0 : 1;
}

int showSettings(std::ostream& os, const std::string& file, ConfigResolver& resolver) {
  std::string abs = absolutePath(file);
  std::string dir = abs.substr(0, abs.rfind('/'));
  struct stat st {};
  if (::stat(abs.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) dir = abs;
  auto cfg = resolver.forDirectory(dir);
  os << "Resolved settings for: " << abs << "\n";
  os << "Settings path: " << (cfg->file.empty() ? "(none: defaults and the command line)" : cfg->file) << "\n";
  bool excluded = resolver.excluded(*cfg, abs);
  os << "Excluded: " << (excluded ? "yes, by `exclude`/`extend-exclude` (a named file is still checked unless --force-exclude)" : "no")
     << "\n";
  os << "Respects .gitignore: " << (cfg->respectGitignore ? "yes" : "no") << "\n";
  if (cfg->outputFormat) os << "Output format: " << *cfg->outputFormat << "\n";
  if (cfg->fix) os << "Fix: " << (*cfg->fix ? "yes" : "no") << "\n";
  if (cfg->unsafeFixes) os << "Unsafe fixes: " << (*cfg->unsafeFixes ? "yes" : "no") << "\n";
  RuleSelection target = resolver.selectionFor(*cfg, abs);
  os << "Target PyTorch: " << (target.targetTorch().known() ? target.targetTorch().str() : std::string("(any: the newest API may be suggested)"))
     << "\n";
  RuleSelection selection = resolver.selectionFor(*cfg, abs);
  os << "Enabled rules:\n";
  for (const Rule* r : allRules()) {
    const RuleInfo& i = r->info();
    if (!selection.enabled(i.code)) continue;
    os << "  " << i.code << " " << i.name << " (" << severityName(selection.severityOf(i.code, i.severity)) << ")\n";
  }
  return 0;
}

const Rule* ruleByCodeOrName(const std::string& codeOrName) {
  std::string upper = codeOrName;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (const Rule* r = findRule(upper)) return r;
  for (const Rule* r : allRules())
    if (r->info().name == codeOrName) return r;
  return nullptr;
}

int cleanCache(std::ostream& os, const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) {
    os << "No cache at " << dir << "\n";
    return 0;
  }
  std::filesystem::remove_all(dir, ec);
  if (ec) {
    os << "oomlint: error: cannot remove " << dir << ": " << ec.message() << "\n";
    return 2;
  }
  os << "Removed " << dir << "\n";
  return 0;
}

}  // namespace oomlint
