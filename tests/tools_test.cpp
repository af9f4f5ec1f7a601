// Real clients and tools: Neovim's built-in LSP client, the pre-commit framework, the Debian
// package built with CPack.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "test_util.h"
#include "version.h"

namespace fs = std::filesystem;

using testutil::kLeaky;
using testutil::sh;
using testutil::slurp;
using testutil::spit;

namespace {

class Tools : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("oomlint_tools_" + std::to_string(::getpid()) + "_" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  fs::path dir;
};

std::string binDir() { return fs::path(OOMLINT_BINARY).parent_path().string(); }

}  // namespace

TEST_F(Tools, NeovimReceivesDiagnosticsFromTheServer) {
  ASSERT_EQ(0, sh("command -v nvim >/dev/null")) << "neovim is installed by scripts/setup.sh";
  { std::ofstream(dir / "train.py") << kLeaky; }
  {
    std::ofstream lua(dir / "client.lua");
    lua << "local id = vim.lsp.start_client({ name = 'oomlint', cmd = { os.getenv('OOMLINT'), 'server' }, root_dir = '"
        << dir.string() << "' })\n"
           "vim.lsp.buf_attach_client(0, id)\n"
           "vim.wait(20000, function() return #vim.diagnostic.get(0) > 0 end, 50)\n"
           "local out = {}\n"
           "for _, d in ipairs(vim.diagnostic.get(0)) do\n"
           "  local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code) or '?'\n"
           "  table.insert(out, code .. ' ' .. d.lnum .. ' ' .. d.source)\n"
           "end\n"
           "vim.fn.writefile(out, os.getenv('OUT_FILE'))\n"
           "vim.cmd('qa!')\n";
  }
  std::string cmd = "cd '" + dir.string() + "' && OOMLINT='" + std::string(OOMLINT_BINARY) + "' OUT_FILE='" + (dir / "out.txt").string() +
                    "' timeout 60 nvim --headless -u NONE -i NONE -n -c 'luafile client.lua' train.py >/dev/null 2>&1";
  sh(cmd);
  std::string out = slurp(dir / "out.txt");
  EXPECT_NE(std::string::npos, out.find("OOM101 9 oomlint")) << out;
}

TEST_F(Tools, PreCommitHookFailsOnLeakPassesOnCleanAndSkipsOtherFiles) {
  ASSERT_EQ(0, sh("command -v pre-commit >/dev/null")) << "pre-commit is installed by scripts/setup.sh";
  std::string env = "cd '" + dir.string() + "' && export PATH='" + binDir() + "':$PATH PRE_COMMIT_HOME='" + (dir / ".cache").string() +
                    "' GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t && ";
  ASSERT_EQ(0, sh(env + "git init -q . && git config user.email t@t && git config user.name t"));
  { std::ofstream(dir / "leaky.py") << kLeaky; }
  std::string clean = kLeaky;
  clean.replace(clean.find("total += loss\n"), 14, "total += loss.item()\n");
  { std::ofstream(dir / "clean.py") << clean; }
  { std::ofstream(dir / "notes.txt") << "hello\n"; }
  std::string tryRepo = "pre-commit try-repo '" + std::string(OOMLINT_SOURCE) + "' oomlint --verbose ";
  ASSERT_EQ(0, sh(env + "git add leaky.py"));
  EXPECT_NE(0, sh(env + tryRepo + "> out1.txt 2>&1")) << slurp(dir / "out1.txt");
  EXPECT_NE(std::string::npos, slurp(dir / "out1.txt").find("OOM101")) << slurp(dir / "out1.txt");
  ASSERT_EQ(0, sh(env + "git rm -q --cached leaky.py && git add clean.py"));
  EXPECT_EQ(0, sh(env + tryRepo + "> out2.txt 2>&1")) << slurp(dir / "out2.txt");
  ASSERT_EQ(0, sh(env + "git rm -q --cached clean.py && git add notes.txt"));
  EXPECT_EQ(0, sh(env + tryRepo + "> out3.txt 2>&1")) << slurp(dir / "out3.txt");
  EXPECT_NE(std::string::npos, slurp(dir / "out3.txt").find("no files to check")) << slurp(dir / "out3.txt");
}

