#pragma once
/// The results cache (`.oomlint_cache/` in the working directory, as ruff does): findings per
/// file, keyed by oomlint's version, the file's rule selection and its metadata (size, mtime,
/// inode), with a content hash checked when the metadata is ambiguous (a file changed within the
/// same second it was cached). Written atomically; a corrupt cache is discarded with a warning.

#include <sys/stat.h>

#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/engine.h"

namespace oomlint {

class ResultCache {
 public:
  /// Loads `dir`/<version>.json if present. `warning` is set when it was unreadable or corrupt.
  ResultCache(std::string dir, std::string& warning);

  /// Cached findings for `absPath` analysed with `selectionKey`, when still valid.
  bool lookup(const std::string& absPath, const std::string& selectionKey, std::vector<Finding>& out);
  /// `dependencies`: other files the findings depend on (FileResult::dependencies); the entry is
  /// valid only while they are unchanged too.
  void store(const std::string& absPath, const std::string& selectionKey, const std::string& source,
             const std::vector<Finding>& findings, const std::vector<std::string>& dependencies = {});
  /// Writes the cache (temporary file + rename inside the cache folder). Returns "" or a warning.
  std::string save();

  static uint64_t hashContent(const std::string& s);

  /// What is kept of a file checked as part of its project.
  struct Stored {
    std::string selection;          // the selection its findings were made with; "" when it was only read for its summaries
    std::vector<Finding> findings;
    std::string project;            // its exports and the questions it asked (project/serialize.h)
    bool summarised = false;        // the entry has them (even when not copied into `project`)
  };
  /// The entry of an unchanged file, whatever selection it was checked with; its summaries are
  /// copied only when `withSummaries` (a settled project's check needs just the findings).
  bool lookupStored(const std::string& absPath, Stored& out, bool withSummaries = true);
  /// Stores a file's entry; `contentHash` is hashContent of the text that was analysed.
  void storeStored(const std::string& absPath, uint64_t contentHash, Stored s);
  /// What the last check of a project (a root and its module list, as `key`) left: whether every
  /// module's answers were settled, so an unchanged project is answered from its entries alone.
  /// "" when unknown.
  std::string projectState(const std::string& key);
  void setProjectState(const std::string& key, std::string state);

  /// What a file's import statements name (project/scan.h, encoded), while the file is unchanged
  /// since `text` was scanned: a check of a few named files finds the programs that hold them
  /// without reading the project's unchanged modules.
  bool lookupScan(const std::string& absPath, std::string& out);
  void storeScan(const std::string& absPath, const std::string& text, std::string scan);

 private:
  /// What a file was like when an entry was stored: size, mtime and inode, and a content hash
  /// for when the mtime cannot tell (changed within the second it was cached).
  struct Stamp {
    int64_t size = 0, mtimeNs = 0, inode = 0;
    uint64_t hash = 0;
  };
  struct Dependency {
    std::string path;
    Stamp stamp;
  };
  struct Scan {
    Stamp stamp;
    int64_t cachedAt = 0;
    std::string imports;
  };
  struct Entry {
    std::string selection;
    int64_t size = 0, mtimeNs = 0, inode = 0, cachedAt = 0;
    uint64_t hash = 0;
    std::vector<Dependency> dependencies;
    std::vector<Finding> findings;
    std::string project;                    // summaries stored in this run, or
    size_t blobOffset = 0, blobLength = 0;  // where the last save put them in its summaries file
  };
  /// Reads the summaries file the JSON names, once.
  void loadSummaries();
  std::string_view summariesOf(const Entry& e);
  /// The entry of `absPath` when the file is unchanged since it was stored (caller holds mutex_).
  const Entry* unchanged(const std::string& absPath);
  static bool sameAsStamped(const std::string& path, const Stamp& stamp, int64_t cachedAt);
  std::string dir_, file_;
  std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;
  std::unordered_map<std::string, std::string> projects_;  // project key -> projectState
  std::unordered_map<std::string, Scan> scans_;
  bool dirty_ = false;
  std::string blobFile_, blobs_;
  size_t blobSize_ = 0;
  uint64_t blobToken_ = 0;
  bool blobsLoaded_ = false;
};

}  // namespace oomlint
