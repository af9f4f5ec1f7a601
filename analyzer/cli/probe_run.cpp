#include "cli/probe_run.h"

#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace oomlint {

std::string shellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string probeDevice(const ProbeCommand& probe, const VerifyOptions& opts) {
  std::string cmd = probe.shell + " --which-device --device " + shellQuote(opts.device) + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return {};
  // Warnings a library prints on stderr may come before the answer: any line that is one is it,
  // else the last line says why there is none.
  std::array<char, 512> buf{};
  std::string last;
  while (std::fgets(buf.data(), buf.size(), p)) {
    std::string line = buf.data();
    line = line.substr(0, line.find('\n'));
    if (line == "cuda" || line == "cpu") {
      ::pclose(p);
      return line;
    }
    if (!line.empty()) last = line;
  }
  ::pclose(p);
  return last;
}

nlohmann::json invokeProbe(const ProbeCommand& probe, const VerifyOptions& opts, const std::string& code,
                           const nlohmann::json& stated, const std::string& flags) {
  std::string cmd = probe.shell + " --device " + shellQuote(opts.device) + " --steps " + std::to_string(opts.steps) +
                    " --json -" + flags;
  std::string statedFile;
  if (!stated.is_null()) {
    // In $TMPDIR as other tools' temporary files are (a test gives each run its own).
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/oomlint-workload-XXXXXX";
    std::vector<char> path(pattern.begin(), pattern.end());
    path.push_back('\0');
    int fd = ::mkstemp(path.data());
    if (fd < 0) return nullptr;
    std::string text = stated.dump();
    bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    statedFile = path.data();
    if (!written) {
      ::unlink(statedFile.c_str());
      return nullptr;
    }
    cmd += " --workload " + shellQuote(statedFile);
  }
  cmd += " " + code + " 2>/dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  int rc = -1;
  if (p) {
    std::array<char, 4096> buf{};
    while (size_t n = std::fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
    rc = ::pclose(p);
  }
  if (!statedFile.empty()) ::unlink(statedFile.c_str());
  nlohmann::json doc = nlohmann::json::parse(out, nullptr, false);
  return rc == 0 && !doc.is_discarded() ? doc : nlohmann::json(nullptr);
}

std::optional<MeasuredCost> measuredFrom(const nlohmann::json& doc, const std::string& probeCode) {
  for (const nlohmann::json& pr : doc["probes"]) {
    if (pr.value("code", "") != probeCode) continue;
    MeasuredCost m;
    m.device = doc["provenance"].value("device", "");
    m.note = pr.value("note", "");
    if (pr.value("available", false) && pr.contains("anti") && pr.contains("fix")) {
      m.present = true;
      m.peakAnti = pr["anti"].value("peak_bytes", int64_t{0});
      m.peakFix = pr["fix"].value("peak_bytes", int64_t{0});
      m.retainedAnti = pr["anti"].value("retained_bytes", int64_t{0});
      m.retainedFix = pr["fix"].value("retained_bytes", int64_t{0});
      m.growthAnti = pr["anti"].value("growth_bytes_per_step", 0.0);
      m.growthFix = pr["fix"].value("growth_bytes_per_step", 0.0);
      m.msAnti = pr["anti"].value("ms_per_step", 0.0);
      m.msFix = pr["fix"].value("ms_per_step", 0.0);
    }
    return m;
  }
  return std::nullopt;
}

}  // namespace oomlint
