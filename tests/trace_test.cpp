// `oomlint trace`: the reader on damaged traces, the analysis and the join on traces recorded on an
// H100 (fixtures/trace/PROVENANCE.gpu.txt), and the command line, bootstrap included.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/trace.h"
#include "test_paths.h"
#include "test_util.h"
#include "trace/analysis.h"
#include "trace/join.h"
#include "trace/render.h"
#include "trace/trace.h"

namespace fs = std::filesystem;
using testutil::slurp;
using testutil::spit;
using namespace oomlint::trace;

namespace {

std::string fixture(const std::string& name) { return std::string(OOMLINT_FIXTURES) + "/trace/" + name; }

struct Result {
  int rc = -1;
  std::string out, err;
};

Result oomlint(const std::string& args) {
  fs::path base = fs::temp_directory_path() / ("oomlint_trace_" + std::to_string(::getpid()));
  std::string out = base.string() + ".out", err = base.string() + ".err";
  std::string cmd = "cd '" + std::string(OOMLINT_SOURCE) + "' && '" + OOMLINT_BINARY + "' " + args + " >'" + out + "' 2>'" + err + "'";
  int status = std::system(cmd.c_str());
  Result r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
  fs::remove(out);
  fs::remove(err);
  return r;
}

std::string place(const Trace& t, int32_t frame) {
  if (frame < 0) return "";
  return t.files[t.frames[frame].file].path + ":" + std::to_string(t.frames[frame].line);
}

/// What each recorded leak program must show: the allocating line, its growth by construction
/// (the fixture's docstring says why), and the finding that explains it ("" when none does yet).
struct Leak {
  const char* name;
  const char* line;
  double bytesPerStep;
  const char* code;
};

const Leak kLeaks[] = {
    {"oom101_aux_total", "fixtures/trace/oom101_aux_total.py:20", 2097152, "OOM101"},
    {"oom102_history", "fixtures/trace/oom102_history.py:16", 1048576, "OOM102"},
    {"oom103_eval_preds", "fixtures/trace/oom103_eval_preds.py:21", 1048576, "OOM103"},
    {"oom107_hidden", "fixtures/trace/oom107_hidden.py:19", 1048576, "OOM107"},
    // The hook allocates nothing: the bootstrap's record of the tensors it was called with ties
    // the kept blocks to it, and so to the finding on its `append`.
    {"oom108_hook", "fixtures/trace/oom108_hook.py:23", 1048576, "OOM108"},
    // LibTorch C++ through oomlint/trace.h: the forward `model->forward(x)` is inlined into main,
    // and its line is still the allocating one.
    {"cpp_history", "fixtures/trace/cpp_history.cpp:20", 1048576, "OOM102"},
};

TEST(TraceAnalysis, EachLeakIsItsAllocatingLineAtItsTrueGrowth) {
  for (const Leak& leak : kLeaks) {
    SCOPED_TRACE(leak.name);
    Trace t = readTraceFile(fixture(std::string(leak.name) + ".trace.json"));
    Analysis a = analyze(t);
    ASSERT_EQ(a.growth.size(), 1u);
    EXPECT_EQ(place(t, a.growth[0].frame), leak.line);
    EXPECT_NEAR(a.growth[0].perStep, leak.bytesPerStep, 0.05 * leak.bytesPerStep);
    ASSERT_TRUE(a.slopeKnown);
    EXPECT_NEAR(a.slopeAllocated, leak.bytesPerStep, 0.05 * leak.bytesPerStep);
  }
}

TEST(TraceAnalysis, AKeptBlockNamesTheHookThatSawIt) {
  Trace t = readTraceFile(fixture("oom108_hook.trace.json"));
  Analysis a = analyze(t);
  ASSERT_EQ(a.growth.size(), 1u);
  ASSERT_EQ(a.growth[0].hooks.size(), 1u);
  const Hook& h = t.hooks[a.growth[0].hooks[0]];
  EXPECT_EQ(h.name, "keep");
  EXPECT_EQ(t.files[h.file].path + ":" + std::to_string(h.firstLine) + "-" + std::to_string(h.lastLine),
            "fixtures/trace/oom108_hook.py:15-16");
  // The input the hook also saw is the same tensor every step: it does not grow, and no other
  // program's growth is tied to a hook.
  for (const char* name : {"oom102_history", "oom103_eval_preds", "clean"}) {
    Analysis other = analyze(readTraceFile(fixture(std::string(name) + ".trace.json")));
    for (const LineGroup& g : other.growth) EXPECT_TRUE(g.hooks.empty()) << name;
  }
}

TEST(TraceAnalysis, TheCleanProgramDoesNotGrow) {
  Trace t = readTraceFile(fixture("clean.trace.json"));
  Analysis a = analyze(t);
  EXPECT_TRUE(a.growth.empty());
  ASSERT_TRUE(a.slopeKnown);
  EXPECT_LT(std::fabs(a.slopeAllocated), 1024.0);
  EXPECT_EQ(a.steps, 30u);
  // Its peak holds the model, its gradients and AdamW's two moments, each read from the frames.
  EXPECT_GT(a.peakKinds[static_cast<size_t>(Kind::Parameters)], 0);
  EXPECT_GT(a.peakKinds[static_cast<size_t>(Kind::OptimizerState)], a.peakKinds[static_cast<size_t>(Kind::Parameters)]);
  EXPECT_GT(a.peakKinds[static_cast<size_t>(Kind::Gradients)], 0);
}

TEST(TraceAnalysis, ReplayedPeakMatchesTheAllocatorsOwnCounter) {
  for (const char* name : {"clean", "oom102_history", "oom201_eval", "oom105_retain"}) {
    SCOPED_TRACE(name);
    Trace t = readTraceFile(fixture(std::string(name) + ".trace.json"));
    Analysis a = analyze(t);
    int64_t counted = 0;
    for (const Step& s : t.steps) counted = std::max(counted, s.peakAllocated);
    // The counter rounds each block up to 512 bytes; the history keeps the sizes asked for.
    EXPECT_NEAR(static_cast<double>(a.peakAllocated + t.run.baselineAllocated), static_cast<double>(counted), 0.02 * counted);
  }
}

TEST(TraceJoin, EachLeakJoinsItsFinding) {
  for (const Leak& leak : kLeaks) {
    SCOPED_TRACE(leak.name);
    Result r = oomlint("trace --report fixtures/trace/" + std::string(leak.name) + ".trace.json --root . --output-format json");
    ASSERT_EQ(r.rc, 0) << r.err;
    nlohmann::json j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["growing_lines"].size(), 1u);
    const nlohmann::json& finding = j["growing_lines"][0]["finding"];
    if (*leak.code == 0) {
      EXPECT_TRUE(finding.is_null());
      continue;
    }
    ASSERT_FALSE(finding.is_null());
    EXPECT_EQ(finding["code"], leak.code);
  }
}

