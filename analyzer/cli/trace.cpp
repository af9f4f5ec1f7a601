#include "cli/trace.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>

#include "model/model.h"
#include "python/frontend.h"
#include "trace/analysis.h"
#include "trace/join.h"
#include "trace/render.h"
#include "trace/trace.h"
#include "util/executable.h"

extern char** environ;

namespace oomlint {
namespace {


bool isFile(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool isDir(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

/// The bootstrap: OOMLINT_TRACE_BOOTSTRAP, then beside a build tree's binary (python/), then an
/// installed one's (../lib/oomlint/python/).
std::string locateBootstrap() {
  if (const char* env = std::getenv("OOMLINT_TRACE_BOOTSTRAP"); env && *env) return isFile(env) ? env : "";
  return shippedPythonFile("oomlint/trace.py");
}

/// Python's options that take a value as the next argument.
bool takesValue(const std::string& opt) { return opt == "-W" || opt == "-X" || opt == "--check-hash-based-pycs"; }

/// `python [OPTS] SCRIPT ARGS` -> `python [OPTS] BOOTSTRAP SCRIPT ARGS` (also `-m MODULE`).
/// Empty with `why` set when the command is not one trace can run.
std::vector<std::string> wrapCommand(const std::vector<std::string>& cmd, const std::string& bootstrap, std::string& why) {
  if (cmd.empty()) {
    why = "give the program to run after `--`: oomlint trace -- python train.py";
    return {};
  }
  std::string exe = cmd[0].substr(cmd[0].rfind('/') + 1);
  if (exe.rfind("python", 0) != 0) {
    if (exe.size() > 3 && exe.compare(exe.size() - 3, 3, ".py") == 0) {
      why = "run a Python script through python: oomlint trace -- python " + cmd[0];
      return {};
    }
    return cmd;  // a LibTorch program: it records through oomlint/trace.h, which reads OOMLINT_TRACE_*
  }
  std::vector<std::string> out{cmd[0]};
  size_t i = 1;
  for (; i < cmd.size(); ++i) {
    const std::string& a = cmd[i];
    if (a == "-c" || a == "-") {
      why = "trace runs a script or `-m MODULE`, not `python " + a + "`";
      return {};
    }
    if (a == "-m" || a.empty() || a[0] != '-') break;
    out.push_back(a);
    if (takesValue(a) && i + 1 < cmd.size()) out.push_back(cmd[++i]);
  }
  if (i == cmd.size()) {
    why = "no script or -m MODULE in the command";
    return {};
  }
  out.push_back(bootstrap);
  out.insert(out.end(), cmd.begin() + static_cast<long>(i), cmd.end());
  return out;
}

/// Runs `argv` with `env` added, waits, and returns its exit status (128+signal when killed).
/// Interrupts reach the program only: the trace still has to be reported after it stops.
int runProgram(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  struct sigaction ignore {}, oldInt {}, oldQuit {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGINT, &ignore, &oldInt);
  ::sigaction(SIGQUIT, &ignore, &oldQuit);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::sigaction(SIGINT, &oldInt, nullptr);
    ::sigaction(SIGQUIT, &oldQuit, nullptr);
    for (const std::string& e : env) ::putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    std::fprintf(stderr, "oomlint trace: cannot run %s: %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
  int status = 0;
  if (pid > 0)
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  ::sigaction(SIGINT, &oldInt, nullptr);
  ::sigaction(SIGQUIT, &oldQuit, nullptr);
  if (pid < 0) return 127;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

/// Runs `argv` in `cwd` and returns what it printed on standard output (stderr is dropped).
bool capture(const std::vector<std::string>& argv, const std::string& cwd, std::string& out, int& status) {
  int fds[2];
  if (::pipe(fds) != 0) return false;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], 1);
    int devnull = ::open("/dev/null", O_WRONLY);
    if (devnull >= 0) ::dup2(devnull, 2);
    ::close(fds[0]);
    ::close(fds[1]);
    if (::chdir(cwd.c_str()) != 0) ::_exit(127);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  if (pid < 0) {
    ::close(fds[0]);
    return false;
  }
  char buf[65536];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) out.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return true;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// The first and last line of every loop in a Python file (none for a C++ file: its findings
/// join through their lines and evidence).
std::vector<std::pair<uint32_t, uint32_t>> loopLines(const std::string& path) {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  if (path.size() < 3 || path.compare(path.size() - 3, 3, ".py") != 0 || !isFile(path)) return out;
  auto module = python::parse(path, readFile(path));
  for (const Stmt& s : module->stmts)
    if (s.kind == StmtKind::For || s.kind == StmtKind::While) out.push_back({s.span.line, s.span.endLine});
  return out;
}

/// `check`'s findings in the program's own files of the trace, read from `root`.
std::vector<trace::StaticFinding> checkFiles(const trace::Trace& t, const TraceArgs& args, const std::string& root,
                                             std::string& note) {
  std::set<uint32_t> used;
  for (const trace::Frame& f : t.frames) used.insert(f.file);
  std::vector<std::string> files;
  size_t missing = 0;
  for (uint32_t id : used) {
    const trace::SourceFile& f = t.files[id];
    if (!f.user) continue;
    std::string full = f.path[0] == '/' ? f.path : root + "/" + f.path;
    if (isFile(full))
      files.push_back(f.path);
    else
      ++missing;
  }
  if (missing) note = std::to_string(missing) + " of the run's files are not under " + root + " (--root)";
  if (files.empty()) return {};
  std::vector<std::string> argv{executablePath(), "check", "--output-format", "json", "--exit-zero", "--no-fix"};
  if (!args.config.empty()) argv.insert(argv.end(), {"--config", args.config});
  argv.insert(argv.end(), files.begin(), files.end());
  std::string out;
  int status = 0;
  if (!capture(argv, root, out, status) || !WIFEXITED(status) || WEXITSTATUS(status) > 1) {
    note = "oomlint check failed on the run's files";
    return {};
  }
  try {
    return trace::parseFindings(out);
  } catch (const trace::TraceError& e) {
    note = e.what();
    return {};
  }
}

int report(const TraceArgs& args, const std::string& path, int programStatus) {
  trace::Trace t;
  try {
    t = trace::readTraceFile(path);
  } catch (const trace::TraceError& e) {
    std::cerr << "oomlint trace: " << path << ": " << e.what() << "\n";
    return programStatus ? programStatus : 2;
  }
  trace::Analysis a = trace::analyze(t);
  std::string root = !args.root.empty() ? args.root : isDir(t.run.cwd) ? t.run.cwd : std::string(".");
  std::vector<trace::StaticFinding> findings;
  std::string note = args.noCheck ? "--no-check" : "";
  if (!args.noCheck) findings = checkFiles(t, args, root, note);
  auto loops = [&](const std::string& file) { return loopLines(file[0] == '/' ? file : root + "/" + file); };
  trace::Join j = trace::join(t, a, findings, loops);
  trace::ReportInput in{t, a, findings, j, note};
  std::string text = args.format == "json" ? trace::renderJson(in) : args.format == "svg" ? trace::renderSvg(in) : trace::renderText(in);
  if (args.outputFile.empty()) {
    std::cout << text;
  } else {
    std::ofstream out(args.outputFile, std::ios::binary);
    out << text;
    if (!out) {
      std::cerr << "oomlint trace: cannot write " << args.outputFile << "\n";
      return 2;
    }
  }
  if (programStatus) return programStatus;
  if (!args.failOnGrowth.empty()) {
    int64_t limit = parseByteSize(args.failOnGrowth);
    if (a.slopeKnown && a.slopeAllocated > static_cast<double>(limit)) {
      std::cerr << "oomlint trace: growth " << trace::perStep(a.slopeAllocated) << " is above --fail-on-growth "
                << args.failOnGrowth << "\n";
      return 1;
    }
  }
  return 0;
}

}  // namespace

int64_t parseByteSize(const std::string& text) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !(v >= 0) || !std::isfinite(v)) return -1;
  std::string unit(end);
  while (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
  double scale = 0;
  if (unit.empty() || unit == "B") scale = 1;
  else if (unit == "K" || unit == "KiB" || unit == "KB") scale = 1024.0;
  else if (unit == "M" || unit == "MiB" || unit == "MB") scale = 1024.0 * 1024;
  else if (unit == "G" || unit == "GiB" || unit == "GB") scale = 1024.0 * 1024 * 1024;
  if (scale == 0 || v * scale > 9e18) return -1;
  return static_cast<int64_t>(std::llround(v * scale));
}

int runTrace(const TraceArgs& args) {
  if (args.format != "text" && args.format != "json" && args.format != "svg") {
    std::cerr << "oomlint trace: --output-format is text, json or svg\n";
    return 2;
  }
  if (!args.failOnGrowth.empty() && parseByteSize(args.failOnGrowth) < 0) {
    std::cerr << "oomlint trace: --fail-on-growth takes a size in bytes (1048576, 512KiB, 1MiB)\n";
    return 2;
  }
  if (!args.report.empty()) {
    if (!args.command.empty()) {
      std::cerr << "oomlint trace: --report reads a saved trace; it runs no command\n";
      return 2;
    }
    return report(args, args.report, 0);
  }
  std::string why;
  std::string bootstrap = locateBootstrap();
  std::vector<std::string> argv = wrapCommand(args.command, bootstrap.empty() ? "-" : bootstrap, why);
  if (argv.empty()) {
    std::cerr << "oomlint trace: " << why << "\n";
    return 2;
  }
  const bool python = argv != args.command;
  if (python && bootstrap.empty()) {
    std::cerr << "oomlint trace: the Python bootstrap (oomlint/trace.py) is not installed beside this oomlint\n";
    return 2;
  }
  char cwd[4096];
  std::string output = args.traceFile;
  if (output.empty() || output[0] != '/') output = std::string(::getcwd(cwd, sizeof cwd) ? cwd : ".") + "/" + output;
  ::unlink(output.c_str());
  std::vector<std::string> env{"OOMLINT_TRACE_OUTPUT=" + output, "OOMLINT_TRACE_FRAMES=" + std::string(args.cppFrames ? "all" : "python"),
                               "OOMLINT_TRACE_MAX_EVENTS=" + std::to_string(args.maxEvents)};
  if (args.steps > 0) env.push_back("OOMLINT_TRACE_STEPS=" + std::to_string(args.steps));
  if (!args.device.empty()) env.push_back("OOMLINT_TRACE_DEVICE=" + args.device);
  int status = runProgram(argv, env);
  if (!isFile(output)) {
    if (status == 0 && python) std::cerr << "oomlint trace: the program wrote no trace (" << output << ")\n";
    if (status == 0 && !python)
      std::cerr << "oomlint trace: " << args.command[0] << " wrote no trace (" << output
                << "): a C++ program records through oomlint/trace.h, with oomlint::trace::start() in main\n";
    return status ? status : 2;
  }
  return report(args, output, status);
}

}  // namespace oomlint
