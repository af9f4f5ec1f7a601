#pragma once
// Small helpers shared by the integration tests.

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "engine/engine.h"
#include "test_paths.h"

namespace testutil {

/// Options that select every rule, off-by-default ones included, so no rule hides behind its default.
inline oomlint::CheckOptions everyRule() {
  oomlint::SelectorSet s;
  s.select = {"ALL"};
  s.selectGiven = true;
  oomlint::CheckOptions o;
  o.selection = oomlint::RuleSelection(s);
  return o;
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void spit(const std::filesystem::path& p, const std::string& s) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out << s;
}

/// Runs a shell command; its exit status, or -1 when it did not exit normally.
inline int sh(const std::string& cmd) {
  int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// A training loop that accumulates the loss with its graph: one OOM101 on line 10, column 9.
inline const char* kLeaky =
    "import torch\n"
    "\n"
    "def train(model, loader, optimizer, criterion):\n"
    "    total = 0\n"
    "    for x, y in loader:\n"
    "        optimizer.zero_grad()\n"
    "        loss = criterion(model(x), y)\n"
    "        loss.backward()\n"
    "        optimizer.step()\n"
    "        total += loss\n"
    "    return total\n";

}  // namespace testutil