TEST(TraceJoin, AStaticEstimateStandsBesideTheMeasuredGrowthAndAgreesWithIt) {
  // Both programs state their sizes and store a forward's output that their backward
  // differentiates: OOM102 estimates one batch of outputs per step, which is what the GPU kept.
  for (const char* name : {"oom102_history", "oom_error"}) {
    SCOPED_TRACE(name);
    Result r = oomlint(std::string("trace --report fixtures/trace/") + name + ".trace.json --root . --output-format json");
    ASSERT_EQ(r.rc, 0) << r.err;
    nlohmann::json j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["growing_lines"].size(), 1u);
    const nlohmann::json& line = j["growing_lines"][0];
    ASSERT_TRUE(line["finding"].contains("estimated")) << line.dump();
    EXPECT_EQ(line["finding"]["estimated"]["measure"], "growth");
    double measured = line["bytes_per_step"].get<double>();
    EXPECT_NEAR(line["finding"]["estimated"]["bytes"].get<double>(), measured, 0.05 * measured);
  }
}

TEST(TraceJoin, PeakFindingsCoverTheLinesThatDominateThePeak) {
  for (const auto& [name, code] : {std::pair{"oom201_eval", "OOM201"}, std::pair{"oom105_retain", "OOM105"}}) {
    SCOPED_TRACE(name);
    Result r = oomlint(std::string("trace --report fixtures/trace/") + name + ".trace.json --root . --output-format json");
    ASSERT_EQ(r.rc, 0) << r.err;
    nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_TRUE(j["growing_lines"].empty());
    bool found = false;
    for (const auto& line : j["peak"]["lines"]) found |= !line["finding"].is_null() && line["finding"]["code"] == code;
    EXPECT_TRUE(found);
  }
}

