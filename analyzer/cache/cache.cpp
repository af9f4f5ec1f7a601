#include "cache/cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cache/index_format.h"
#include "util/executable.h"
#include "version.h"

namespace oomlint {
namespace {

using nlohmann::json;
using namespace cache_format;

int64_t mtimeNs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec;
}

/// The release, the layout of an entry and this very binary (its size and modification time): a
/// cache written by another build is discarded, a rebuilt development binary of the same release
/// included, whose analysis may differ.
const std::string& cacheVersion() {
  static const std::string version = [] {
    std::string v = std::string(OOMLINT_VERSION) + "+cache16";
    struct stat st {};
    std::string self = executablePath();
    if (!self.empty() && ::stat(self.c_str(), &st) == 0)
      v += "+" + std::to_string(st.st_size) + "." + std::to_string(mtimeNs(st));
    return v;
  }();
  return version;
}

/// Writes `text` to `path`; on failure nothing is left there.
std::string writeFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return "cannot write " + path;
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (out) return {};
  ::unlink(path.c_str());
  return "cannot write " + path;
}

/// The summaries files of earlier saves of this version, now that the JSON names `keep`. (A
/// concurrent oomlint whose file goes too finds no summaries: its modules are analysed again.)
void removeOtherSummaries(const std::string& dir, const std::string& keep) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  std::string prefix = std::string(OOMLINT_VERSION) + ".";
  while (const dirent* e = ::readdir(d)) {
    std::string_view name = e->d_name;
    if (name == keep || !name.starts_with(prefix) || !name.ends_with(".summaries")) continue;
    ::unlink((dir + "/" + std::string(name)).c_str());
  }
  ::closedir(d);
}

