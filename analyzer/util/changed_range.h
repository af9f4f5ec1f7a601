#pragma once
/// Where two versions of a text differ, as the lengths of their common prefix and suffix: how the
/// LSP server turns a notebook's re-joined cells into one edit of its module. Compared a block at a
/// time with memcmp, since the module of a long notebook is ~100 KB and an edit changes a few bytes.

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string_view>

namespace oomlint {

struct ChangedRange {
  size_t prefix = 0;  // bytes equal at the start of both
  size_t suffix = 0;  // bytes equal at the end of both, not overlapping the prefix in either
};

inline ChangedRange changedRange(std::string_view before, std::string_view after) {
  constexpr size_t kBlock = 256;
  ChangedRange r;
  const size_t shorter = std::min(before.size(), after.size());
  while (r.prefix + kBlock <= shorter && std::memcmp(before.data() + r.prefix, after.data() + r.prefix, kBlock) == 0) r.prefix += kBlock;
  while (r.prefix < shorter && before[r.prefix] == after[r.prefix]) ++r.prefix;
  const size_t room = shorter - r.prefix;
  while (r.suffix + kBlock <= room &&
         std::memcmp(before.data() + before.size() - r.suffix - kBlock, after.data() + after.size() - r.suffix - kBlock, kBlock) == 0)
    r.suffix += kBlock;
  while (r.suffix < room && before[before.size() - 1 - r.suffix] == after[after.size() - 1 - r.suffix]) ++r.suffix;
  return r;
}

}  // namespace oomlint
