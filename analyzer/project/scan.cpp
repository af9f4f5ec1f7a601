#include "project/scan.h"

#include <algorithm>

namespace oomlint::project {

namespace {

bool isNameChar(char c) { return c == '_' || c == '.' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

/// The statement starting at `pos` (a line's first non-blank), through parentheses and
/// backslash continuations.
std::string_view statementAt(std::string_view src, size_t pos, size_t& end) {
  int depth = 0;
  size_t i = pos;
  for (; i < src.size(); ++i) {
    char c = src[i];
    if (c == '(') ++depth;
    else if (c == ')') --depth;
    else if (c == '#') {
      while (i < src.size() && src[i] != '\n') ++i;
      if (depth <= 0) break;
    } else if (c == '\\' && i + 1 < src.size() && src[i + 1] == '\n') ++i;
    else if (c == '\n' && depth <= 0) break;
  }
  end = i;
  return src.substr(pos, i - pos);
}

/// Splits `a as b, c.d` (parentheses, newlines and comments allowed) into the names before `as`.
std::vector<std::string> names(std::string_view list) {
  std::vector<std::string> out;
  std::string cur;
  bool skipping = false;  // after `as`, until the comma
  size_t i = 0;
  auto flush = [&] {
    if (!cur.empty()) out.push_back(cur);
    cur.clear();
  };
  while (i < list.size()) {
    char c = list[i];
    if (c == '#') {  // a comment inside the parentheses
      while (i < list.size() && list[i] != '\n') ++i;
      continue;
    }
    if (c == ',') {
      flush();
      skipping = false;
      ++i;
      continue;
    }
    if (isNameChar(c)) {
      size_t j = i;
      while (j < list.size() && isNameChar(list[j])) ++j;
      std::string_view word = list.substr(i, j - i);
      if (word == "as") {
        flush();
        skipping = true;
      } else if (!skipping && cur.empty()) {
        cur = std::string(word);
      }
      i = j;
      continue;
    }
    ++i;
  }
  flush();
  return out;
}

}  // namespace

std::vector<ScannedImport> scanImports(std::string_view src) {
  std::vector<ScannedImport> out;
  size_t pos = 0;
  while (pos < src.size()) {
    size_t lineEnd = src.find('\n', pos);
    if (lineEnd == std::string_view::npos) lineEnd = src.size();
    size_t first = pos;
    while (first < lineEnd && (src[first] == ' ' || src[first] == '\t')) ++first;
    std::string_view rest = src.substr(first, lineEnd - first);
    // Nested imports are marked: one inside a function runs when it is called (how Python code
    // breaks import cycles), and ordering on it would tie the cycle back.
    bool nested = first != pos;
    bool isImport = rest.substr(0, 7) == "import ";
    bool isFrom = rest.substr(0, 5) == "from ";
    if (!isImport && !isFrom) {
      pos = lineEnd + 1;
      continue;
    }
    size_t end = 0;
    std::string_view stmt = statementAt(src, first, end);
    if (isImport) {
      for (std::string& n : names(stmt.substr(7))) out.push_back({std::move(n), {}, true, nested});
    } else {
      size_t kw = stmt.find(" import");
      if (kw != std::string_view::npos) {
        std::string_view module = stmt.substr(5, kw - 5);
        while (!module.empty() && module.front() == ' ') module.remove_prefix(1);
        while (!module.empty() && module.back() == ' ') module.remove_suffix(1);
        std::string base(module);
        bool onlyDots = base.find_first_not_of('.') == std::string::npos;
        bool any = false;
        for (std::string& n : names(stmt.substr(kw + 7))) {
          if (n == "*") continue;
          out.push_back({onlyDots ? base + n : base + "." + n, base, false, nested});
          any = true;
        }
        if (!any) out.push_back({base, {}, false, nested});
      }
    }
    pos = end + 1;
  }
  return out;
}

bool encodeImports(const std::vector<ScannedImport>& imports, std::string& out) {
  // One line per import: flags, the name, a tab, the fallback.
  out.clear();
  for (const ScannedImport& imp : imports) {
    if ((imp.name + imp.fallback).find_first_of("\t\n") != std::string::npos) return false;
    out += imp.plain ? 'p' : '-';
    out += imp.nested ? 'n' : '-';
    out += imp.name;
    out += '\t';
    out += imp.fallback;
    out += '\n';
  }
  return true;
}

bool decodeImports(std::string_view text, std::vector<ScannedImport>& out) {
  out.clear();
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) return false;
    std::string_view line = text.substr(pos, end - pos);
    size_t tab = line.find('\t');
    if (line.size() < 2 || tab == std::string_view::npos || tab < 2) return false;
    out.push_back({std::string(line.substr(2, tab - 2)), std::string(line.substr(tab + 1)), line[0] == 'p', line[1] == 'n'});
    pos = end + 1;
  }
  return true;
}

std::vector<std::string> scanDefinitions(std::string_view src) {
  std::vector<std::string> out;
  auto nameAfter = [&](std::string_view line, size_t at) {
    size_t end = at;
    while (end < line.size() && isNameChar(line[end]) && line[end] != '.') ++end;
    if (end > at) out.emplace_back(line.substr(at, end - at));
  };
  for (size_t pos = 0; pos < src.size();) {
    size_t lineEnd = src.find('\n', pos);
    if (lineEnd == std::string_view::npos) lineEnd = src.size();
    std::string_view line = src.substr(pos, lineEnd - pos);
    if (line.starts_with("def ")) nameAfter(line, 4);
    else if (line.starts_with("async def ")) nameAfter(line, 10);
    else if (line.starts_with("class ")) nameAfter(line, 6);
    pos = lineEnd + 1;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

ProgramFacts guessOwnFacts(std::string_view source) {
  auto has = [&](std::string_view word) { return source.find(word) != std::string_view::npos; };
  ProgramFacts f;
  f.mentionsCuda = has("cuda") || has("accelerator") || has("kCUDA");
  // A GradScaler is named in imports, definitions and docstrings far more often than made or
  // used: guessed false (a program that uses one costs its modules a second analysis).
  f.usesGradScaler = false;
  f.bindsDevice = has("set_device") || has("CUDA_VISIBLE_DEVICES") || (has("init_process_group") && has("device_id")) ||
                  has("cuda.device(");
  return f;
}

}  // namespace oomlint::project