/// The whole of a file into `out`, in one read.
bool readWhole(const std::string& path, std::string& out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  bool ok = ::fstat(fd, &st) == 0;
  if (ok) out.resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (ok && got < out.size()) {
    ssize_t r = ::read(fd, out.data() + got, out.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  ::close(fd);
  out.resize(got);
  return ok;
}

std::string blobHeader(uint64_t token) { return "oomlint summaries " + std::to_string(token) + "\n"; }

}  // namespace

uint64_t ResultCache::hashContent(const std::string& s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

ResultCache::ResultCache(std::string dir, std::string& warning) : dir_(std::move(dir)) {
  file_ = dir_ + "/" + std::string(OOMLINT_VERSION) + ".index";
  std::string text;
  if (!readWhole(file_, text)) return;
  try {
    IndexReader in{text};
    in.expect(kIndexMagic);
    if (in.string() != cacheVersion()) {
      dirty_ = true;  // written by another build of oomlint: start afresh, silently
      return;
    }
    in.expect("\n");
    // The modules' summaries sit in a file of their own: they are most of the bytes, and a check
    // whose projects are settled never reads them, so they are read only when asked for
    // (loadSummaries).
    in.expect("blobs ");
    std::string_view blobName = in.string();
    in.expect(" ");
    blobSize_ = in.number<size_t>();
    in.expect(" ");
    blobToken_ = in.number<uint64_t>();
    in.expect("\n");
    if (!blobName.empty()) blobFile_ = dir_ + "/" + std::string(blobName);
    // Files share a handful of rule selections, long strings: each is written once.
    in.expect("selections ");
    std::vector<std::string> selections(in.number<size_t>());
    in.expect("\n");
    for (std::string& sel : selections) {
      sel = in.string();
      in.expect("\n");
    }
    in.expect("projects ");
    for (size_t n = in.number<size_t>(); n > 0; --n) {
      in.expect("\n");
      std::string key(in.string());
      in.expect(" ");
      projects_[std::move(key)] = in.string();
    }
    in.expect("\nfiles ");
    size_t count = in.number<size_t>();
    entries_.reserve(count);
    for (size_t n = count; n > 0; --n) {
      in.expect("\n");
      std::string path(in.string());
      Entry entry;
      in.expect(" ");
      entry.selection = selections.at(in.number<size_t>());
      in.expect(" ");
      entry.size = in.number<int64_t>();
      in.expect(" ");
      entry.mtimeNs = in.number<int64_t>();
      in.expect(" ");
      entry.inode = in.number<int64_t>();
      in.expect(" ");
      entry.cachedAt = in.number<int64_t>();
      in.expect(" ");
      entry.hash = in.number<uint64_t>();
      in.expect(" ");
      entry.blobOffset = in.number<size_t>();
      in.expect(" ");
      entry.blobLength = in.number<size_t>();
      if (blobFile_.empty()) entry.blobLength = 0;
      in.expect(" ");
      if (std::string_view extra = in.string(); !extra.empty()) {  // findings and dependencies
        json doc = json::parse(extra);
        entry.findings = findingsFrom(doc.at("findings"));
        if (doc.contains("deps"))
          for (const json& d : doc["deps"])
            entry.dependencies.push_back({d.at(0).get<std::string>(), Stamp{d.at(1), d.at(2), d.at(3), d.at(4)}});
      }
      entries_[std::move(path)] = std::move(entry);
    }
    in.expect("\nscans ");
    for (size_t n = in.number<size_t>(); n > 0; --n) {
      in.expect("\n");
      std::string path(in.string());
      Scan scan;
      for (int64_t* v : {&scan.stamp.size, &scan.stamp.mtimeNs, &scan.stamp.inode, &scan.cachedAt}) {
        in.expect(" ");
        *v = in.number<int64_t>();
      }
      in.expect(" ");
      scan.stamp.hash = in.number<uint64_t>();
      in.expect(" ");
      scan.imports = in.string();
      scans_[std::move(path)] = std::move(scan);
    }
    in.expect("\n");
    if (in.at != text.size()) IndexReader::bad();
  } catch (const std::exception&) {
    entries_.clear();
    projects_.clear();
    scans_.clear();
    blobFile_.clear();
    warning = "cache " + file_ + " is corrupt; discarding it";
    dirty_ = true;
  }
}

const ResultCache::Entry* ResultCache::unchanged(const std::string& absPath) {
  struct stat st {};
  if (::stat(absPath.c_str(), &st) != 0) return nullptr;
  auto it = entries_.find(absPath);
  if (it == entries_.end()) return nullptr;
  const Entry& e = it->second;
  if (e.size != st.st_size || e.mtimeNs != mtimeNs(st) || e.inode != static_cast<int64_t>(st.st_ino)) return nullptr;
  // Written within a second of being cached: the mtime cannot tell two versions apart.
  if (mtimeNs(st) / 1000000000LL >= e.cachedAt - 1) {
    std::string text;
    if (!readWhole(absPath, text) || hashContent(text) != e.hash) return nullptr;
  }
  for (const Dependency& d : e.dependencies)
    if (!sameAsStamped(d.path, d.stamp, e.cachedAt)) return nullptr;
  return &e;
}

bool ResultCache::sameAsStamped(const std::string& path, const Stamp& stamp, int64_t cachedAt) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;
  if (stamp.size != st.st_size || stamp.mtimeNs != mtimeNs(st) || stamp.inode != static_cast<int64_t>(st.st_ino)) return false;
  if (mtimeNs(st) / 1000000000LL < cachedAt - 1) return true;
  std::string text;
  return readWhole(path, text) && hashContent(text) == stamp.hash;
}

bool ResultCache::lookup(const std::string& absPath, const std::string& selectionKey, std::vector<Finding>& out) {
  std::lock_guard<std::mutex> lock(mutex_);
  const Entry* e = unchanged(absPath);
  if (!e || e->selection != selectionKey) return false;
  out = e->findings;
  return true;
}

bool ResultCache::lookupStored(const std::string& absPath, Stored& out, bool withSummaries) {
  std::lock_guard<std::mutex> lock(mutex_);
  const Entry* e = unchanged(absPath);
  if (!e) return false;
  out.selection = e->selection;
  out.findings = e->findings;
  out.summarised = e->blobLength > 0 || !e->project.empty();
  out.project.clear();
  if (withSummaries && out.summarised) out.project = summariesOf(*e);
  return true;
}

void ResultCache::storeStored(const std::string& absPath, uint64_t contentHash, Stored s) {
  struct stat st {};
  if (::stat(absPath.c_str(), &st) != 0) return;
  Entry e;
  e.selection = std::move(s.selection);
  e.size = st.st_size;
  e.mtimeNs = mtimeNs(st);
  e.inode = static_cast<int64_t>(st.st_ino);
  e.cachedAt = static_cast<int64_t>(std::time(nullptr));
  e.hash = contentHash;
  e.findings = std::move(s.findings);
  for (Finding& f : e.findings) f.measured = MeasuredCost{};
  e.project = std::move(s.project);
  std::lock_guard<std::mutex> lock(mutex_);
  entries_[absPath] = std::move(e);
  dirty_ = true;
}

void ResultCache::store(const std::string& absPath, const std::string& selectionKey, const std::string& source,
                        const std::vector<Finding>& findings, const std::vector<std::string>& dependencies) {
  struct stat st {};
  if (::stat(absPath.c_str(), &st) != 0) return;
  Entry e;
  for (const std::string& path : dependencies) {
    struct stat ds {};
    std::string text;
    // A dependency that cannot be read now could not be checked later: keep nothing.
    if (::stat(path.c_str(), &ds) != 0 || !readWhole(path, text)) return;
    e.dependencies.push_back({path, Stamp{ds.st_size, mtimeNs(ds), static_cast<int64_t>(ds.st_ino), hashContent(text)}});
  }
  e.selection = selectionKey;
  e.size = st.st_size;
  e.mtimeNs = mtimeNs(st);
  e.inode = static_cast<int64_t>(st.st_ino);
  e.cachedAt = static_cast<int64_t>(std::time(nullptr));
  e.hash = hashContent(source);
  e.findings = findings;
  for (Finding& f : e.findings) f.measured = MeasuredCost{};
  std::lock_guard<std::mutex> lock(mutex_);
  entries_[absPath] = std::move(e);
  dirty_ = true;
}

void ResultCache::loadSummaries() {
  if (blobsLoaded_) return;
  blobsLoaded_ = true;
  if (blobFile_.empty() || !readWhole(blobFile_, blobs_) || blobs_.size() != blobSize_ ||
      blobs_.compare(0, blobHeader(blobToken_).size(), blobHeader(blobToken_)) != 0)
    blobs_.clear();  // missing or from another save: those modules are analysed again
}

std::string_view ResultCache::summariesOf(const Entry& e) {
  if (!e.project.empty() || e.blobLength == 0) return e.project;
  loadSummaries();
  if (e.blobOffset > blobs_.size() || e.blobLength > blobs_.size() - e.blobOffset) return {};
  return std::string_view(blobs_).substr(e.blobOffset, e.blobLength);
}

std::string ResultCache::projectState(const std::string& root) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = projects_.find(root);
  return it == projects_.end() ? std::string() : it->second;
}