TEST_F(Tools, VersionHasOneSource) {
  // CMakeLists.txt's project version is what --version says, and CHANGELOG.md's newest release.
  std::string cmake = slurp(fs::path(OOMLINT_SOURCE_DIR) / "CMakeLists.txt");
  size_t at = cmake.find("project(oomlint VERSION ");
  ASSERT_NE(std::string::npos, at);
  std::string version = cmake.substr(at + 24, cmake.find(' ', at + 24) - at - 24);
  EXPECT_EQ(std::string(OOMLINT_VERSION), version);
  std::string changelog = slurp(fs::path(OOMLINT_SOURCE_DIR) / "CHANGELOG.md");
  size_t release = std::string::npos;
  for (size_t p = changelog.find("\n## "); p != std::string::npos; p = changelog.find("\n## ", p + 1))
    if (std::isdigit(static_cast<unsigned char>(changelog[p + 4]))) {
      release = p + 4;
      break;
    }
  ASSERT_NE(std::string::npos, release) << "CHANGELOG.md names no release";
  EXPECT_EQ(version, changelog.substr(release, changelog.find('\n', release) - release));
  ASSERT_EQ(0, sh(std::string(OOMLINT_BINARY) + " --version > '" + (dir / "short.txt").string() + "'"));
  EXPECT_EQ("oomlint " + version + "\n", slurp(dir / "short.txt"));
  ASSERT_EQ(0, sh(std::string(OOMLINT_BINARY) + " version > '" + (dir / "long.txt").string() + "'"));
  std::string long_ = slurp(dir / "long.txt");
  EXPECT_EQ(0u, long_.find("oomlint " + version + "\nLicense: MIT")) << long_;
  EXPECT_NE(std::string::npos, long_.find("LibTorch C++: yes")) << long_;
  EXPECT_EQ(0u, slurp(fs::path(OOMLINT_SOURCE_DIR) / "LICENSE").find("MIT License"));
  // What is published with a release names the same version: the self-installing hook's pin and
  // the GitHub action's default.
  std::string hook = slurp(fs::path(OOMLINT_SOURCE_DIR) / "packaging/pre-commit/pyproject.toml");
  EXPECT_NE(std::string::npos, hook.find("\"oomlint==" + version + "\"")) << hook;
  EXPECT_NE(std::string::npos, hook.find("version = \"" + version + "\"")) << hook;
}

TEST_F(Tools, DebianPackageContainsAWorkingOomlint) {
  ASSERT_EQ(0, sh("command -v cpack >/dev/null && command -v dpkg-deb >/dev/null"));
  std::string build = fs::path(OOMLINT_BINARY).parent_path().string();
  ASSERT_EQ(0, sh("cd '" + build + "' && cpack -G DEB -B '" + dir.string() + "' > '" + (dir / "cpack.log").string() + "' 2>&1"))
      << slurp(dir / "cpack.log");
  std::string deb;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".deb") deb = e.path().string();
  ASSERT_FALSE(deb.empty()) << slurp(dir / "cpack.log");
  ASSERT_EQ(0, sh("dpkg-deb -x '" + deb + "' '" + (dir / "root").string() + "'"));
  EXPECT_EQ(0, sh("'" + (dir / "root/usr/bin/oomlint").string() + "' --version > '" + (dir / "v.txt").string() + "'"));
  EXPECT_EQ(0u, slurp(dir / "v.txt").find("oomlint 0."));
  EXPECT_TRUE(fs::exists(dir / "root/usr/share/bash-completion/completions/oomlint"));
  EXPECT_EQ(0u, slurp(dir / "root/usr/share/doc/oomlint/copyright").find("MIT License")) << "the license ships";
  EXPECT_TRUE(fs::exists(dir / "root/usr/share/doc/oomlint/CHANGELOG.md"));
  ASSERT_EQ(0, sh("dpkg-deb -f '" + deb + "' Depends > '" + (dir / "deps.txt").string() + "'"));
  EXPECT_NE(std::string::npos, slurp(dir / "deps.txt").find("libc6")) << slurp(dir / "deps.txt");
  // The executable links tree-sitter in (start-up), and, outside sanitized builds, toml++,
  // libstdc++ and libgcc too: glibc's libraries only.
  ASSERT_EQ(0, sh("ldd '" + (dir / "root/usr/bin/oomlint").string() + "' > '" + (dir / "ldd-exe.txt").string() + "'"));
  std::vector<const char*> linkedIn = {"libtree-sitter"};
#ifdef OOMLINT_STATIC_LIBSTDCXX  // sanitized builds keep toml++ and libstdc++ shared (CMakeLists.txt)
  linkedIn.insert(linkedIn.end(), {"libtomlplusplus", "libstdc++", "libgcc_s"});