TEST(TraceAnalysis, ARunThatDiesOfOutOfMemoryIsReportedWithItsStepLineAndLeak) {
  // Recorded on an H100 with the process held to 2% of the GPU: the 19th step's backward failed.
  Trace t = readTraceFile(fixture("oom_error.trace.json"));
  EXPECT_EQ(t.run.ended, "oom");
  EXPECT_EQ(t.run.exitCode, 1);
  Analysis a = analyze(t);
  ASSERT_TRUE(a.oom);
  EXPECT_EQ(a.oomStep, static_cast<int64_t>(a.steps) + 1);
  EXPECT_EQ(a.oomRequested, 64 << 20);
  // The allocator's oom event has no stack here; the error's traceback gives the line.
  EXPECT_EQ(a.oomFile + ":" + std::to_string(a.oomLine), "fixtures/trace/oom_error.py:19");
  ASSERT_EQ(a.growth.size(), 1u);
  EXPECT_EQ(place(t, a.growth[0].frame), "fixtures/trace/oom_error.py:18");
  EXPECT_NEAR(a.growth[0].perStep, 64 << 20, 0.05 * (64 << 20));
}

TEST(TraceAnalysis, ALibTorchRunThatDiesOfOutOfMemoryIsRecordedByTheHeader) {
  // Recorded on an H100 through oomlint/trace.h, held to 2% of the GPU: an uncaught
  // c10::OutOfMemoryError ended the program, and the header wrote the trace on its way out.
  Trace t = readTraceFile(fixture("cpp_oom_error.trace.json"));
  EXPECT_EQ(t.run.ended, "oom");
  EXPECT_EQ(t.run.frames, "c++");
  Analysis a = analyze(t);
  ASSERT_TRUE(a.oom);
  EXPECT_EQ(a.oomStep, static_cast<int64_t>(a.steps) + 1);
  EXPECT_EQ(a.oomRequested, 64 << 20);
  ASSERT_EQ(a.growth.size(), 1u);
  EXPECT_EQ(place(t, a.growth[0].frame), "fixtures/trace/cpp_oom_error.cpp:23");
  EXPECT_NEAR(a.growth[0].perStep, 64 << 20, 0.05 * (64 << 20));
  // The peak's kinds come from LibTorch's C++ names: the Linear's weight and bias, their gradients
  // (made on autograd's thread), and the kept outputs as activations.
  const int64_t linear = (4096 * 4096 + 4096) * 4;
  EXPECT_EQ(a.peakKinds[static_cast<size_t>(Kind::Parameters)], linear);
  EXPECT_EQ(a.peakKinds[static_cast<size_t>(Kind::Gradients)], linear);
  EXPECT_GT(a.peakKinds[static_cast<size_t>(Kind::Activations)], 15 * (64 << 20));
}

TEST(TraceJoin, EveryFindingThatExplainsAGrowingLineIsNamed) {
  // examples/train.py both sums `loss` (OOM101) and appends it to a list (OOM102) every step: the
  // kept loss scalars are explained by both, and neither is "not confirmed".
  Result r = oomlint("trace --report fixtures/trace/examples_train.trace.json --root . --output-format json");
  ASSERT_EQ(r.rc, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["growing_lines"].size(), 1u);
  const nlohmann::json& f = j["growing_lines"][0]["finding"];
  EXPECT_EQ(f["code"], "OOM101");
  ASSERT_EQ(f["also"].size(), 1u);
  EXPECT_EQ(f["also"][0]["code"], "OOM102");
  EXPECT_TRUE(j["unconfirmed"].empty());
}

TEST(TraceJoin, AGrowthFindingWhoseCodeRanWithoutGrowthIsUnconfirmed) {
  // Three steps, each allocating at a.py:5 and freeing it again: the code ran, nothing grew.
  std::string text = R"({"format":"oomlint-trace","version":1,"run":{},"files":[["a.py",true]],"frames":[[0,5,"f"]],)"
                     R"("stacks":[[0]],"steps":[[1,0,0,512,2,0.1],[2,0,0,512,4,0.2],[3,0,0,512,6,0.3]],)"
                     R"("events":[["a",1,512,0],["f",1,512,0],["a",1,512,0],["f",1,512,0],["a",1,512,0],["f",1,512,0]]})";
  Trace t = parseTrace(text);
  Analysis a = analyze(t);
  EXPECT_TRUE(a.growth.empty());
  std::vector<StaticFinding> findings(3);
  findings[0].code = "OOM102", findings[0].file = "a.py", findings[0].line = 5;  // ran
  findings[1].code = "OOM102", findings[1].file = "a.py", findings[1].line = 9;  // never ran
  findings[2].code = "OOM201", findings[2].file = "a.py", findings[2].line = 5;  // not a growth rule
  Join j = join(t, a, findings, nullptr);
  ASSERT_EQ(j.unconfirmed.size(), 1u);
  EXPECT_EQ(j.unconfirmed[0], 0);
}

