#pragma once
/// The order a project's modules are analysed in: what a module imports before the module (from
/// a quick look at its top-level imports; cycles together), so most modules see the final
/// summaries of what they import the first time. And which modules named files need.

#include <functional>
#include <string>
#include <vector>

#include "project/project.h"

namespace oomlint {
class ResultCache;
}

namespace oomlint::project {

/// Runs `fn` on each item, on up to `threads` threads.
void parallelFor(const std::vector<size_t>& items, unsigned threads, const std::function<void(size_t)>& fn);

/// Runs `fn` on every module not `skip`ped, each once every module it imports (its cycle aside)
/// has been run; skipped modules count as run already. `definitions`, when given, is filled with
/// each module's scanDefinitions before the first `fn` runs.
/// `beforeRun`, when given, gets each module's ProgramGuess (unscanned for skipped ones) once the
/// imports are read, before the first `fn` runs.
void inImportOrder(const Project& p, unsigned threads, const std::vector<char>& skip, const std::function<void(size_t)>& fn,
                   std::vector<std::vector<std::string>>* definitions = nullptr,
                   const std::function<void(const std::vector<ProgramGuess>&)>& beforeRun = {});

/// The modules in parts that no import joins, each a list of indices into `p`'s files in their
/// order: each part can be analysed alone, one after another, so that memory follows the largest
/// part instead of the folder (ten copies of a package, a repository of independent examples).
/// Every import statement counts, nested ones too, and the modules under one top folder stay
/// together; a root that is itself a package is one part.
std::vector<std::vector<size_t>> independentParts(const Project& p, unsigned threads);

/// The modules of every program that holds a `start` file: the modules among `candidates` that
/// import one (directly or not), and everything those and the start files import (from a quick
/// look at import statements). A few named files of a big project are checked with these, not
/// with every module of it: nothing else can change what they are told. With a `cache`, each
/// module's imports are kept there, and an unchanged module is not read again.
std::vector<std::string> programsHolding(const std::string& root, const std::vector<std::string>& start,
                                         const std::vector<std::string>& candidates, unsigned threads,
                                         ResultCache* cache = nullptr);

}  // namespace oomlint::project
