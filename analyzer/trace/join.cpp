// A finding explains a group of blocks when its evidence names a line of the program's own files
// in the blocks' stacks; a growth finding also explains growth allocated inside the loop it
// reports on (the `+=` line is not where the kept tensors were made).
#include "trace/join.h"

#include <algorithm>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

namespace oomlint::trace {
namespace {

using Place = std::pair<std::string, int64_t>;

/// The program's own (file, line) places in a group's stacks, and every line of the hooks that
/// were called with its blocks.
std::set<Place> userPlaces(const Trace& t, const LineGroup& g) {
  std::set<Place> out;
  for (uint32_t h : g.hooks) {
    const Hook& hook = t.hooks[h];
    for (uint32_t line = hook.firstLine; line <= hook.lastLine && line - hook.firstLine < 1000; ++line)
      out.insert({t.files[hook.file].path, line});
  }
  for (uint32_t s : g.stacks) {
    auto [begin, end] = t.stack(s);
    for (const uint32_t* f = begin; f != end; ++f) {
      const Frame& fr = t.frames[*f];
      if (t.files[fr.file].user) out.insert({t.files[fr.file].path, fr.line});
    }
  }
  return out;
}

bool evidenceCovers(const StaticFinding& f, const std::set<Place>& places) {
  if (places.count({f.file, f.line})) return true;
  for (const Place& r : f.related)
    if (places.count(r)) return true;
  return false;
}

/// The innermost loop holding the finding's line, as (first, last) line; (0, 0) when none.
std::pair<uint32_t, uint32_t> loopOf(const StaticFinding& f, const LoopLines& loops,
                                     std::map<std::string, std::vector<std::pair<uint32_t, uint32_t>>>& cache) {
  auto it = cache.find(f.file);
  if (it == cache.end()) it = cache.emplace(f.file, loops ? loops(f.file) : std::vector<std::pair<uint32_t, uint32_t>>{}).first;
  std::pair<uint32_t, uint32_t> best{0, 0};
  for (const auto& [first, last] : it->second) {
    if (f.line < first || f.line > last) continue;
    if (best.first == 0 || last - first < best.second - best.first) best = {first, last};
  }
  return best;
}

bool inLoop(const StaticFinding& f, std::pair<uint32_t, uint32_t> loop, const std::set<Place>& places) {
  if (loop.first == 0) return false;
  for (const auto& [file, line] : places)
    if (file == f.file && line >= loop.first && line <= loop.second) return true;
  return false;
}

}  // namespace

bool growthRule(const std::string& code) {
  return code == "OOM101" || code == "OOM102" || code == "OOM103" || code == "OOM104" || code == "OOM107" ||
         code == "OOM108";
}

std::vector<StaticFinding> parseFindings(const std::string& text) {
  using json = nlohmann::json;
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_array()) throw TraceError("oomlint check gave no JSON list of findings");
  std::vector<StaticFinding> out;
  for (const json& d : doc) {
    if (!d.is_object()) continue;
    StaticFinding f;
    f.code = d.value("code", "");
    f.message = d.value("message", "");
    f.file = d.value("filename", "");
    if (auto loc = d.find("location"); loc != d.end() && loc->is_object()) f.line = loc->value("row", 0);
    if (auto rel = d.find("related"); rel != d.end() && rel->is_array())
      for (const json& r : *rel)
        if (r.is_object() && r.contains("location") && r["location"].is_object())
          f.related.push_back({r.value("filename", f.file), r["location"].value("row", 0)});
    if (auto est = d.find("estimated"); est != d.end() && est->is_object()) {
      f.estimated = true;
      f.estimateBytes = est->value("bytes", 0.0);
      f.estimateMeasure = est->value("measure", "");
    }
    out.push_back(std::move(f));
  }
  return out;
}

Join join(const Trace& t, const Analysis& a, const std::vector<StaticFinding>& findings, const LoopLines& loops) {
  Join out;
  std::map<std::string, std::vector<std::pair<uint32_t, uint32_t>>> loopCache;
  std::vector<std::pair<uint32_t, uint32_t>> loopOfFinding;
  for (const StaticFinding& f : findings) loopOfFinding.push_back(growthRule(f.code) ? loopOf(f, loops, loopCache) : std::make_pair(0u, 0u));
  std::vector<bool> explainsGrowth(findings.size());

  auto explain = [&](const LineGroup& g, bool growth) {
    std::set<Place> places = userPlaces(t, g);
    Explanation best;
    int bestScore = -1;
    std::vector<int32_t> matches;  // growth findings that match
    for (size_t i = 0; i < findings.size(); ++i) {
      const StaticFinding& f = findings[i];
      Match m = Match::None;
      if (evidenceCovers(f, places))
        m = Match::Evidence;
      else if (growth && inLoop(f, loopOfFinding[i], places))
        m = Match::SameLoop;
      if (m == Match::None) continue;
      // A growth line wants a growth finding; among equals, evidence beats the loop.
      int score = (growth && growthRule(f.code) ? 2 : 0) + (m == Match::Evidence ? 1 : 0);
      if (score > bestScore) best.finding = static_cast<int32_t>(i), best.match = m, bestScore = score;
      if (growth && growthRule(f.code)) matches.push_back(static_cast<int32_t>(i));
    }
    for (int32_t i : matches)
      if (i != best.finding) best.also.push_back(i);
    return best;
  };

  for (const LineGroup& g : a.growth) {
    Explanation e = explain(g, true);
    if (e.finding >= 0 && growthRule(findings[e.finding].code)) {
      explainsGrowth[e.finding] = true;
      for (int32_t i : e.also) explainsGrowth[i] = true;
    } else {
      e = {};  // a peak finding does not explain growth
    }
    out.growth.push_back(e);
  }
  for (const LineGroup& g : a.peak) {
    bool dominant = a.peakAllocated > 0 && g.bytes * 10 >= a.peakAllocated;
    out.peak.push_back(dominant ? explain(g, false) : Explanation{});
  }
  // Whether each growth finding's code ran: its evidence or its loop is in some stack of the run.
  std::set<Place> all;
  for (uint32_t s = 0; s < t.stackCount(); ++s) {
    auto [begin, end] = t.stack(s);
    for (const uint32_t* f = begin; f != end; ++f)
      if (t.files[t.frames[*f].file].user) all.insert({t.files[t.frames[*f].file].path, t.frames[*f].line});
  }
  auto ran = [&](size_t i) { return evidenceCovers(findings[i], all) || inLoop(findings[i], loopOfFinding[i], all); };
  for (size_t i = 0; i < findings.size(); ++i)
    if (growthRule(findings[i].code) && !explainsGrowth[i] && ran(i)) out.unconfirmed.push_back(static_cast<int32_t>(i));
  return out;
}

}  // namespace oomlint::trace