/// The whole text report of every recorded trace, against the file beside it.
/// `OOMLINT_UPDATE_SNAPSHOTS=1` rewrites them (review the diff before committing).
TEST(TraceReport, TextSnapshots) {
  for (const auto& entry : fs::directory_iterator(std::string(OOMLINT_FIXTURES) + "/trace")) {
    std::string file = entry.path().filename().string();
    if (file.size() < 11 || file.substr(file.size() - 11) != ".trace.json") continue;
    std::string stem = file.substr(0, file.size() - 11);
    SCOPED_TRACE(stem);
    Result r = oomlint("trace --report fixtures/trace/" + file + " --root .");
    ASSERT_EQ(r.rc, 0) << r.err;
    fs::path expected = entry.path().parent_path() / (stem + ".expected.txt");
    if (std::getenv("OOMLINT_UPDATE_SNAPSHOTS")) spit(expected, r.out);
    EXPECT_EQ(r.out, slurp(expected));
  }
}

TEST(TraceReport, SvgChartNamesTheGrowingLine) {
  Result r = oomlint("trace --report fixtures/trace/oom102_history.trace.json --root . --output-format svg");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out.rfind("<svg", 0), 0u);
  EXPECT_NE(r.out.find("fixtures/trace/oom102_history.py:16  +1.00 MiB/step  OOM102"), std::string::npos);
  EXPECT_NE(r.out.find("</svg>"), std::string::npos);
}

TEST(TraceCli, FailOnGrowthGivesCiAnExitCode) {
  EXPECT_EQ(oomlint("trace --report fixtures/trace/oom102_history.trace.json --root . --fail-on-growth 512KiB").rc, 1);
  EXPECT_EQ(oomlint("trace --report fixtures/trace/oom102_history.trace.json --root . --fail-on-growth 2MiB").rc, 0);
  EXPECT_EQ(oomlint("trace --report fixtures/trace/clean.trace.json --root . --fail-on-growth 1").rc, 0);
  Result bad = oomlint("trace --report fixtures/trace/clean.trace.json --fail-on-growth lots");
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("--fail-on-growth takes a size"), std::string::npos);
}

TEST(TraceCli, ByteSizes) {
  EXPECT_EQ(oomlint::parseByteSize("1048576"), 1048576);
  EXPECT_EQ(oomlint::parseByteSize("512KiB"), 524288);
  EXPECT_EQ(oomlint::parseByteSize("1.5MiB"), 1572864);
  EXPECT_EQ(oomlint::parseByteSize("2G"), 2147483648);
  EXPECT_EQ(oomlint::parseByteSize("-1"), -1);
  EXPECT_EQ(oomlint::parseByteSize("1 parsec"), -1);
  EXPECT_EQ(oomlint::parseByteSize(""), -1);
}

TEST(TraceCli, RefusesWhatItCannotRun) {
  Result none = oomlint("trace");
  EXPECT_EQ(none.rc, 2);
  EXPECT_NE(none.err.find("give the program to run after `--`"), std::string::npos);
  Result script = oomlint("trace -- ./train.py");
  EXPECT_EQ(script.rc, 2);
  EXPECT_NE(script.err.find("through python: oomlint trace -- python ./train.py"), std::string::npos) << script.err;
  // Any other program is taken for a LibTorch one; one that records nothing is told how to.
  Result ls = oomlint("trace --trace-file /tmp/oomlint_trace_ls_" + std::to_string(::getpid()) + ".json -- true");
  EXPECT_EQ(ls.rc, 2);
  EXPECT_NE(ls.err.find("records through oomlint/trace.h"), std::string::npos) << ls.err;
  Result inline_ = oomlint("trace -- python3 -c 'print(1)'");
  EXPECT_EQ(inline_.rc, 2);
  EXPECT_NE(inline_.err.find("not `python -c`"), std::string::npos);
  Result both = oomlint("trace --report fixtures/trace/clean.trace.json -- python3 x.py");
  EXPECT_EQ(both.rc, 2);
}