#endif
  for (const char* lib : linkedIn) EXPECT_EQ(std::string::npos, slurp(dir / "ldd-exe.txt").find(lib)) << slurp(dir / "ldd-exe.txt");
  // The C++ front end ships in the package and is found from the installed layout. Clang and
  // LLVM are linked into it statically; Clang's builtin headers (stddef.h ...) are a declared
  // dependency.
  EXPECT_NE(std::string::npos, slurp(dir / "deps.txt").find("libclang-common-14-dev")) << slurp(dir / "deps.txt");
  ASSERT_TRUE(fs::exists(dir / "root/usr/lib/oomlint/liboomlint-cpp.so"));
  ASSERT_EQ(0, sh("ldd '" + (dir / "root/usr/lib/oomlint/liboomlint-cpp.so").string() + "' > '" + (dir / "ldd.txt").string() + "'"));
  EXPECT_EQ(std::string::npos, slurp(dir / "ldd.txt").find("not found")) << slurp(dir / "ldd.txt");
  EXPECT_EQ(std::string::npos, slurp(dir / "ldd.txt").find("libLLVM")) << slurp(dir / "ldd.txt");
  spit(dir / "work" / "train.cpp",
       "#include <torch/torch.h>\n#include <vector>\n"
       "double f(torch::nn::Linear& m, torch::optim::SGD& o, std::vector<torch::Tensor>& xs) {\n"
       "  torch::Tensor total = torch::zeros({1});\n"
       "  for (auto& x : xs) {\n    o.zero_grad();\n    auto loss = m(x).sum();\n    loss.backward();\n    o.step();\n"
       "    total += loss;\n  }\n  return total.item<double>();\n}\n");
  EXPECT_EQ(1, sh("cd '" + (dir / "work").string() + "' && '" + (dir / "root/usr/bin/oomlint").string() +
                  "' check --no-cache --output-format concise train.cpp > '" + (dir / "cpp.txt").string() + "' 2>&1"));
  EXPECT_NE(std::string::npos, slurp(dir / "cpp.txt").find("train.cpp:10:5: OOM101")) << slurp(dir / "cpp.txt");
  // Installable: apt resolves every declared dependency for the .deb (simulated, nothing changes).
  EXPECT_EQ(0, sh("apt-get install --simulate --no-install-recommends '" + deb + "' > '" + (dir / "apt.txt").string() + "' 2>&1"))
      << slurp(dir / "apt.txt");
}

TEST_F(Tools, PreCommitHookChecksNotebooks) {
  ASSERT_EQ(0, sh("command -v pre-commit >/dev/null")) << "pre-commit is installed by scripts/setup.sh";
  std::string env = "cd '" + dir.string() + "' && export PATH='" + binDir() + "':$PATH PRE_COMMIT_HOME='" + (dir / ".cache").string() +
                    "' GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t && ";
  ASSERT_EQ(0, sh(env + "git init -q . && git config user.email t@t && git config user.name t"));
  fs::copy_file(fs::path(OOMLINT_SOURCE) / "examples" / "notebooks" / "train.ipynb", dir / "train.ipynb");
  std::string tryRepo = "pre-commit try-repo '" + std::string(OOMLINT_SOURCE) + "' oomlint --verbose ";
  ASSERT_EQ(0, sh(env + "git add train.ipynb"));
  EXPECT_NE(0, sh(env + tryRepo + "> out.txt 2>&1")) << slurp(dir / "out.txt");
  EXPECT_NE(std::string::npos, slurp(dir / "out.txt").find("train.ipynb:cell 8:11:9: OOM101")) << slurp(dir / "out.txt");
}

TEST_F(Tools, GithubWorkflowsAndTheActionMatchGithubsSchemas) {
  // They cannot run here; action-validator holds them to GitHub's workflow and action schemas,
  // and a broken copy shows it rejects what GitHub would.
  std::string validator = "node '" + std::string(OOMLINT_ACTION_VALIDATOR) + "' ";
  ASSERT_EQ(0, sh("test -f '" + std::string(OOMLINT_ACTION_VALIDATOR) + "'")) << "scripts/fetch-deps.sh fetches action-validator";
  fs::path src(OOMLINT_SOURCE);
  for (const char* file : {".github/workflows/ci.yml", ".github/workflows/release.yml", "action.yml"}) {
    fs::path log = dir / "log.txt";
    EXPECT_EQ(0, sh(validator + "'" + (src / file).string() + "' > '" + log.string() + "' 2>&1")) << file << "\n" << slurp(log);
  }
  std::string ci = slurp(src / ".github/workflows/ci.yml");
  EXPECT_NE(std::string::npos, ci.find("bash .ci/run")) << "CI runs the README's test command";
  std::string broken = ci;
  broken.replace(broken.find("runs-on:"), 8, "run-on:");
  spit(dir / "broken.yml", broken);
  EXPECT_NE(0, sh(validator + "'" + (dir / "broken.yml").string() + "' > /dev/null 2>&1"));
  std::string action = slurp(src / "action.yml");
  EXPECT_NE(std::string::npos, action.find("default: \"" + std::string(OOMLINT_VERSION) + "\"")) << "the action installs its own version";
}

#ifdef OOMLINT_WITH_JEMALLOC
// The executable allocates with the jemalloc it links in, set to back memory with huge pages
// (analyzer/util/allocator.c): jemalloc confirms each option it read, and from where.
TEST_F(Tools, TheExecutableAllocatesWithJemallocOnHugePages) {
  std::string err = (dir / "conf.txt").string();
  int status = std::system(("MALLOC_CONF=confirm_conf:true '" + std::string(OOMLINT_BINARY) + "' --version >/dev/null 2>'" + err + "'").c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  std::string said = slurp(err);
  EXPECT_NE(said.find("global variable malloc_conf): \"thp:always,metadata_thp:always\""), std::string::npos) << said;
  EXPECT_NE(said.find("Set conf value: thp:always"), std::string::npos) << said;
  EXPECT_NE(said.find("Set conf value: metadata_thp:always"), std::string::npos) << said;
}
#endif
