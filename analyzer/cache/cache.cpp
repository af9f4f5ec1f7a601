#include "cache/cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "version.h"

namespace oomlint {
namespace {

using nlohmann::json;

int64_t mtimeNs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec;
}

/// Codes are stored as text; findings point at the rule's static code string.
std::string_view internCode(const std::string& code) {
  if (code == kParseErrorCode) return kParseErrorCode;
  if (code == kIoErrorCode) return kIoErrorCode;
  const Rule* r = findRule(code);
  return r ? r->info().code : std::string_view{};
}

/// The release and the layout of an entry: a cache written by another build is discarded.
const std::string kCacheVersion = std::string(OOMLINT_VERSION) + "+cache3";

json spanJson(const Span& s) { return json::array({s.begin, s.end, s.line, s.col, s.endLine, s.endCol}); }
Span spanFrom(const json& j) {
  Span s;
  s.begin = j.at(0);
  s.end = j.at(1);
  s.line = j.at(2);
  s.col = j.at(3);
  s.endLine = j.at(4);
  s.endCol = j.at(5);
  return s;
}

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
  file_ = dir_ + "/" + std::string(OOMLINT_VERSION) + ".json";
  std::ifstream in(file_, std::ios::binary);
  if (!in) return;
  std::stringstream ss;
  ss << in.rdbuf();
  json doc = json::parse(ss.str(), nullptr, false);
  try {
    if (doc.is_discarded() || !doc.is_object()) throw std::runtime_error("format");
    if (doc.value("version", "") != kCacheVersion) {
      dirty_ = true;  // written by another build of oomlint: start afresh, silently
      return;
    }
    for (const auto& [path, e] : doc.at("files").items()) {
      Entry entry;
      entry.selection = e.at("selection");
      entry.size = e.at("size");
      entry.mtimeNs = e.at("mtime_ns");
      entry.inode = e.at("inode");
      entry.cachedAt = e.at("cached_at");
      entry.hash = e.at("hash");
      if (e.contains("project")) entry.project = e["project"].get<std::string>();
      for (const json& f : e.at("findings")) {
        Finding fd;
        fd.code = internCode(f.at("code"));
        if (fd.code.empty()) throw std::runtime_error("unknown code");
        fd.message = f.at("message");
        fd.span = spanFrom(f.at("span"));
        fd.severity = static_cast<Severity>(f.at("severity").get<int>());
        if (f.contains("fix")) {
          const json& x = f["fix"];
          fd.hasFix = true;
          fd.fix.applicability = static_cast<Applicability>(x.at("applicability").get<int>());
          fd.fix.message = x.at("message");
          for (const json& ed : x.at("edits")) fd.fix.edits.push_back(Edit{ed.at(0), ed.at(1), ed.at(2)});
        }
        if (f.contains("related"))
          for (const json& rel : f["related"]) fd.related.push_back({spanFrom(rel.at(0)), rel.at(1)});
        entry.findings.push_back(std::move(fd));
      }
      entries_[path] = std::move(entry);
    }
    if (doc.contains("projects"))
      for (const auto& [root, state] : doc["projects"].items()) projects_[root] = state.get<std::string>();
  } catch (const std::exception&) {
    entries_.clear();
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
    std::ifstream in(absPath, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    if (hashContent(ss.str()) != e.hash) return nullptr;
  }
  return &e;
}

bool ResultCache::lookup(const std::string& absPath, const std::string& selectionKey, std::vector<Finding>& out) {
  std::lock_guard<std::mutex> lock(mutex_);
  const Entry* e = unchanged(absPath);
  if (!e || e->selection != selectionKey) return false;
  out = e->findings;
  return true;
}

bool ResultCache::lookupStored(const std::string& absPath, Stored& out) {
  std::lock_guard<std::mutex> lock(mutex_);
  const Entry* e = unchanged(absPath);
  if (!e) return false;
  out.selection = e->selection;
  out.findings = e->findings;
  out.project = e->project;
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
                        const std::vector<Finding>& findings) {
  struct stat st {};
  if (::stat(absPath.c_str(), &st) != 0) return;
  Entry e;
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

std::string ResultCache::save() {
  if (!dirty_) return {};
  json files = json::object();
  for (const auto& [path, e] : entries_) {
    json fs = json::array();
    for (const Finding& f : e.findings) {
      json j = {{"code", std::string(f.code)}, {"message", f.message}, {"span", spanJson(f.span)}, {"severity", static_cast<int>(f.severity)}};
      if (f.hasFix) {
        json edits = json::array();
        for (const Edit& ed : f.fix.edits) edits.push_back(json::array({ed.begin, ed.end, ed.content}));
        j["fix"] = {{"applicability", static_cast<int>(f.fix.applicability)}, {"message", f.fix.message}, {"edits", edits}};
      }
      if (!f.related.empty()) {
        json rel = json::array();
        for (const Related& r : f.related) rel.push_back(json::array({spanJson(r.span), r.message}));
        j["related"] = std::move(rel);
      }
      fs.push_back(std::move(j));
    }
    files[path] = {{"selection", e.selection}, {"size", e.size}, {"mtime_ns", e.mtimeNs}, {"inode", e.inode},
                   {"cached_at", e.cachedAt}, {"hash", e.hash}, {"findings", fs}};
    if (!e.project.empty()) files[path]["project"] = e.project;
  }
  json doc = {{"version", kCacheVersion}, {"files", files}, {"projects", projects_}};
  if (::mkdir(dir_.c_str(), 0755) != 0 && errno != EEXIST) return "cannot create " + dir_ + ": " + std::strerror(errno);
  // A marker that keeps the cache out of version control, as ruff does.
  std::string gitignore = dir_ + "/.gitignore";
  if (::access(gitignore.c_str(), F_OK) != 0) std::ofstream(gitignore) << "*\n";
  std::string tmp = file_ + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return "cannot write " + tmp;
    std::string text = doc.dump(-1, ' ', false, json::error_handler_t::replace);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out) {
      ::unlink(tmp.c_str());
      return "cannot write " + tmp;
    }
  }
  if (::rename(tmp.c_str(), file_.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return "cannot replace " + file_;
  }
  return {};
}

}  // namespace oomlint