TEST(TraceCli, BootstrapWithoutCudaSaysSoAndExits2) {
  // Debian's python3-torch is the CPU build: the bootstrap must refuse before running anything.
  ASSERT_EQ(std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1"), 0)
      << "/usr/bin/python3 cannot import torch: scripts/setup.sh installs python3-torch";
  fs::path dir = fs::temp_directory_path() / ("oomlint_trace_nocuda_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  spit(dir / "prog.py", "open('ran', 'w').write('yes')\n");
  std::string cmd = "cd '" + dir.string() + "' && CUDA_VISIBLE_DEVICES= '" + OOMLINT_BINARY +
                    "' trace -- /usr/bin/python3 prog.py >out 2>err";
  int status = std::system(cmd.c_str());
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_NE(slurp(dir / "err").find("no CUDA device is available"), std::string::npos) << slurp(dir / "err");
  EXPECT_FALSE(fs::exists(dir / "ran"));
  EXPECT_FALSE(fs::exists(dir / "oomlint-trace.json"));
  fs::remove_all(dir);
}

TEST(TraceHeader, OutsideTraceItDoesNothingAndWithoutCudaItRefusesSayingWhy) {
#ifndef OOMLINT_HAVE_TRACE_HEADER_PROGRAM
  GTEST_SKIP() << "this build found no LibTorch, so oomlint/trace.h was not compiled against one";
#else
  fs::path dir = fs::temp_directory_path() / ("oomlint_trace_header_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string program = testpaths::kTraceHeaderProgram;
  std::string plain = "cd '" + dir.string() + "' && '" + program + "' >out 2>err";
  EXPECT_EQ(WEXITSTATUS(std::system(plain.c_str())), 0) << slurp(dir / "err");
  EXPECT_EQ(slurp(dir / "out"), "trained 3 steps\n");
  EXPECT_EQ(slurp(dir / "err"), "");
  std::string traced = "cd '" + dir.string() + "' && CUDA_VISIBLE_DEVICES= '" + OOMLINT_BINARY + "' trace -- '" +
                       program + "' >out 2>err";
  EXPECT_EQ(WEXITSTATUS(std::system(traced.c_str())), 2);
  EXPECT_NE(slurp(dir / "err").find("oomlint trace: no CUDA"), std::string::npos) << slurp(dir / "err");
  EXPECT_EQ(slurp(dir / "out"), "");
  EXPECT_FALSE(fs::exists(dir / "oomlint-trace.json"));
  fs::remove_all(dir);
#endif
}

TEST(TraceHeader, AStackTakenInAnInlinedCallNamesTheCallersLineToo) {
#ifndef OOMLINT_HAVE_TRACE_HEADER_PROGRAM
  GTEST_SKIP() << "this build found no LibTorch, so oomlint/trace.h was not compiled against one";
#else
  // The program is built with -O2 -g: `twice` is inlined into its caller, whose line must still be
  // named, right after the inlined call's own (trace_header_cpu.cpp marks both lines).
  std::string out;
  FILE* p = ::popen(("'" + std::string(testpaths::kTraceHeaderProgram) + "' --name-stack").c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  EXPECT_EQ(::pclose(p), 0);
  // The folder part of each path is the one the object file was first compiled in (ccache shares
  // objects between clones), so the lines are matched by their end.
  std::vector<std::string> lines;
  for (size_t at = 0, nl; (nl = out.find('\n', at)) != std::string::npos; at = nl + 1) lines.push_back(out.substr(at, nl - at));
  auto endsWith = [](const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  const std::string file = "/tests/programs/trace_header_cpu.cpp";
  size_t inlined = lines.size();
  for (size_t i = 0; i < lines.size(); ++i)
    if (endsWith(lines[i], file + ":17 int twice<int>(int)")) inlined = i;
  ASSERT_LT(inlined + 1, lines.size()) << out;
  EXPECT_TRUE(endsWith(lines[inlined + 1], file + ":22 nameStack")) << out;
  ASSERT_GT(inlined, 0u) << out;
  EXPECT_TRUE(endsWith(lines[inlined - 1], file + ":13 take()")) << out;
#endif
}

TEST(TraceReader, DamagedTracesGiveClearErrorsNeverACrash) {
  std::string good = slurp(fixture("oom102_history.trace.json"));
  ASSERT_NO_THROW(parseTrace(good));
  // Every prefix of a real trace is refused with a message, never read past its end.
  for (size_t cut : {size_t(0), size_t(1), good.size() / 3, good.size() / 2, good.size() - 1}) {
    SCOPED_TRACE(cut);
    EXPECT_THROW(parseTrace(good.substr(0, cut)), TraceError);
  }
  auto message = [](const std::string& text) {
    try {
      parseTrace(text);
    } catch (const TraceError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string head = R"({"format":"oomlint-trace","version":1,"run":{},"files":[["a.py",true]],"frames":[[0,3,"f"]],"stacks":[[0]],)";
  EXPECT_EQ(message("[]"), "not a trace: the top level is not a JSON object");
  EXPECT_EQ(message(R"({"format":"other","version":1})"), "not an oomlint trace: \"format\" is not \"oomlint-trace\"");
  EXPECT_EQ(message(R"({"format":"oomlint-trace","version":7})"), "trace version 7 is not one this oomlint reads (it reads 1)");
  EXPECT_EQ(message(head + R"("steps":[],"events":[["a",1,512,4]]})"), "events[0]: 4 is not an index of stacks (1)");
  EXPECT_EQ(message(head + R"("steps":[],"events":[["x",1,512,0]]})"), "events[0]: unknown action \"x\"");
  EXPECT_EQ(message(head + R"("steps":[],"events":[["a",1,-5,0]]})"), "events[0]: negative size");
  EXPECT_EQ(message(head + R"("steps":[[2,0,0,0,0,0.1]],"events":[]})"), "steps[0]: steps are not numbered 1, 2, 3 ...");
  EXPECT_EQ(message(head + R"("steps":[[1,0,0,0,5,0.1]],"events":[]})"), "steps[0]: event 5 is outside the 0 events");
  EXPECT_EQ(message(R"({"format":"oomlint-trace","version":1,"run":{},"files":[],"frames":[[0,3,"f"]],"stacks":[],"steps":[],"events":[]})"),
            "frames[0]: 0 is not an index of files (0)");
  EXPECT_EQ(message(head + R"("steps":[],"events":[]})"), "accepted");
  EXPECT_EQ(message(head + R"("steps":[],"events":[],"hooks":[[0,9,3,"h"]]})"), "hooks[0]: its lines are not a range");
  EXPECT_EQ(message(head + R"("steps":[],"events":[],"hooks":[[0,3,9,"h"]],"hook_calls":[[1,4096,1]]})"),
            "hook_calls[0]: 1 is not an index of hooks (1)");
  EXPECT_EQ(message(head + R"("steps":[],"events":[],"hooks":[[0,3,9,"h"]],"hook_calls":[[1,4096,0]]})"), "accepted");
  Result r = oomlint("trace --report fixtures/trace/PROVENANCE.gpu.txt");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("not valid JSON"), std::string::npos);
}

TEST(TraceReader, ATraceWithNoStepsSaysHowToMarkThem) {
  std::string text = R"({"format":"oomlint-trace","version":1,"run":{},"files":[["a.py",true]],"frames":[[0,3,"f"]],)"
                     R"("stacks":[[0]],"steps":[],"events":[["a",1,512,0]],"oom":null})";
  Trace t = parseTrace(text);
  Analysis a = analyze(t);
  ASSERT_FALSE(a.notes.empty());
  EXPECT_NE(a.notes[0].find("oomlint.trace.step()"), std::string::npos);
  EXPECT_EQ(a.peakAllocated, 512);
}

TEST(TraceAnalysis, AnOutOfMemoryEventNamesItsStepAndLine) {
  std::string text = R"({"format":"oomlint-trace","version":1,"run":{"ended":"oom"},"files":[["a.py",true]],)"
                     R"("frames":[[0,3,"f"],[0,9,"g"]],"stacks":[[0],[1]],)"
                     R"("steps":[[1,512,2097152,512,1,0.1]],"events":[["a",1,512,0],["oom",1024,1073741824,1]],)"
                     R"("oom":{"message":"CUDA out of memory","file":"a.py","line":9,"name":"g"}})";
  Trace t = parseTrace(text);
  Analysis a = analyze(t);
  ASSERT_TRUE(a.oom);
  EXPECT_EQ(a.oomStep, 2);
  EXPECT_EQ(a.oomRequested, 1073741824);
  EXPECT_EQ(place(t, a.oomFrame), "a.py:9");
  EXPECT_EQ(a.oomFile + ":" + std::to_string(a.oomLine), "a.py:9");
  std::vector<StaticFinding> none;
  Join j = join(t, a, none, nullptr);
  std::string text2 = renderText({t, a, none, j, ""});
  EXPECT_NE(text2.find("Out of memory in step 2, which did not finish: asked for 1.0 GiB with 1.0 KiB free on the device"), std::string::npos)
      << text2;
}

}  // namespace
