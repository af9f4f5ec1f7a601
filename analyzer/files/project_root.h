#pragma once
/// Where a project begins on disk, found the way ruff and pre-commit find it: shared by the check
/// (which files make up the project), the LSP server (which project a document belongs to) and the
/// C++ front end (which headers are the project's own), so it sits below all three.

#include <string>

namespace oomlint {

/// The nearest folder at or above `absPath` holding pyproject.toml, setup.cfg, setup.py or .git;
/// "" when there is none.
std::string findProjectRoot(const std::string& absPath);

}  // namespace oomlint
