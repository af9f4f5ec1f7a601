#pragma once
// Helpers of the static-estimate tests (estimates_test.cpp, estimates_h200_test.cpp).
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "engine/engine.h"
#include "test_paths.h"

namespace estimates_test {

inline const std::string kRoot = OOMLINT_SOURCE;

inline const char* const kHead =
    "import torch\n"
    "from torch import nn\n"
    "import torch.nn.functional as F\n";

inline const oomlint::Finding* findingWith(const oomlint::FileResult& r, std::string_view code) {
  for (const oomlint::Finding& f : r.findings)
    if (f.code == code) return &f;
  return nullptr;
}

inline oomlint::FileResult check(const std::string& source) {
  return oomlint::checkSource("estimate_case.py", source, oomlint::CheckOptions{});
}

/// The estimate of the only finding of `code` in `source`; fails the test when there is no finding.
inline oomlint::EstimatedCost estimateOf(const std::string& source, std::string_view code) {
  oomlint::FileResult r = check(source);
  const oomlint::Finding* f = findingWith(r, code);
  EXPECT_NE(nullptr, f) << "no " << code << " in:\n" << source;
  return f ? f->estimated : oomlint::EstimatedCost{};
}

}  // namespace estimates_test
