#pragma once
/// `--export-fixes FILE`: the fixes as clang-tidy exports them (clang::tooling's
/// TranslationUnitDiagnostics YAML), so `clang-apply-replacements DIR` and the tools built on it
/// (run-clang-tidy's -fix, review bots) apply oomlint's fixes as they apply clang-tidy's.

#include <string>
#include <vector>

#include "engine/engine.h"

namespace oomlint::report {

/// One YAML document holding every finding of `results` whose fix can be applied (safe ones,
/// and unsafe ones when `unsafe`), each replacement naming its file by absolute path.
/// Notebooks are left out: their offsets are in the cells, not the file.
std::string clangFixesYaml(const std::vector<FileResult>& results, bool unsafe, const std::string& buildDirectory);

}  // namespace oomlint::report
