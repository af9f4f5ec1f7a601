// oomlint-probe: runs the anti-pattern and the fix of each measurable rule with LibTorch and
// reports the memory each one costs. It runs only its own probes: no user code is executed.
#include <torch/torch.h>
#include <torch/version.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <ctime>
#include <fstream>
#include <iostream>

#include "meter.h"
#include "probe.h"
#include "report.h"

#ifdef OOMLINT_PROBE_CUDA
#include <cuda_runtime_api.h>
#endif

using namespace oomlint::probe;

namespace {

bool parseDtype(const std::string& s, torch::Dtype& out) {
  if (s == "f32" || s == "float32") out = torch::kFloat;
  else if (s == "bf16" || s == "bfloat16") out = torch::kBFloat16;
  else if (s == "f16" || s == "float16") out = torch::kHalf;
  else return false;
  return true;
}

std::string nowUtc() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  // Count CPU allocations from the very first tensor.
  auto host = makeCpuMeter();

  CLI::App app{"oomlint-probe: measure what each memory anti-pattern costs, next to its fix"};
  std::vector<std::string> selected;
  bool list = false;
  std::string deviceName = "auto", dtypeName = "f32", jsonPath, svgDir, workloadPath;
  Workload w;
  app.add_option("probes", selected, "Probe codes (OOM101 ..., SEED-...); default: all");
  app.add_flag("--list", list, "List the probes");
  bool whichDevice = false;
  app.add_flag("--which-device", whichDevice, "Print the device --device picks (cuda or cpu) and exit");
  app.add_option("--device", deviceName, "auto (CUDA when available), cpu or cuda");
  app.add_option("--dtype", dtypeName, "f32, bf16 or f16");
  app.add_option("--width", w.width);
  app.add_option("--depth", w.depth);
  app.add_option("--heads", w.heads);
  app.add_option("--batch", w.batch);
  app.add_option("--seq", w.seq);
  app.add_option("--vocab", w.vocab);
  app.add_option("--steps", w.steps);
  app.add_option("--accum", w.accum, "Micro-batches per optimizer step");
  app.add_option("--workload", workloadPath, "JSON file with any of the sizes above");
  app.add_option("--json", jsonPath, "Write the results as JSON to this file (`-` for stdout)");
  app.add_option("--svg-dir", svgDir, "Write one SVG chart per probe into this folder");
  CLI11_PARSE(app, argc, argv);

