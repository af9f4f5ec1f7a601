#include "engine/frontends.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include "cpp/loader.h"
#include "python/frontend.h"
#include "python/incremental.h"

namespace oomlint {

namespace {

bool endsWith(const std::string& path, std::string_view s) {
  return path.size() >= s.size() && path.compare(path.size() - s.size(), s.size(), s) == 0;
}

bool namesLibTorch(const std::string& source) {
  return source.find("torch") != std::string::npos || source.find("ATen") != std::string::npos ||
         source.find("c10") != std::string::npos;
}

}  // namespace

DocumentLanguage languageOf(const std::string& path, std::string_view languageId) {
  if (languageId == "python") return DocumentLanguage::Python;
  if (languageId == "cpp" || languageId == "cuda" || languageId == "cuda-cpp" || languageId == "c") return DocumentLanguage::Cpp;
  if (endsWith(path, ".py") || endsWith(path, ".pyi")) return DocumentLanguage::Python;
  for (std::string_view ext : {".cpp", ".cc", ".cxx", ".h", ".hpp", ".hh", ".cu", ".cuh"})
    if (path.size() > ext.size() && endsWith(path, ext)) return DocumentLanguage::Cpp;
  if (!languageId.empty()) return DocumentLanguage::Unsupported;
  // No extension at all (standard input, `bin/train`): Python. Any other extension: not ours.
  size_t slash = path.rfind('/');
  std::string_view base = std::string_view(path).substr(slash == std::string::npos ? 0 : slash + 1);
  return base.find('.', 1) == std::string_view::npos ? DocumentLanguage::Python : DocumentLanguage::Unsupported;
}

ParsedDocument parseDocument(const std::string& path, std::string source, DocumentLanguage language) {
  ParsedDocument out;
  if (language == DocumentLanguage::Unsupported) {
    out.source = std::move(source);
    return out;
  }
  if (language == DocumentLanguage::Cpp) {
    // Rules speak only about LibTorch code: a C++ file that never names torch, ATen or c10 has
    // nothing to find, and skipping Clang for it keeps mixed repositories fast. When the front
    // end is missing or Clang cannot run with the file's flags, say so (never misread C++ as Python).
    out.lang = Lang::Cpp;
    if (!namesLibTorch(source)) {
      out.nothingToFind = true;
      out.source = std::move(source);
      return out;
    }
    std::string error;
    out.module = cpp::parse(path, source, error);
    if (!out.module) {
      // Fail closed: a file Clang could not read is an error, unless oomlint has no C++ front end.
      if (cpp::available()) out.parseFailure = error;
      else out.skippedReason = error + "; " + path + " was not checked";
      out.source = std::move(source);
    }
    return out;
  }
  // NUL bytes: not source code. CPython refuses such files too.
  if (source.find('\0') != std::string::npos) {
    out.nulBytes = true;
    out.source = std::move(source);
    return out;
  }
  out.module = python::parse(path, std::move(source));
  return out;
}

namespace {

/// Threads a notebook's parse may add, shared by the process: files checked side by side already
/// keep the cores busy, so a large notebook takes helpers only while some are left.
std::atomic<int> g_spareThreads{static_cast<int>(std::max(1u, std::thread::hardware_concurrency())) - 1};

}  // namespace

ParsedDocument parseCells(const std::string& path, std::string source, const std::vector<uint32_t>& cellStarts) {
  if (source.find('\0') != std::string::npos) return parseDocument(path, std::move(source), DocumentLanguage::Python);
  int helpers = 0;
  if (source.size() >= python::IncrementalDocument::kParallelBytes && cellStarts.size() > 1) {
    const int wanted = static_cast<int>(cellStarts.size()) - 1;
    int spare = g_spareThreads.load();
    do helpers = std::max(0, std::min(spare, wanted));
    while (helpers > 0 && !g_spareThreads.compare_exchange_weak(spare, spare - helpers));
  }
  ParsedDocument out;
  out.module = python::parseRuns(path, std::move(source), cellStarts, static_cast<unsigned>(helpers) + 1);
  g_spareThreads.fetch_add(helpers);
  return out;
}

bool parsesCleanly(const std::string& path, const std::string& source, DocumentLanguage language) {
  if (language == DocumentLanguage::Cpp) return cpp::parsesCleanly(path, source);
  return python::parsesCleanly(source);
}

}  // namespace oomlint
