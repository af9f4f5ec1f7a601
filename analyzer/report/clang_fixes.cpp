#include "report/clang_fixes.h"

#include "util/path.h"

namespace oomlint::report {
namespace {

/// A YAML double-quoted scalar: newlines and quotes escaped, so replacement text survives as is.
std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

const char* levelOf(Severity s) {
  switch (s) {
    case Severity::Error: return "Error";
    case Severity::Info: return "Remark";
    default: return "Warning";
  }
}

}  // namespace

std::string clangFixesYaml(const std::vector<FileResult>& results, bool unsafe, const std::string& buildDirectory) {
  std::string main, diagnostics;
  for (const FileResult& r : results) {
    if (r.notebook) continue;
    std::string path = absolutePath(r.path);
    for (const Finding& f : r.findings) {
      if (!f.hasFix || f.fix.edits.empty()) continue;
      if (f.fix.applicability == Applicability::DisplayOnly || (f.fix.applicability == Applicability::Unsafe && !unsafe)) continue;
      if (main.empty()) main = path;
      diagnostics += "  - DiagnosticName:  " + quoted("oomlint-" + std::string(f.code)) + "\n";
      diagnostics += "    DiagnosticMessage:\n";
      diagnostics += "      Message:         " + quoted(f.message) + "\n";
      diagnostics += "      FilePath:        " + quoted(path) + "\n";
      diagnostics += "      FileOffset:      " + std::to_string(f.span.begin) + "\n";
      diagnostics += "      Replacements:\n";
      for (const Edit& e : f.fix.edits) {
        diagnostics += "        - FilePath:        " + quoted(path) + "\n";
        diagnostics += "          Offset:          " + std::to_string(e.begin) + "\n";
        diagnostics += "          Length:          " + std::to_string(e.end - e.begin) + "\n";
        diagnostics += "          ReplacementText: " + quoted(e.content) + "\n";
      }
      diagnostics += std::string("    Level:           ") + levelOf(f.severity) + "\n";
      diagnostics += "    BuildDirectory:  " + quoted(buildDirectory) + "\n";
    }
  }
  std::string out = "---\nMainSourceFile:  " + quoted(main) + "\n";
  out += diagnostics.empty() ? "Diagnostics:     []\n" : "Diagnostics:\n" + diagnostics;
  return out + "...\n";
}

}  // namespace oomlint::report
