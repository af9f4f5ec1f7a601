#pragma once
/// Checking files as part of their project: every module of the project is read for what it
/// exports, then files whose answers changed are analysed again, in rounds, until nothing a file
/// relied on changes (or four rounds: long chains of helpers are rare). Findings come only from
/// the files the user named; the others are read for their summaries.

#include <functional>
#include <string>
#include <vector>

#include "cache/cache.h"
#include "engine/engine.h"
#include "project/project.h"

namespace oomlint::project {

struct ProjectCheck {
  std::vector<bool> report;                            // per project file: its findings are wanted
  std::vector<std::string> displayPath;                // per project file: the path findings name
  std::function<const CheckOptions&(size_t)> options;  // per project file
  /// The results cache (null: none). An unchanged module's summaries come from it without
  /// parsing; its findings too, when every answer its analysis relied on is unchanged.
  ResultCache* cache = nullptr;
  std::function<const std::string&(size_t)> selectionKey;  // per reported file: what its cached findings must match
  unsigned threads = 1;
  /// Called once per reported file with its final result (from the checking threads).
  std::function<void(size_t, FileResult&&)> onResult;
  /// Files analysed in each round (filled by checkProject, for --verbose).
  mutable std::vector<size_t> analysedPerRound;
  mutable size_t fromCache = 0;  // modules whose summaries came from the cache
  /// The project's linked state is read after the check (views for fixes, an editor's later
  /// edits). When it is not and no cache is kept, the last round's link and fingerprints, whose
  /// only use is to tell the cache whether every answer settled, are skipped.
  bool usedAfter = true;
  /// When set: told why each file is analysed again (the answers that changed).
  std::function<void(size_t, int, const std::string&)> explain;
};

/// Runs the rounds. Returns how many rounds ran (for --verbose and tests).
int checkProject(Project& p, const ProjectCheck& check);

}  // namespace oomlint::project
