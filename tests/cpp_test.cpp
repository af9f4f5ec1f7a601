// The C++ front end end to end: fixtures compile against real LibTorch headers, suppressions in
// clang-tidy's forms, compile_commands.json flags, missing headers, syntax errors, C++ fixes
// and the promise that a Python-only run never loads Clang.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>

#include "cpp/loader.h"
#include "engine/engine.h"
#include "fix/fix.h"
#include "test_util.h"

namespace fs = std::filesystem;
using namespace oomlint;
using testutil::sh;
using testutil::slurp;
using testutil::spit;

namespace {

/// The Debian libtorch-dev include folder that holds <torch/torch.h>.
constexpr const char* kTorchApiInclude = "/usr/include/torch/csrc/api/include";

fs::path tempDir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("oomlint_cpp_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

using testutil::everyRule;

std::set<uint32_t> linesWith(const FileResult& r, std::string_view code) {
  std::set<uint32_t> out;
  for (const Finding& f : r.findings)
    if (f.code == code) out.insert(f.span.line);
  return out;
}

/// A path for in-memory documents away from any compile_commands.json (the build tree has one,
/// and a file under it would be read with oomlint's own flags, as clang-tidy would).
std::string docPath(const std::string& name) { return (fs::temp_directory_path() / ("oomlint_cpp_doc_" + name)).string(); }

/// A LibTorch loop that accumulates the loss with its graph on `line` (the `total += loss;`).
std::string leakyCpp(const std::string& lineComment = "", const std::string& before = "") {
  return "#include <torch/torch.h>\n"                                                   // 1
         "#include <vector>\n"                                                          // 2
         + before +                                                                     //
         "double train(torch::nn::Linear& model, torch::optim::SGD& opt, std::vector<torch::Tensor>& xs) {\n"
         "  torch::Tensor total = torch::zeros({1});\n"
         "  for (auto& x : xs) {\n"
         "    opt.zero_grad();\n"
         "    auto loss = model(x).pow(2).mean();\n"
         "    loss.backward();\n"
         "    opt.step();\n"
         "    total += loss;" + lineComment + "\n"
         "  }\n"
         "  return total.item<double>();\n"
         "}\n";
}

}  // namespace

// Fixtures and examples/cpp are real LibTorch programs: every one (and every expected fixed output) compiles with
// g++ against Debian's libtorch-dev headers. One translation unit holds them all, each in its own
// namespace; the headers are included first, so their guards keep the fixtures' own includes out.
TEST(CppFixtures, CompileWithDebianLibTorchHeaders) {
  ASSERT_TRUE(fs::exists(fs::path(kTorchApiInclude) / "torch/torch.h")) << "libtorch-dev is not installed";
  fs::path dir = tempDir("compile");
  std::string tu = "#include <ATen/autocast_mode.h>\n#include <torch/torch.h>\n#include <torch/script.h>\n#include <cmath>\n#include <cstdio>\n"
                   "#include <iostream>\n#include <map>\n#include <string>\n#include <tuple>\n#include <vector>\n";
  int n = 0;
  for (const fs::path& folder : {fs::path(OOMLINT_FIXTURES) / "cpp", fs::path(OOMLINT_EXAMPLES) / "cpp"})
    for (const auto& e : fs::directory_iterator(folder)) {
      if (e.path().extension() != ".cpp") continue;
      // Fixtures of code written for an older LibTorch API say so on their first line, as do
      // those whose project headers are absent on purpose (the front end's stand-ins read them).
      std::string text = slurp(e.path());
      if (text.rfind("// old LibTorch API", 0) == 0 || text.rfind("// project headers absent", 0) == 0) continue;
      tu += "namespace fixture_" + std::to_string(++n) + " {\n#include \"" + e.path().string() + "\"\n}\n";
    }
  ASSERT_GT(n, 44);
  spit(dir / "all_fixtures.cpp", tu);
  std::string log = (dir / "gxx.log").string();
  int rc = sh("g++ -std=c++17 -fsyntax-only -I" + std::string(kTorchApiInclude) + " '" + (dir / "all_fixtures.cpp").string() +
              "' >'" + log + "' 2>&1");
  EXPECT_EQ(0, rc) << slurp(log);
  fs::remove_all(dir);
}

TEST(Cpp, NolintFormsSuppressAsClangTidyReadsThem) {
  struct Case {
    std::string comment, before;
    bool suppressed;
  };
  const Case cases[] = {
      {"", "", false},
      {"  // NOLINT", "", true},
      {"  // NOLINT(oom101)", "", true},
      {"  // NOLINT(OOM101, bugprone-foo)", "", true},
      {"  // NOLINT(oom1*)", "", true},
      {"  // NOLINT(*)", "", true},
      {"  // NOLINT(oom102)", "", false},
      {"  // NOLINT(bugprone-*)", "", false},
      {"  // noqa: OOM101", "", true},
      {"  // noqa: OOM102", "", false},
      {"  /* NOLINT(oom101) */", "", true},
      {"", "// NOLINTBEGIN(oom101)\n", true},
      {"", "// NOLINTBEGIN(oom102)\n", false},
  };
  for (const Case& c : cases) {
    FileResult r = checkSource(docPath("leak.cpp"), leakyCpp(c.comment, c.before), everyRule());
    ASSERT_TRUE(r.skippedReason.empty()) << r.skippedReason;
    uint32_t leakLine = c.before.empty() ? 10 : 11;
    EXPECT_EQ(c.suppressed ? std::set<uint32_t>{} : std::set<uint32_t>{leakLine}, linesWith(r, "OOM101"))
        << "comment `" << c.comment << "` before `" << c.before << "`";
  }
  // NOLINTNEXTLINE covers the next line only; NOLINTEND closes the range.
  std::string src = leakyCpp();
  size_t at = src.find("    total += loss;");
  std::string next = src;
  next.insert(at, "    // NOLINTNEXTLINE(oom101)\n");
  EXPECT_TRUE(linesWith(checkSource(docPath("leak.cpp"), next, everyRule()), "OOM101").empty());
  std::string ranged = src;
  ranged.insert(at, "    // NOLINTBEGIN\n    // NOLINTEND\n");
  EXPECT_EQ(std::set<uint32_t>{12}, linesWith(checkSource(docPath("leak.cpp"), ranged, everyRule()), "OOM101"));
}

TEST(Cpp, CompileCommandsGiveTheFilesRealFlags) {
  fs::path dir = tempDir("ccdb");
  // The leak exists only when the build defines OOMLINT_TEST_LEAK: finding it proves the flags
  // from compile_commands.json reached Clang, and the real LibTorch headers parsed.
  std::string src = leakyCpp("", "");
  src.replace(src.find("    total += loss;"), 18, "#ifdef OOMLINT_TEST_LEAK\n    total += loss;\n#endif");
  spit(dir / "src" / "train.cpp", src);
  spit(dir / "build" / "compile_commands.json",
       "[{\"directory\": \"" + (dir / "build").string() + "\", \"file\": \"" + (dir / "src" / "train.cpp").string() +
           "\", \"command\": \"/usr/bin/c++ -std=c++17 -DOOMLINT_TEST_LEAK -I" + kTorchApiInclude +
           " -o train.o -c " + (dir / "src" / "train.cpp").string() + "\"}]\n");
  cpp::configure(cpp::Settings{(dir / "build").string()});
  std::string error, mode;
  std::unique_ptr<Module> m = cpp::parse((dir / "src" / "train.cpp").string(), src, error, &mode);
  cpp::configure(cpp::Settings{});
  ASSERT_TRUE(m) << error;
  EXPECT_EQ("compile_commands", mode);
  EXPECT_TRUE(m->syntaxIssues.empty()) << m->syntaxIssues.front().message;
  std::vector<Finding> findings = analyzeModule(*m, everyRule());
  ASSERT_EQ(1u, findings.size());
  EXPECT_EQ("OOM101", findings[0].code);
  EXPECT_EQ(11u, findings[0].span.line);
  // Without the database the same file is read with the bundled declarations, and the
  // undefined macro hides the leak.
  std::unique_ptr<Module> bundled = cpp::parse((dir / "src" / "train.cpp").string(), src, error, &mode);
  ASSERT_TRUE(bundled) << error;
  EXPECT_EQ("bundled", mode);
  EXPECT_TRUE(analyzeModule(*bundled, everyRule()).empty());
  fs::remove_all(dir);
}

TEST(Cpp, CompileCommandsNameTheSourceRelativeToTheirFolder) {
  // CMake writes absolute paths, but Bear, hand-written databases and other generators name the
  // source as the compiler saw it from `directory`. Clang must get it once, as one input.
  fs::path dir = tempDir("ccdb_relative");
  std::string src = leakyCpp("", "");
  src.replace(src.find("    total += loss;"), 18, "#ifdef OOMLINT_TEST_LEAK\n    total += loss;\n#endif");
  spit(dir / "src" / "train.cpp", src);
  // No LibTorch include path: the bundled declarations fill in, and the parse stays quick.
  std::string flags = "-std=c++17 -DOOMLINT_TEST_LEAK";
  const std::vector<std::pair<std::string, std::string>> shapes{
      // {"file", the rest of the entry}
      {"train.cpp", "\"command\": \"g++ " + flags + " -c train.cpp -o train.o\""},
      {"./train.cpp", "\"command\": \"g++ " + flags + " -c ./train.cpp -o train.o\""},
      {(dir / "src" / "train.cpp").string(), "\"command\": \"g++ " + flags + " -c ../src/train.cpp -o train.o\""},
      {"train.cpp", "\"arguments\": [\"g++\", \"-std=c++17\", \"-DOOMLINT_TEST_LEAK\", \"-c\", \"train.cpp\", \"-o\", \"train.o\"]"},
  };
  for (const auto& [file, rest] : shapes) {
    spit(dir / "src" / "compile_commands.json",
         "[{\"directory\": \"" + (dir / "src").string() + "\", \"file\": \"" + file + "\", " + rest + "}]\n");
    cpp::configure(cpp::Settings{(dir / "src").string()});
    std::string error, mode;
    std::unique_ptr<Module> m = cpp::parse((dir / "src" / "train.cpp").string(), src, error, &mode);
    cpp::configure(cpp::Settings{});
    ASSERT_TRUE(m) << rest << ": " << error;
    EXPECT_EQ("compile_commands", mode) << rest;
    EXPECT_TRUE(m->syntaxIssues.empty()) << rest << ": " << m->syntaxIssues.front().message;
    std::vector<Finding> findings = analyzeModule(*m, everyRule());
    ASSERT_EQ(1u, findings.size()) << rest;
    EXPECT_EQ("OOM101", findings[0].code) << rest;
    EXPECT_EQ(11u, findings[0].span.line) << rest;
  }
  fs::remove_all(dir);
}

TEST(Cpp, ProjectHeadersGiveTheirCodeWithRealFlagsAndAPrecompiledPreamble) {
  // With a compile database the file's #include block is precompiled: the header's classes come
  // from the preamble, and their methods' bodies must still be lowered from it, on the run that
  // writes the preamble and on the one that reuses it. The database names no LibTorch include
  // folder, so the bundled declarations stand in for <torch/torch.h> (in the preamble too) and the
  // preamble takes a second to write instead of ten; CompileCommandsGiveTheFilesRealFlags parses
  // the real headers.
  fs::path dir = tempDir("headers");
  fs::path src = dir / "src" / "train.cpp";
  spit(dir / "include" / "meter.h",
       "#pragma once\n#include <torch/torch.h>\n"
       "struct Meter {\n  torch::Tensor total = torch::zeros({1});\n  void add(const torch::Tensor& v) { total += v; }\n};\n");
  std::string code =
      "#include <torch/torch.h>\n#include <vector>\n#include \"meter.h\"\n"
      "double fit(torch::nn::Linear& model, torch::optim::SGD& opt, std::vector<torch::Tensor>& xs) {\n"
      "  Meter meter;\n"
      "  for (auto& x : xs) {\n"
      "    opt.zero_grad();\n"
      "    auto loss = model(x).sum();\n"
      "    loss.backward();\n"
      "    opt.step();\n"
      "    meter.add(loss);\n"
      "  }\n"
      "  return meter.total.item<double>();\n"
      "}\n";
  spit(src, code);
  spit(dir / "build" / "compile_commands.json",
       "[{\"directory\": \"" + (dir / "build").string() + "\", \"file\": \"" + src.string() +
           "\", \"command\": \"/usr/bin/c++ -std=c++17 -I" + (dir / "include").string() + " -c " + src.string() + "\"}]\n");
  fs::path pch = dir / "pch";
  ::setenv("OOMLINT_PCH_DIR", pch.c_str(), 1);
  auto findings = [&](const std::string& root, bool alone) {
    cpp::configure(cpp::Settings{(dir / "build").string(), root, alone});
    std::string error, mode;
    std::unique_ptr<Module> m = cpp::parse(src.string(), code, error, &mode);
    cpp::configure(cpp::Settings{});
    EXPECT_TRUE(m) << error;
    EXPECT_EQ("compile_commands", mode);
    return m ? analyzeModule(*m, everyRule()) : std::vector<Finding>{};
  };
  for (int run = 0; run < 2; ++run) {
    std::vector<Finding> found = findings(dir.string(), false);
    ASSERT_EQ(1u, found.size()) << "run " << run;
    EXPECT_EQ("OOM101", found[0].code);
    EXPECT_EQ(11u, found[0].span.line);
    for (const Related& r : found[0].related) EXPECT_GT(r.span.line, 0u) << "a note points into the header: " << r.message;
    for (const Edit& e : found[0].fix.edits) EXPECT_LE(e.end, code.size()) << "a fix edits outside train.cpp";
  }
  EXPECT_FALSE(fs::is_empty(pch)) << "the second run reused a precompiled preamble";
  // A header outside the project root, and the file checked alone, say nothing of Meter::add.
  EXPECT_TRUE(findings((dir / "src").string(), false).empty());
  EXPECT_TRUE(findings(dir.string(), true).empty());
  ::unsetenv("OOMLINT_PCH_DIR");
  fs::remove_all(dir);
}

TEST(Cpp, APreambleIsSharedByBuildFoldersWhoseFlagsNameAbsolutePaths) {
  // Each CMake build folder of a source tree runs the same compile command in another folder. With
  // absolute paths in the flags the folder changes nothing Clang reads, so the preamble written
  // for one is reused by the other; `-I include`, read from the folder, keeps them apart.
  fs::path dir = tempDir("pch_folders");
  fs::path src = dir / "src" / "train.cpp";
  std::string code = leakyCpp("", "#include \"meter.h\"\n");
  spit(src, code);
  spit(dir / "include" / "meter.h", "#pragma once\nstruct Meter {};\n");
  fs::path pch = dir / "pch";
  ::setenv("OOMLINT_PCH_DIR", pch.c_str(), 1);
  auto parseIn = [&](const std::string& build, const std::string& include) {
    fs::create_directories(dir / build);
    spit(dir / build / "compile_commands.json", "[{\"directory\": \"" + (dir / build).string() + "\", \"file\": \"" + src.string() +
                                                    "\", \"command\": \"c++ -std=c++17 " + include + " -c " + src.string() + "\"}]\n");
    cpp::configure(cpp::Settings{(dir / build).string()});
    std::string error, mode;
    std::unique_ptr<Module> m = cpp::parse(src.string(), code, error, &mode);
    cpp::configure(cpp::Settings{});
    EXPECT_TRUE(m) << build << ": " << error;
    EXPECT_EQ("compile_commands", mode) << build;
    std::vector<Finding> found = m ? analyzeModule(*m, everyRule()) : std::vector<Finding>{};
    EXPECT_EQ(1u, found.size()) << build;
    size_t preambles = 0;
    for (const auto& e : fs::directory_iterator(pch)) preambles += e.path().extension() == ".pch";
    return preambles;
  };
  EXPECT_EQ(1u, parseIn("build-debug", "-I " + (dir / "include").string()));
  EXPECT_EQ(1u, parseIn("build-release", "-I " + (dir / "include").string())) << "the same flags in another folder";
  spit(dir / "build-debug" / "include" / "meter.h", "#pragma once\nstruct Meter {};\n");
  spit(dir / "build-release" / "include" / "meter.h", "#pragma once\nstruct Meter {};\n");
  EXPECT_EQ(2u, parseIn("build-debug", "-I include"));
  EXPECT_EQ(3u, parseIn("build-release", "-I include")) << "a relative include folder is another folder's";
  EXPECT_EQ(4u, parseIn("build-debug", "--include-directory=include"));
  EXPECT_EQ(5u, parseIn("build-release", "--include-directory=include")) << "the long form of -I is a path too";
  ::unsetenv("OOMLINT_PCH_DIR");
  fs::remove_all(dir);
}

TEST(Cpp, HeaderCodeIsAnalysedButNeverReported) {
  // The header's own mistakes belong to the header's check: the including file gets none of
  // them, and none of its findings' notes or fixes point into the header.
  fs::path dir = tempDir("header_findings");
  spit(dir / "CMakeLists.txt", "");
  spit(dir / "helpers.h",
       "#pragma once\n#include <torch/torch.h>\n#include <vector>\n"
       "inline double evaluate(torch::nn::Linear& model, std::vector<torch::Tensor>& xs) {\n"
       "  model->eval();\n"
       "  double total = 0;\n"
       "  for (auto& x : xs) total += model(x).sum().item<double>();\n"
       "  return total;\n"
       "}\n");
  std::string code =
      "#include <torch/torch.h>\n#include <vector>\n#include \"helpers.h\"\n"
      "double twice(torch::nn::Linear& model, std::vector<torch::Tensor>& xs) {\n"
      "  return 2 * evaluate(model, xs);\n"
      "}\n";
  spit(dir / "main.cpp", code);
  FileResult header = checkSource((dir / "helpers.h").string(), slurp(dir / "helpers.h"), everyRule());
  EXPECT_EQ(std::set<uint32_t>{7}, linesWith(header, "OOM201")) << "the header checked itself";
  std::string error;
  std::unique_ptr<Module> m = cpp::parse((dir / "main.cpp").string(), code, error);
  ASSERT_TRUE(m) << error;
  EXPECT_LT(m->firstExternalFunction, m->functions.size()) << "evaluate was lowered with main.cpp";
  EXPECT_EQ(std::vector<std::string>{(dir / "helpers.h").string()}, m->headerDependencies);
  EXPECT_TRUE(analyzeModule(*m, everyRule()).empty());
  fs::remove_all(dir);
}

TEST(Cpp, BuildDatabasesCannotMakeClangLoadCode) {
  // A pull request can carry its own compile_commands.json: flags that would make Clang dlopen a
  // plugin are dropped (were they kept, Clang would fail to load these and parse nothing).
  fs::path dir = tempDir("plugins");
  spit(dir / "train.cpp", leakyCpp());
  spit(dir / "compile_commands.json",
       "[{\"directory\": \"" + dir.string() + "\", \"file\": \"train.cpp\", \"arguments\": [\"c++\", \"-std=c++17\", "
       "\"-fplugin=/nonexistent/evil.so\", \"-fpass-plugin=/nonexistent/evil2.so\", \"-Xclang\", \"-load\", \"-Xclang\", "
       "\"/nonexistent/evil3.so\", \"-Xclang\", \"-add-plugin\", \"-Xclang\", \"evil\", \"-c\", \"train.cpp\"]}]\n");
  std::string error, mode;
  std::unique_ptr<Module> m = cpp::parse((dir / "train.cpp").string(), leakyCpp(), error, &mode);
  ASSERT_TRUE(m) << error;
  EXPECT_EQ("compile_commands", mode);
  std::vector<Finding> findings = analyzeModule(*m, everyRule());
  ASSERT_EQ(1u, findings.size());
  EXPECT_EQ("OOM101", findings[0].code);
  fs::remove_all(dir);
}

TEST(Cpp, AMissingHeaderDoesNotCostTheAnalysis) {
  std::string src = leakyCpp("", "#include \"project/does_not_exist.h\"\n#include <torch/not_a_real_header.h>\n");
  FileResult r = checkSource(docPath("leak.cpp"), src, everyRule());
  EXPECT_EQ(std::set<uint32_t>{12}, linesWith(r, "OOM101"));
  EXPECT_TRUE(linesWith(r, "OOM000").empty());
}

TEST(Cpp, EveryMissingHeaderIsRecoveredNotOnlyTheFirst) {
  // A LibTorch file checked without its project's headers: after the first missing one, Clang
  // stopped with a fatal error and instantiated no template code, so `losses.push_back(loss)` on a
  // `std::vector<torch::Tensor>` was gone from the analysis.
  std::string src = "#include <torch/torch.h>\n"
                    "#include <vector>\n"
                    "#include \"data/loader.h\"\n"
                    "#include \"model/net.h\"\n"
                    "#include \"util/config.h\"\n"
                    "std::vector<torch::Tensor> train(torch::nn::Linear& model, torch::optim::SGD& opt, std::vector<torch::Tensor>& xs) {\n"
                    "  std::vector<torch::Tensor> losses;\n"
                    "  for (auto& x : xs) {\n"
                    "    opt.zero_grad();\n"
                    "    auto loss = model(x).pow(2).mean();\n"
                    "    loss.backward();\n"
                    "    opt.step();\n"
                    "    losses.push_back(loss);\n"  // 13
                    "  }\n"
                    "  return losses;\n"
                    "}\n";
  FileResult r = checkSource(docPath("three_missing.cpp"), src, everyRule());
  EXPECT_EQ(std::set<uint32_t>{13}, linesWith(r, "OOM102"));
  EXPECT_TRUE(linesWith(r, "OOM000").empty());
}

TEST(Cpp, NamesOfAMissingHeaderAreNoSyntaxError) {
  // `ns::Type value(1, 2);` with `ns` from a header that cannot be found reads as an expression
  // to Clang ("expected ';'"): the echo of the undeclared name, not a syntax error of the file.
  std::string src = leakyCpp("", "#include \"image_io.h\"\n") +
                    "void blur_all() {\n  transform::GaussBlur2d blur(33, 10);\n  int broken = 1 int other = 2;\n}\n";
  FileResult r = checkSource(docPath("validate.h"), src, everyRule());
  std::set<uint32_t> errors = linesWith(r, "OOM000");
  ASSERT_EQ(1u, errors.size()) << "the real syntax error is still reported";
  EXPECT_EQ(std::count(src.begin(), src.end(), '\n') - 1, static_cast<long>(*errors.begin())) << "on `int broken = 1 int other = 2;`";
}

TEST(Cpp, SyntaxErrorIsReportedAndTheRestStillAnalysed) {
  std::string src = leakyCpp();
  src += "void broken( {\n";
  FileResult r = checkSource(docPath("leak.cpp"), src, everyRule());
  EXPECT_EQ(std::set<uint32_t>{10}, linesWith(r, "OOM101"));
  EXPECT_EQ(1u, linesWith(r, "OOM000").size());
}

TEST(Cpp, BadBytesNeverCrashTheFrontEnd) {
  std::string nul = leakyCpp();
  nul[40] = '\0';
  std::string binary;
  for (int i = 0; i < 4096; ++i) binary += static_cast<char>((i * 7919) & 0xff);
  std::string deep = "#include <torch/torch.h>\nint f() { return " + std::string(5000, '(') + "1" + std::string(5000, ')') + "; }\n";
  for (const std::string& s : {nul, binary + "torch", deep, std::string("torch"), std::string("\xff\xfe torch \x80")}) {
    FileResult r = checkSource(docPath("bad.cpp"), s, everyRule());
    EXPECT_TRUE(r.skippedReason.empty()) << r.skippedReason;
  }
}

TEST(Cpp, FilesWithoutLibTorchAreNotParsed) {
  // No torch / ATen / c10 in the text: nothing for the rules, and Clang is not run at all (a
  // syntax error would otherwise show).
  FileResult r = checkSource(docPath("plain.cpp"), "int main() { return 0 }\n", everyRule());
  EXPECT_TRUE(r.findings.empty());
}

TEST(Cpp, CliChecksCppAndCudaFilesInDirectoriesAndFixesThem) {
  fs::path dir = tempDir("cli");
  spit(dir / "train.cpp", leakyCpp());
  spit(dir / "kernel.cu", leakyCpp());
  spit(dir / "note.txt", "torch");
  std::string out = (dir / "out.txt").string();
  int rc = sh("cd '" + dir.string() + "' && " + OOMLINT_BINARY + " check --no-cache --output-format concise . >'" + out + "' 2>&1");
  EXPECT_EQ(1, rc) << slurp(out);
  std::string report = slurp(out);
  EXPECT_NE(std::string::npos, report.find("train.cpp:10:5: OOM101")) << report;
  EXPECT_NE(std::string::npos, report.find("kernel.cu:10:5: OOM101")) << report;
  // --unsafe-fixes renders the C++ fix; the result re-parses and a second run finds nothing.
  rc = sh("cd '" + dir.string() + "' && " + OOMLINT_BINARY + " check --no-cache --fix --unsafe-fixes train.cpp >'" + out + "' 2>&1");
  EXPECT_EQ(0, rc) << slurp(out);
  EXPECT_NE(std::string::npos, slurp(dir / "train.cpp").find("total += loss.item<double>();"));
  // --add-noqa writes clang-tidy's form.
  rc = sh("cd '" + dir.string() + "' && " + OOMLINT_BINARY + " check --no-cache --add-noqa kernel.cu >'" + out + "' 2>&1");
  EXPECT_NE(std::string::npos, slurp(dir / "kernel.cu").find("total += loss;  // NOLINT(OOM101)")) << slurp(out);
  rc = sh("cd '" + dir.string() + "' && " + OOMLINT_BINARY + " check --no-cache . >'" + out + "' 2>&1");
  EXPECT_EQ(0, rc) << slurp(out);
  fs::remove_all(dir);
}

TEST(Cpp, WithoutTheStandardLibrarysHeadersAFileIsAnErrorNotAPass) {
  // A machine with the wheel but no C++ compiler has no <vector>, <string> ...: -nostdinc++ gives
  // Clang the same search paths. The file gets one error saying what to install, and no finding
  // made from a parse that lacked every standard type; the exit code says it was not checked.
  fs::path dir = tempDir("nostd");
  spit(dir / "train.cpp", leakyCpp());
  std::string out = (dir / "out.txt").string();
  int rc = sh("cd '" + dir.string() + "' && " + OOMLINT_BINARY + " check --no-cache --output-format concise --extra-arg=-nostdinc++ train.cpp >'" +
              out + "' 2>&1");
  std::string report = slurp(out);
  EXPECT_EQ(1, rc) << report;
  EXPECT_NE(std::string::npos, report.find("train.cpp:1:1: OOM000 C++ standard library headers not found")) << report;
  EXPECT_NE(std::string::npos, report.find("install g++")) << report;
  EXPECT_EQ(std::string::npos, report.find("OOM101")) << report;
  // With the headers, the same file is analysed.
  sh("cd '" + dir.string() + "' && " + OOMLINT_BINARY + " check --no-cache --output-format concise train.cpp >'" + out + "' 2>&1");
  EXPECT_NE(std::string::npos, slurp(out).find("train.cpp:10:5: OOM101")) << slurp(out);
  EXPECT_EQ(std::string::npos, slurp(out).find("OOM000")) << slurp(out);
  fs::remove_all(dir);
}

TEST(Cpp, BundledPreludePrecompilesAndChangesNoResult) {
  // The prelude (the stand-in header, standard headers and the warm-up that instantiates what
  // LibTorch files use) is precompiled on the first bundled-mode file; a prelude Clang rejects
  // would silently cost every later file its speed, so its .pch must exist after one run. Every
  // example's findings are the same from the fresh PCH, the reused one, and no PCH at all.
  fs::path dir = tempDir("prelude");
  fs::path pch = dir / "pch";
  fs::path examples = fs::path(OOMLINT_EXAMPLES) / "cpp";
  auto run = [&](const std::string& env, const std::string& name) {
    std::string out = (dir / name).string();
    sh(env + " " + OOMLINT_BINARY + " check --no-cache --select ALL --output-format concise '" + examples.string() +
       "' >'" + out + "' 2>&1");
    return slurp(out);
  };
  std::string fresh = run("OOMLINT_PCH_DIR='" + pch.string() + "'", "fresh.txt");
  std::vector<fs::path> built;
  for (const auto& e : fs::directory_iterator(pch))
    if (e.path().extension() == ".pch") built.push_back(e.path());
  ASSERT_EQ(1u, built.size()) << fresh;
  EXPECT_GT(fs::file_size(built.front()), 1000000u);
  EXPECT_NE(std::string::npos, fresh.find("mnist_classifier.cpp:43:5: OOM101")) << fresh;
  EXPECT_EQ(fresh, run("OOMLINT_PCH_DIR='" + pch.string() + "'", "reused.txt"));
  EXPECT_EQ(fresh, run("OOMLINT_NO_PCH=1", "none.txt"));
  fs::remove_all(dir);
}

TEST(Cpp, PythonOnlyRunsNeverLoadClang) {
  // oomlint itself does not link Clang or LLVM: the front end is a shared object loaded on the
  // first C++ file, so checking Python pays nothing for it.
  std::string log = (fs::temp_directory_path() / ("oomlint_ldd_" + std::to_string(::getpid()))).string();
  ASSERT_EQ(0, sh(std::string("ldd ") + OOMLINT_BINARY + " >'" + log + "' 2>&1"));
  std::string libs = slurp(log);
  EXPECT_EQ(std::string::npos, libs.find("clang")) << libs;
  EXPECT_EQ(std::string::npos, libs.find("LLVM")) << libs;
  fs::remove(log);
}