void ResultCache::setProjectState(const std::string& root, std::string state) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto [it, fresh] = projects_.try_emplace(root);
  if (!fresh && it->second == state) return;
  it->second = std::move(state);
  dirty_ = true;
}

bool ResultCache::lookupScan(const std::string& absPath, std::string& out) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = scans_.find(absPath);
  if (it == scans_.end() || !sameAsStamped(absPath, it->second.stamp, it->second.cachedAt)) return false;
  out = it->second.imports;
  return true;
}

void ResultCache::storeScan(const std::string& absPath, const std::string& text, std::string imports) {
  struct stat st {};
  if (::stat(absPath.c_str(), &st) != 0) return;
  Scan scan{Stamp{st.st_size, mtimeNs(st), static_cast<int64_t>(st.st_ino), hashContent(text)},
            static_cast<int64_t>(std::time(nullptr)), std::move(imports)};
  std::lock_guard<std::mutex> lock(mutex_);
  scans_[absPath] = std::move(scan);
  dirty_ = true;
}

std::string ResultCache::save() {
  if (!dirty_) return {};
  loadSummaries();  // the entries kept from the last save carry theirs over
  uint64_t token = static_cast<uint64_t>(std::time(nullptr)) * 1000003ULL ^ static_cast<uint64_t>(::getpid()) ^ reinterpret_cast<uintptr_t>(&dirty_);
  std::string blobs = blobHeader(token);
  std::string blobName = std::string(OOMLINT_VERSION) + "." + std::to_string(token) + ".summaries";
  std::vector<std::string_view> selections;
  std::unordered_map<std::string_view, size_t> selectionIndex;
  std::string lines;  // the entries, one per line
  for (const auto& [path, e] : entries_) {
    auto [at, fresh] = selectionIndex.try_emplace(e.selection, selections.size());
    if (fresh) selections.push_back(e.selection);
    std::string_view summaries = summariesOf(e);
    size_t blobOffset = summaries.empty() ? 0 : blobs.size();
    blobs += summaries;
    std::string extra;
    if (!e.findings.empty() || !e.dependencies.empty()) {
      json doc = {{"findings", findingsJson(e.findings)}};
      if (!e.dependencies.empty()) {
        json deps = json::array();
        for (const Dependency& d : e.dependencies)
          deps.push_back(json::array({d.path, d.stamp.size, d.stamp.mtimeNs, d.stamp.inode, d.stamp.hash}));
        doc["deps"] = std::move(deps);
      }
      extra = doc.dump(-1, ' ', false, json::error_handler_t::replace);
    }
    lines += '\n';
    appendString(lines, path);
    lines += " " + std::to_string(at->second);
    for (int64_t v : {e.size, e.mtimeNs, e.inode, e.cachedAt}) lines += " " + std::to_string(v);
    lines += " " + std::to_string(e.hash) + " " + std::to_string(blobOffset) + " " + std::to_string(summaries.size()) + " ";
    appendString(lines, extra);
  }
  std::string index(kIndexMagic);
  appendString(index, cacheVersion());
  index += "\nblobs ";
  appendString(index, blobName);
  index += " " + std::to_string(blobs.size()) + " " + std::to_string(token) + "\nselections " + std::to_string(selections.size()) + "\n";
  for (std::string_view sel : selections) {
    appendString(index, sel);
    index += '\n';
  }
  index += "projects " + std::to_string(projects_.size());
  for (const auto& [key, state] : projects_) {
    index += '\n';
    appendString(index, key);
    index += ' ';
    appendString(index, state);
  }
  index += "\nfiles " + std::to_string(entries_.size()) + lines;
  index += "\nscans " + std::to_string(scans_.size());
  for (const auto& [path, scan] : scans_) {
    index += '\n';
    appendString(index, path);
    for (int64_t v : {scan.stamp.size, scan.stamp.mtimeNs, scan.stamp.inode, scan.cachedAt}) index += " " + std::to_string(v);
    index += " " + std::to_string(scan.stamp.hash) + " ";
    appendString(index, scan.imports);
  }
  index += "\n";
  if (::mkdir(dir_.c_str(), 0755) != 0 && errno != EEXIST) return "cannot create " + dir_ + ": " + std::strerror(errno);
  // A marker that keeps the cache out of version control, as ruff does.
  std::string gitignore = dir_ + "/.gitignore";
  if (::access(gitignore.c_str(), F_OK) != 0) std::ofstream(gitignore) << "*\n";
  std::string blobPath = dir_ + "/" + blobName;
  if (std::string error = writeFile(blobPath, blobs); !error.empty()) return error;
  std::string tmp = file_ + ".tmp." + std::to_string(::getpid());
  if (std::string error = writeFile(tmp, index); !error.empty()) {
    ::unlink(blobPath.c_str());
    return error;
  }
  if (::rename(tmp.c_str(), file_.c_str()) != 0) {
    ::unlink(tmp.c_str());
    ::unlink(blobPath.c_str());
    return "cannot replace " + file_;
  }
  removeOtherSummaries(dir_, blobName);
  ::unlink((dir_ + "/" + std::string(OOMLINT_VERSION) + ".json").c_str());  // the JSON index builds before this one wrote
  return {};
}

}  // namespace oomlint
