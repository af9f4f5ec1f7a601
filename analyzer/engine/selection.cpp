#include "engine/selection.h"

#include <algorithm>

#include "engine/engine.h"

namespace oomlint {
namespace {

bool matches(std::string_view selector, std::string_view code) {
  if (selector == "ALL") return true;
  return code.substr(0, selector.size()) == selector;
}

/// Length of the most specific selector in `list` matching `code`, or -1.
int bestMatch(const std::vector<std::string>& list, std::string_view code) {
  int best = -1;
  for (const std::string& s : list)
    if (matches(s, code)) best = std::max(best, s == "ALL" ? 0 : static_cast<int>(s.size()));
  return best;
}

}  // namespace

RuleSelection::RuleSelection() {
  for (const Rule* r : allRules())
    if (r->info().enabledByDefault) enabled_.emplace_back(r->info().code);
}

RuleSelection::RuleSelection(const SelectorSet& s) : severity_(s.severity) {
  for (const Rule* r : allRules()) {
    std::string_view code = r->info().code;
    int sel = s.selectGiven ? bestMatch(s.select, code) : (r->info().enabledByDefault ? 0 : -1);
    int ext = bestMatch(s.extendSelect, code);
    int ign = bestMatch(s.ignore, code);
    int on = std::max(sel, ext);
    // The most specific selector decides; on a tie, ignore wins.
    if (on >= 0 && on > ign) enabled_.emplace_back(code);
  }
}

bool RuleSelection::enabled(std::string_view code) const {
  return std::find(enabled_.begin(), enabled_.end(), code) != enabled_.end();
}

Severity RuleSelection::severityOf(std::string_view code, Severity fallback) const {
  auto it = severity_.find(std::string(code));
  return it == severity_.end() ? fallback : it->second;
}

RuleSelection RuleSelection::without(const std::vector<std::string>& codes) const {
  RuleSelection copy = *this;
  if (std::find(codes.begin(), codes.end(), kParseErrorCode) != codes.end()) copy.syntaxErrors_ = false;
  copy.enabled_.erase(std::remove_if(copy.enabled_.begin(), copy.enabled_.end(),
                                     [&](const std::string& c) {
                                       return std::any_of(codes.begin(), codes.end(),
                                                          [&](const std::string& s) { return matches(s, c); });
                                     }),
                      copy.enabled_.end());
  return copy;
}

std::string RuleSelection::fingerprint() const {
  std::string out;
  for (const std::string& c : enabled_) out += c + ",";
  std::vector<std::pair<std::string, Severity>> sev(severity_.begin(), severity_.end());
  std::sort(sev.begin(), sev.end());
  for (const auto& [c, s] : sev) out += c + "=" + std::to_string(static_cast<int>(s)) + ",";
  if (!syntaxErrors_) out += "-OOM000,";
  if (targetTorch_.known()) out += "torch>=" + targetTorch_.str() + ",";
  return out;
}

bool isValidSelector(std::string_view selector, bool syntaxToo) {
  if (selector == "ALL") return true;
  if (syntaxToo && selector == kParseErrorCode) return true;
  for (const Rule* r : allRules())
    if (matches(selector, r->info().code)) return true;
  return false;
}

}  // namespace oomlint
