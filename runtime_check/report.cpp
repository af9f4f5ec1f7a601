#include "report.h"

#include "util/bytes.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace oomlint::probe {

std::string humanBytes(double b) { return oomlint::humanBytes(b); }

void writeTable(std::ostream& os, const std::vector<ProbeResult>& results, const Provenance& p) {
  os << "device: " << p.device << "   LibTorch " << p.libtorch;
  if (!p.driver.empty()) os << "   driver " << p.driver;
  os << "\n\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-28s %-40s %12s %12s %14s %10s\n", "probe", "variant", "peak", "retained", "growth/step",
                "ms/step");
  os << line;
  for (const ProbeResult& r : results) {
    for (const VariantResult* v : {&r.anti, &r.fix}) {
      if (v->name.empty()) continue;
      std::snprintf(line, sizeof line, "%-28s %-40s %12s %12s %14s %10.2f\n", (v == &r.anti ? r.code : std::string()).c_str(),
                    v->name.substr(0, 40).c_str(), humanBytes(static_cast<double>(v->peak)).c_str(),
                    humanBytes(static_cast<double>(v->retained)).c_str(), humanBytes(v->slope).c_str(), v->msPerStep);
      os << line;
    }
    if (!r.anti.name.empty() && !r.fix.name.empty())
      os << "    delta (anti - fix): peak " << humanBytes(static_cast<double>(r.anti.peak - r.fix.peak)) << ", retained "
         << humanBytes(static_cast<double>(r.anti.retained - r.fix.retained)) << ", growth "
         << humanBytes(r.anti.slope - r.fix.slope) << "/step\n";
    if (!r.available || !r.note.empty()) os << "    " << (r.available ? "" : "unavailable: ") << r.note << "\n";
    if (!r.verdict.empty()) os << "    verdict: " << r.title << ": " << r.verdict << "\n";
  }
}

namespace {
nlohmann::json variantJson(const VariantResult& v) {
  return {{"name", v.name},        {"peak_bytes", v.peak},     {"retained_bytes", v.retained}, {"growth_bytes_per_step", v.slope},
          {"ms_per_step", v.msPerStep}, {"host_peak_bytes", v.hostPeak}, {"segments", v.segments}, {"reserved_bytes_end", v.reserved},
          {"driver_used_bytes_end", v.driverUsed}, {"allocated_per_step", v.allocated}};
}
}  // namespace

nlohmann::json toJson(const std::vector<ProbeResult>& results, const Provenance& p, const Workload& w) {
  nlohmann::json probes = nlohmann::json::array();
  for (const ProbeResult& r : results) {
    nlohmann::json j = {{"code", r.code}, {"title", r.title}, {"available", r.available}, {"note", r.note}};
    if (!r.anti.name.empty()) j["anti"] = variantJson(r.anti);
    if (!r.fix.name.empty()) j["fix"] = variantJson(r.fix);
    if (!r.anti.name.empty() && !r.fix.name.empty())
      j["delta"] = {{"peak_bytes", r.anti.peak - r.fix.peak},
                    {"retained_bytes", r.anti.retained - r.fix.retained},
                    {"growth_bytes_per_step", r.anti.slope - r.fix.slope}};
    if (!r.verdict.empty()) j["verdict"] = r.verdict;
    probes.push_back(j);
  }
  nlohmann::json layers = nlohmann::json::array();
  for (const LayerSpec& l : w.layers) layers.push_back({{"kind", l.kind}, {"in", l.in}, {"out", l.out}});
  nlohmann::json shape = w.shape;
  return {{"provenance", {{"device", p.device}, {"libtorch", p.libtorch}, {"driver", p.driver}, {"date", p.date}, {"command", p.command}}},
          {"workload",
           {{"width", w.width}, {"depth", w.depth}, {"heads", w.heads}, {"batch", w.batch}, {"seq", w.seq}, {"vocab", w.vocab},
            {"steps", w.steps}, {"accum", w.accum}, {"dtype", std::string(c10::toString(w.dtype))}, {"device", w.device.str()},
            {"layers", layers}, {"rows", w.rows}, {"shape", shape}}},
          {"probes", probes}};
}

std::string toSvg(const ProbeResult& r) {
  const int W = 640, H = 360, L = 80, R = 20, T = 40, B = 50;
  double maxY = 1;
  size_t n = 1;
  for (const VariantResult* v : {&r.anti, &r.fix}) {
    for (int64_t a : v->allocated) maxY = std::max(maxY, static_cast<double>(a));
    n = std::max(n, v->allocated.size());
  }
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"" << L << "\" y=\"22\" font-size=\"14\" font-weight=\"bold\">" << r.code << " " << r.title << "</text>\n"
    << "<line x1=\"" << L << "\" y1=\"" << H - B << "\" x2=\"" << W - R << "\" y2=\"" << H - B << "\" stroke=\"black\"/>\n"
    << "<line x1=\"" << L << "\" y1=\"" << T << "\" x2=\"" << L << "\" y2=\"" << H - B << "\" stroke=\"black\"/>\n"
    << "<text x=\"" << (L + W - R) / 2 << "\" y=\"" << H - 15 << "\" text-anchor=\"middle\">step</text>\n";
  for (int i = 0; i <= 4; ++i) {
    double v = maxY * i / 4;
    int y = H - B - static_cast<int>((H - B - T) * i / 4.0);
    s << "<text x=\"" << L - 6 << "\" y=\"" << y + 4 << "\" text-anchor=\"end\">" << humanBytes(v) << "</text>\n"
      << "<line x1=\"" << L << "\" y1=\"" << y << "\" x2=\"" << W - R << "\" y2=\"" << y << "\" stroke=\"#ddd\"/>\n";
  }
  const char* colors[] = {"#d62728", "#2ca02c"};
  int idx = 0;
  for (const VariantResult* v : {&r.anti, &r.fix}) {
    if (v->allocated.empty()) {
      ++idx;
      continue;
    }
    s << "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"" << colors[idx] << "\" points=\"";
    for (size_t i = 0; i < v->allocated.size(); ++i) {
      double x = L + (W - L - R) * (n > 1 ? static_cast<double>(i) / static_cast<double>(n - 1) : 0.5);
      double y = H - B - (H - B - T) * static_cast<double>(v->allocated[i]) / maxY;
      s << x << "," << y << " ";
    }
    s << "\"/>\n<text x=\"" << L + 10 << "\" y=\"" << T + 16 + 16 * idx << "\" fill=\"" << colors[idx] << "\">"
      << (idx == 0 ? "anti-pattern: " : "fix: ") << v->name << "</text>\n";
    ++idx;
  }
  s << "</svg>\n";
  return s.str();
}

}  // namespace oomlint::probe
