#include "trace/render.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include <nlohmann/json.hpp>

#include "util/bytes.h"

namespace oomlint::trace {
namespace {

using json = nlohmann::json;

std::string place(const Trace& t, int32_t frame) {
  if (frame < 0) return "(no frame in the program's own files)";
  const Frame& f = t.frames[frame];
  return t.files[f.file].path + ":" + std::to_string(f.line);
}


std::string findingPlace(const StaticFinding& f) { return f.code + " " + f.file + ":" + std::to_string(f.line); }

std::string estimateText(const StaticFinding& f) {
  if (!f.estimated) return "no static estimate";
  if (f.estimateMeasure == "growth") return "estimated " + perStep(f.estimateBytes);
  return "estimated " + humanBytes(f.estimateBytes) + " " + f.estimateMeasure;
}

/// "in step 7", or "after the last step" for what follows the last mark.
std::string stepName(const Analysis& a, int64_t step) {
  if (step > static_cast<int64_t>(a.steps)) return a.steps ? "after the last step" : "before any step was marked";
  return "in step " + std::to_string(step);
}

const char* matchName(Match m) { return m == Match::Evidence ? "evidence" : m == Match::SameLoop ? "same-loop" : "none"; }

}  // namespace

std::string perStep(double bytes) {
  std::string out(bytes < 0 ? "" : "+");
  return out.append(humanBytes(bytes, 2)).append("/step");
}

std::string renderText(const ReportInput& in) {
  const Trace& t = in.trace;
  const Analysis& a = in.analysis;
  std::ostringstream o;
  std::string program;
  for (const std::string& s : t.run.argv) program += (program.empty() ? "" : " ") + s;
  o << "oomlint trace: " << (program.empty() ? "(unnamed run)" : program) << "\n";
  o << "  " << a.steps << " steps on " << (t.run.deviceName.empty() ? "a CUDA device" : t.run.deviceName);
  if (!t.run.torch.empty()) o << (t.run.frames == "c++" ? ", LibTorch " : ", PyTorch ") << t.run.torch;
  o << ", ended: " << (t.run.ended.empty() ? "unknown" : t.run.ended) << "\n";
  for (const std::string& n : a.notes) o << "  note: " << n << "\n";
  if (!t.steps.empty())
    o << "  at step ends: allocated " << humanBytes(static_cast<double>(t.steps.front().allocated)) << " -> "
      << humanBytes(static_cast<double>(t.steps.back().allocated)) << ", reserved "
      << humanBytes(static_cast<double>(t.steps.front().reserved)) << " -> "
      << humanBytes(static_cast<double>(t.steps.back().reserved)) << "\n";
  if (a.slopeKnown)
    o << "  growth: " << perStep(a.slopeAllocated) << " allocated, " << perStep(a.slopeReserved)
      << " reserved (least squares over steps 2-" << a.steps << ")\n";

  o << "\nGrowing lines";
  if (a.window > 0) o << " (blocks from steps " << (a.steps - a.window) << "-" << (a.steps - 1) << " still live after step " << a.steps << ")";
  o << ":\n";
  if (a.growth.empty()) o << "  none\n";
  size_t unexplained = 0;
  for (size_t i = 0; i < a.growth.size(); ++i) {
    const LineGroup& g = a.growth[i];
    o << "  " << place(t, g.frame) << "  " << perStep(g.perStep) << "  (" << g.blocks << " blocks from " << g.steps
      << " steps)\n";
    for (uint32_t h : g.hooks)
      o << "    kept by hook `" << t.hooks[h].name << "` (" << t.files[t.hooks[h].file].path << ":" << t.hooks[h].firstLine
        << "-" << t.hooks[h].lastLine << ")\n";
    const Explanation& e = i < in.join.growth.size() ? in.join.growth[i] : Explanation{};
    if (e.finding >= 0) {
      const StaticFinding& f = in.findings[e.finding];
      o << "    " << findingPlace(f) << ": measured " << perStep(g.perStep) << " (" << estimateText(f) << ")\n"
        << "      " << f.message << "\n";
      for (int32_t other : e.also) o << "    also " << findingPlace(in.findings[other]) << "\n";
    } else {
      ++unexplained;
      o << "    unexplained: no finding covers this line" << (in.checkNote.empty() ? "" : " (" + in.checkNote + ")") << "\n";
    }
  }
  if (!a.keptOnce.empty()) {
    o << "  kept once, not growing:";
    size_t shown = 0;
    for (const LineGroup& g : a.keptOnce) {
      if (shown++ == 3) {
        o << " ...";
        break;
      }
      o << " " << place(t, g.frame) << " (" << humanBytes(static_cast<double>(g.bytes)) << ")";
    }
    o << "\n";
  }

  if (a.peakAllocated > 0) {
    int64_t base = t.run.baselineAllocated;
    int64_t total = a.peakAllocated + base;
    o << "\nPeak: " << humanBytes(static_cast<double>(total)) << " allocated " << stepName(a, a.peakStep) << ", reserved "
      << humanBytes(static_cast<double>(a.peakReserved)) << " (fragmentation "
      << humanBytes(static_cast<double>(std::max<int64_t>(0, a.peakReserved - total))) << ")\n";
    if (base > 0)
      o << "  of which " << humanBytes(static_cast<double>(base))
        << " are the CUDA libraries' workspaces, made before the program started\n";
    o << "  by kind:";
    for (size_t k = 0; k < kKinds; ++k)
      o << (k ? ", " : " ") << kindName(static_cast<Kind>(k)) << " " << humanBytes(static_cast<double>(a.peakKinds[k]));
    o << "\n  by line:\n";
    size_t shown = 0;
    for (size_t i = 0; i < a.peak.size() && shown < 8; ++i, ++shown) {
      const LineGroup& g = a.peak[i];
      size_t top = 0;
      for (size_t k = 1; k < kKinds; ++k)
        if (g.kinds[k] > g.kinds[top]) top = k;
      o << "    " << place(t, g.frame) << "  " << humanBytes(static_cast<double>(g.bytes)) << " ("
        << static_cast<int>(std::lround(100.0 * static_cast<double>(g.bytes) / static_cast<double>(total)))
        << "%), mostly " << kindName(static_cast<Kind>(top)) << "\n";
      const Explanation& e = i < in.join.peak.size() ? in.join.peak[i] : Explanation{};
      if (e.finding >= 0) {
        const StaticFinding& f = in.findings[e.finding];
        o << "      " << findingPlace(f) << ": " << f.message << "\n";
      }
    }
  }
  if (a.oom) {
    o << "\nOut of memory in step " << a.oomStep
      << (a.oomStep > static_cast<int64_t>(a.steps) ? ", which did not finish" : "");
    if (a.oomRequested > 0)
      o << ": asked for " << humanBytes(static_cast<double>(a.oomRequested)) << " with "
        << humanBytes(static_cast<double>(a.oomFree)) << " free on the device";
    o << "\n";
    if (!a.oomFile.empty()) o << "  at " << a.oomFile << ":" << a.oomLine << "\n";
  }
  if (!in.join.unconfirmed.empty()) {
    o << "\nNot confirmed on this run (the code ran; no block it explains outlived its step):\n";
    for (int32_t i : in.join.unconfirmed) o << "  " << findingPlace(in.findings[i]) << ": " << in.findings[i].message << "\n";
  }
  o << "\n" << a.growth.size() << " growing line" << (a.growth.size() == 1 ? "" : "s") << ", " << unexplained
    << " unexplained";
  if (a.slopeKnown) o << "; " << perStep(a.slopeAllocated) << " allocated";
  o << ".\n";
  return o.str();
}

std::string renderJson(const ReportInput& in) {
  const Trace& t = in.trace;
  const Analysis& a = in.analysis;
  auto placeJson = [&](int32_t frame) -> json {
    if (frame < 0) return nullptr;
    const Frame& f = t.frames[frame];
    return {{"file", t.files[f.file].path}, {"line", f.line}, {"function", f.name}};
  };
  auto findingJson = [&](const Explanation& e) -> json {
    if (e.finding < 0) return nullptr;
    const StaticFinding& f = in.findings[e.finding];
    json j = {{"code", f.code}, {"file", f.file}, {"line", f.line}, {"message", f.message}, {"match", matchName(e.match)}};
    json also = json::array();
    for (int32_t other : e.also)
      also.push_back({{"code", in.findings[other].code}, {"file", in.findings[other].file}, {"line", in.findings[other].line}});
    j["also"] = also;
    j["estimated"] = f.estimated ? json{{"bytes", f.estimateBytes}, {"measure", f.estimateMeasure}} : json(nullptr);
    return j;
  };
  json out;
  out["run"] = {{"argv", t.run.argv}, {"device_name", t.run.deviceName}, {"torch", t.run.torch},
                {"ended", t.run.ended}, {"exit_code", t.run.exitCode}, {"history_dropped", t.run.historyDropped}};
  json steps = json::array();
  for (const Step& s : t.steps) steps.push_back({{"step", s.index}, {"allocated", s.allocated}, {"reserved", s.reserved}, {"peak_allocated", s.peakAllocated}});
  out["steps"] = steps;
  out["growth"] = {{"known", a.slopeKnown}, {"allocated_per_step", a.slopeAllocated}, {"reserved_per_step", a.slopeReserved},
                   {"by_line_per_step", a.growthPerStep}, {"window_steps", a.window}};
  json growing = json::array();
  for (size_t i = 0; i < a.growth.size(); ++i) {
    const LineGroup& g = a.growth[i];
    json hooks = json::array();
    for (uint32_t h : g.hooks)
      hooks.push_back({{"file", t.files[t.hooks[h].file].path}, {"first_line", t.hooks[h].firstLine},
                       {"last_line", t.hooks[h].lastLine}, {"function", t.hooks[h].name}});
    growing.push_back({{"place", placeJson(g.frame)}, {"hooks", hooks}, {"bytes_per_step", g.perStep}, {"bytes", g.bytes}, {"blocks", g.blocks},
                       {"steps", g.steps}, {"finding", findingJson(i < in.join.growth.size() ? in.join.growth[i] : Explanation{})}});
  }
  out["growing_lines"] = growing;
  json once = json::array();
  for (const LineGroup& g : a.keptOnce) once.push_back({{"place", placeJson(g.frame)}, {"bytes", g.bytes}, {"blocks", g.blocks}});
  out["kept_once"] = once;
  json kinds = json::object();
  for (size_t k = 0; k < kKinds; ++k) kinds[kindName(static_cast<Kind>(k))] = a.peakKinds[k];
  json peakLines = json::array();
  for (size_t i = 0; i < a.peak.size(); ++i) {
    const LineGroup& g = a.peak[i];
    json byKind = json::object();
    for (size_t k = 0; k < kKinds; ++k)
      if (g.kinds[k]) byKind[kindName(static_cast<Kind>(k))] = g.kinds[k];
    peakLines.push_back({{"place", placeJson(g.frame)}, {"bytes", g.bytes}, {"blocks", g.blocks}, {"kinds", byKind},
                         {"finding", findingJson(i < in.join.peak.size() ? in.join.peak[i] : Explanation{})}});
  }
  int64_t total = a.peakAllocated + t.run.baselineAllocated;
  out["peak"] = {{"allocated", total}, {"baseline_allocated", t.run.baselineAllocated}, {"reserved", a.peakReserved},
                 {"fragmentation", std::max<int64_t>(0, a.peakReserved - total)},
                 {"step", a.peakStep}, {"kinds", kinds}, {"lines", peakLines}};
  out["oom"] = a.oom ? json{{"step", a.oomStep}, {"requested", a.oomRequested}, {"device_free", a.oomFree},
                            {"place", a.oomFile.empty() ? json(nullptr) : json{{"file", a.oomFile}, {"line", a.oomLine}}},
                            {"message", t.oom.message}}
                     : json(nullptr);
  json unconfirmed = json::array();
  for (int32_t i : in.join.unconfirmed) unconfirmed.push_back(findingJson(Explanation{i, Match::None, {}}));
  out["unconfirmed"] = unconfirmed;
  out["notes"] = a.notes;
  if (!in.checkNote.empty()) out["check"] = in.checkNote;
  return out.dump(2) + "\n";
}

std::string renderSvg(const ReportInput& in) {
  const Trace& t = in.trace;
  const Analysis& a = in.analysis;
  const double W = 720, H = 360, left = 70, right = 20, top = 30, bottom = 50;
  double maxBytes = 1;
  for (const Step& s : t.steps) maxBytes = std::max({maxBytes, static_cast<double>(s.reserved), static_cast<double>(s.peakAllocated)});
  size_t n = std::max<size_t>(t.steps.size(), 2);
  auto x = [&](double step) { return left + (W - left - right) * (step - 1) / static_cast<double>(n - 1); };
  auto y = [&](double bytes) { return H - bottom - (H - top - bottom) * bytes / maxBytes; };
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H + 20 * (a.growth.size() + 1)
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o << "<text x=\"" << left << "\" y=\"18\">GPU memory at each step's end (" << t.steps.size() << " steps)</text>\n";
  o << "<line x1=\"" << left << "\" y1=\"" << H - bottom << "\" x2=\"" << W - right << "\" y2=\"" << H - bottom << "\" stroke=\"black\"/>\n";
  o << "<line x1=\"" << left << "\" y1=\"" << top << "\" x2=\"" << left << "\" y2=\"" << H - bottom << "\" stroke=\"black\"/>\n";
  for (int i = 0; i <= 4; ++i) {
    double b = maxBytes * i / 4;
    o << "<text x=\"" << left - 6 << "\" y=\"" << y(b) + 4 << "\" text-anchor=\"end\">" << humanBytes(b) << "</text>\n";
  }
  o << "<text x=\"" << (left + W - right) / 2 << "\" y=\"" << H - 15 << "\" text-anchor=\"middle\">step</text>\n";
  auto series = [&](auto value, const char* colour, const char* label, double labelY) {
    o << "<polyline fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"2\" points=\"";
    for (const Step& s : t.steps) o << x(static_cast<double>(s.index)) << "," << y(static_cast<double>(value(s))) << " ";
    o << "\"/>\n<text x=\"" << W - right - 150 << "\" y=\"" << labelY << "\" fill=\"" << colour << "\">" << label << "</text>\n";
  };
  series([](const Step& s) { return s.reserved; }, "#888888", "reserved", top + 12);
  series([](const Step& s) { return s.peakAllocated; }, "#d62728", "peak allocated in step", top + 26);
  series([](const Step& s) { return s.allocated; }, "#1f77b4", "allocated", top + 40);
  double ly = H + 10;
  o << "<text x=\"" << left << "\" y=\"" << ly << "\">growing lines:" << (a.growth.empty() ? " none" : "") << "</text>\n";
  for (size_t i = 0; i < a.growth.size(); ++i) {
    const LineGroup& g = a.growth[i];
    std::string label = g.frame < 0 ? std::string("(no frame in the program's own files)")
                                    : t.files[t.frames[g.frame].file].path + ":" + std::to_string(t.frames[g.frame].line);
    const Explanation& e = i < in.join.growth.size() ? in.join.growth[i] : Explanation{};
    std::string why = e.finding >= 0 ? in.findings[e.finding].code : std::string("unexplained");
    std::string text = label + "  " + perStep(g.perStep) + "  " + why;
    std::string escaped;
    for (char c : text) escaped += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : std::string(1, c);
    o << "<text x=\"" << left + 10 << "\" y=\"" << ly + 18 * (i + 1) << "\" fill=\"#d62728\">" << escaped << "</text>\n";
  }
  o << "</svg>\n";
  return o.str();
}

}  // namespace oomlint::trace
