#pragma once
/// The projects of the Python documents the server holds. A document is analysed with the rest of
/// its project (read from disk once, when its first document opens); the open documents' text
/// stands for their files. An edit that changes what a module exports re-analyses the open
/// documents whose answers it changed, so their diagnostics are published again.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "project/project.h"

namespace oomlint::lsp {

class Projects {
 public:
  /// Analyses an open Python document's model with its project: `check(opts)` runs the engine
  /// with the options given (the project view and the exports hook set). Returns the paths of the
  /// other open documents whose answers changed and must be analysed again.
  std::vector<std::string> analyse(const std::string& path, CheckOptions opts,
                                   const std::function<std::vector<Finding>(const CheckOptions&)>& check,
                                   std::vector<Finding>& findings);
  /// A module changed on disk (or its editor closed it): its exports are read from the file.
  /// Returns the open documents to analyse again.
  std::vector<std::string> fileChanged(const std::string& path);
  /// A view for an open document (null when it is in no project), answering as the project now
  /// stands: what its diagnostics came from, since any change of an answer re-analyses it. Fixes
  /// are made with it. (The view of its last analysis may point into state a later link replaced.)
  std::unique_ptr<project::FileView> viewFor(const std::string& path) const;
  /// The document is no longer open: its file on disk stands for it again.
  std::vector<std::string> closed(const std::string& path) { return fileChanged(path); }

 private:
  struct Open {
    std::unique_ptr<project::FileView> view;
    uint64_t answered = 0;
  };
  struct Entry {
    std::unique_ptr<project::Project> project;
    std::map<size_t, Open> open;  // module index -> the open document's analysis
  };
  /// The project holding `path`, read on first use.
  Entry& projectOf(const std::string& path, size_t& index);
  /// Sets a module's exports; when they changed, links and lists the open documents whose answers changed.
  std::vector<std::string> update(Entry& e, size_t index, project::FileExports exports, const std::string& except);

  std::map<std::string, Entry> byRoot_;
};

}  // namespace oomlint::lsp