  if (list) {
    for (const ProbeDef& p : allProbes()) std::cout << p.code << "\t" << p.title << "\n";
    return 0;
  }
  if (!workloadPath.empty()) {
    std::ifstream in(workloadPath);
    if (!in) {
      std::cerr << "oomlint-probe: cannot read " << workloadPath << "\n";
      return 2;
    }
    nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      std::cerr << "oomlint-probe: " << workloadPath << " is not a JSON object\n";
      return 2;
    }
    for (auto [key, field] : {std::pair<const char*, int64_t*>{"width", &w.width}, {"depth", &w.depth}, {"heads", &w.heads},
                              {"batch", &w.batch}, {"seq", &w.seq}, {"vocab", &w.vocab}, {"steps", &w.steps}, {"accum", &w.accum}})
      if (j.contains(key) && j[key].is_number_integer()) *field = j[key].get<int64_t>();
    if (j.contains("dtype") && j["dtype"].is_string()) dtypeName = j["dtype"].get<std::string>();
    if (j.contains("rows") && j["rows"].is_number_integer()) w.rows = j["rows"].get<int64_t>();
    if (j.contains("shape") && j["shape"].is_array())
      for (const nlohmann::json& d : j["shape"])
        if (d.is_number_integer()) w.shape.push_back(d.get<int64_t>());
    if (j.contains("layers") && j["layers"].is_array()) {
      for (const nlohmann::json& l : j["layers"]) {
        if (!l.is_object() || !l.contains("kind") || !l["kind"].is_string()) {
          std::cerr << "oomlint-probe: " << workloadPath << ": each layer needs a \"kind\"\n";
          return 2;
        }
        LayerSpec s;
        s.kind = l["kind"].get<std::string>();
        s.in = l.value("in", int64_t{0});
        s.out = l.value("out", int64_t{0});
        s.bias = l.value("bias", true);
        s.p = l.value("p", 0.5);
        auto ints = [&](const char* key, std::vector<int64_t>& out) {
          if (l.contains(key) && l[key].is_array())
            for (const nlohmann::json& v : l[key])
              if (v.is_number_integer()) out.push_back(v.get<int64_t>());
        };
        ints("kernel", s.kernel);
        ints("stride", s.stride);
        ints("padding", s.padding);
        ints("dilation", s.dilation);
        ints("size", s.size);
        s.groups = l.value("groups", int64_t{1});
        s.same = l.value("same", false);
        s.ceil = l.value("ceil", false);
        s.start = l.value("start", int64_t{1});
        s.end = l.value("end", int64_t{-1});
        s.dim = l.value("dim", int64_t{0});
        s.index = l.value("index", int64_t{0});
        s.heads = l.value("heads", int64_t{0});
        s.ff = l.value("ff", int64_t{0});
        s.layers = l.value("layers", int64_t{1});
        s.activation = l.value("activation", std::string("relu"));
        s.batchFirst = l.value("batch_first", false);
        s.bidirectional = l.value("bidirectional", false);
        w.layers.push_back(s);
      }
      if (std::string bad = checkLayers(w.layers); !bad.empty()) {
        std::cerr << "oomlint-probe: " << workloadPath << ": " << bad << "\n";
        return 2;
      }
      if (w.rows <= 0) {
        std::cerr << "oomlint-probe: " << workloadPath << ": a layer list needs \"rows\", the input's rows\n";
        return 2;
      }
    }
  }
  if (!parseDtype(dtypeName, w.dtype)) {
    std::cerr << "oomlint-probe: unknown dtype " << dtypeName << "\n";
    return 2;
  }
  for (int64_t* v : {&w.width, &w.depth, &w.heads, &w.batch, &w.seq, &w.vocab, &w.steps, &w.accum})
    if (*v <= 0) {
      std::cerr << "oomlint-probe: sizes must be positive\n";
      return 2;
    }
  if (w.width % w.heads != 0) {
    std::cerr << "oomlint-probe: width must be a multiple of heads\n";
    return 2;
  }
  bool cuda = cudaBuilt() && torch::cuda::is_available();
  if (deviceName == "cuda" && !cuda) {
    std::cerr << "oomlint-probe: CUDA requested but " << (cudaBuilt() ? "no device is available" : "this build has no CUDA") << "\n";
    return 2;
  }
  if (deviceName == "cpu") cuda = false;
  if (whichDevice) {  // `check --verify` scales its CPU runs down before it starts them
    std::cout << (cuda ? "cuda" : "cpu") << "\n";
    return 0;
  }
  std::unique_ptr<Meter> deviceMeter = cuda ? makeCudaMeter(0) : makeCpuMeter();
  w.device = cuda ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
  if (!cuda && w.dtype != torch::kFloat) {
    std::cerr << "oomlint-probe: note: " << dtypeName << " on CPU is slow; use f32 for CPU runs\n";
  }
  torch::manual_seed(0);

  // Warm up: the first GEMM allocates the cuBLAS workspace, which must not count against a probe.
  {
    auto a = torch::randn({256, 256}, torch::TensorOptions().device(w.device).dtype(w.dtype)).requires_grad_(true);
    torch::matmul(a, a).to(torch::kFloat).sum().backward();
    deviceMeter->synchronize();
  }

  ProbeContext ctx{w, *deviceMeter, *host, nullptr};
  std::vector<ProbeResult> results;
  for (const ProbeDef& p : allProbes()) {
    if (!selected.empty() && std::find(selected.begin(), selected.end(), p.code) == selected.end()) continue;
    ctx.reset = nullptr;
    try {
      results.push_back(p.run(ctx));
    } catch (const std::exception& e) {
      ProbeResult r;
      r.code = p.code;
      r.title = p.title;
      r.available = false;
      std::string what = e.what();
      r.note = "failed: " + what.substr(0, what.find('\n'));
      results.push_back(r);
    }
    ctx.reset = nullptr;
    deviceMeter->synchronize();
    deviceMeter->releaseCache();
  }
  for (const std::string& s : selected)
    if (std::none_of(allProbes().begin(), allProbes().end(), [&](const ProbeDef& p) { return s == p.code; })) {
      std::cerr << "oomlint-probe: unknown probe " << s << " (see --list)\n";
      return 2;
    }

  Provenance prov;
  prov.device = deviceMeter->name();
  prov.libtorch = TORCH_VERSION;
  prov.date = nowUtc();
  for (int i = 0; i < argc; ++i) prov.command += (i ? " " : "") + std::string(argv[i]);
#ifdef OOMLINT_PROBE_CUDA
  int driver = 0;
  if (cuda && cudaDriverGetVersion(&driver) == cudaSuccess)
    prov.driver = "CUDA " + std::to_string(driver / 1000) + "." + std::to_string((driver % 1000) / 10);
#endif
  if (jsonPath != "-") writeTable(std::cout, results, prov);
  if (!jsonPath.empty()) {
    nlohmann::json j = toJson(results, prov, w);
    if (jsonPath == "-") {
      std::cout << j.dump(2) << "\n";
    } else {
      std::ofstream out(jsonPath);
      out << j.dump(2) << "\n";
    }
  }
  if (!svgDir.empty()) {
    for (const ProbeResult& r : results) {
      if (r.anti.allocated.empty()) continue;
      std::ofstream out(svgDir + "/" + r.code + ".svg");
      out << toSvg(r);
    }
  }
  return 0;
}
