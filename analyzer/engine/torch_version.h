#pragma once
/// The oldest PyTorch a project must run on (`target-torch`, `--target-torch`, or the project's
/// declared requirement). Rules read it so that no fix or advice names an API newer than it.

#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace oomlint {

struct TorchVersion {
  int major = 0, minor = 0;  // 0.0: not known, and every API may be suggested

  bool known() const { return major > 0 || minor > 0; }
  /// True when the target has version major.minor's API (always, when the target is unknown).
  bool atLeast(int wantMajor, int wantMinor) const {
    return !known() || major > wantMajor || (major == wantMajor && minor >= wantMinor);
  }
  std::string str() const { return std::to_string(major) + "." + std::to_string(minor); }

  /// "2", "2.1", "2.1.0", "2.1.*", "2.1.0+cu121"; nullopt for anything else.
  static std::optional<TorchVersion> parse(std::string_view s) {
    auto number = [&](size_t& i, int& out) {
      size_t start = i;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
      if (i == start || i - start > 4) return false;
      out = std::atoi(std::string(s.substr(start, i - start)).c_str());
      return true;
    };
    TorchVersion v;
    size_t i = 0;
    if (!number(i, v.major)) return std::nullopt;
    if (i < s.size() && s[i] == '.') {
      ++i;
      if (i < s.size() && s[i] == '*') return v;
      if (!number(i, v.minor)) return std::nullopt;
    }
    // A patch number, a wildcard or a local label may follow; nothing else.
    if (i < s.size() && s[i] != '.' && s[i] != '+') return std::nullopt;
    if (!v.known()) return std::nullopt;
    return v;
  }
};

}  // namespace oomlint
