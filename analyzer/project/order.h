#pragma once
/// The order a project's modules are analysed in: what a module imports before the module (from
/// a quick look at its top-level imports; cycles together), so most modules see the final
/// summaries of what they import the first time. And what a file outside any project reads.

#include <functional>
#include <string>
#include <vector>

#include "project/project.h"

namespace oomlint::project {

/// Runs `fn` on each item, on up to `threads` threads.
void parallelFor(const std::vector<size_t>& items, unsigned threads, const std::function<void(size_t)>& fn);

/// Runs `fn` on every module not `skip`ped, each once every module it imports (its cycle aside)
/// has been run; skipped modules count as run already.
void inImportOrder(const Project& p, unsigned threads, const std::vector<char>& skip, const std::function<void(size_t)>& fn);

/// `start` and the modules among `candidates` that they import, directly or not (a quick look at
/// their import statements): the project of files that have no project root above them is what
/// they import, not every file that happens to sit beside them.
std::vector<std::string> importClosure(const std::string& root, const std::vector<std::string>& start,
                                       const std::vector<std::string>& candidates);

}  // namespace oomlint::project
