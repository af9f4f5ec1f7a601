#include "python/parse_arena.h"

#include <tree_sitter/api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_set>

#if defined(__SANITIZE_ADDRESS__)
#define OOMLINT_ARENA_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OOMLINT_ARENA_ASAN 1
#endif
#endif

#ifdef OOMLINT_ARENA_ASAN
// Under AddressSanitizer a block's bytes stay poisoned until handed out, so reading or writing
// past an allocation (into its padding or unused space) is reported as it is for malloc.
#include <sanitizer/asan_interface.h>
#define OOMLINT_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define OOMLINT_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define OOMLINT_POISON(p, n) ((void)(p), (void)(n))
#define OOMLINT_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace oomlint::python {
namespace {

constexpr size_t kHeader = 16;                // the request's size, for realloc; keeps 16-byte alignment
constexpr size_t kFirstBlock = size_t{1} << 20;
constexpr size_t kLargestBlock = size_t{64} << 20;
constexpr size_t kLargestRequest = size_t{256} << 10;  // bigger requests go to malloc
constexpr int kMaxBlocks = 40;  // 2.2 GiB at most; past that, malloc
int g_blockLimit = kMaxBlocks;   // lowered by tests to reach the fallback
#ifdef OOMLINT_ARENA_ASAN
constexpr size_t kKeepBytes = 0;  // under ASan every block is freed, so a use after the arena ends is caught
#else
constexpr size_t kKeepBytes = size_t{16} << 20;  // kept for the thread's next file
#endif

struct Block {
  char* base;
  size_t size;
};

/// Trivially destructible, so the hooks can still read it while other thread-locals are destroyed.
struct ThreadState {
  Block blocks[kMaxBlocks];
  int count;    // blocks owned
  int current;  // block being carved
  char* next;
  char* end;
  int active;   // nesting depth of ParseArena scopes
  size_t used;
  // What tree-sitter got from malloc inside a scope (requests too large for a block, or all
  // blocks used): parse() never deletes its tree, so whatever tree-sitter has not freed itself by
  // the end of the scope is freed then. A pointer, so the state stays trivially destructible.
  std::unordered_set<void*>* fromMalloc;
};
thread_local ThreadState t;

void releaseBlock(const Block& b) {
  OOMLINT_UNPOISON(b.base, b.size);
  std::free(b.base);
}

/// Frees the thread's blocks when it exits.
struct Releaser {
  ~Releaser() {
    for (int i = 0; i < t.count; ++i) releaseBlock(t.blocks[i]);
    delete t.fromMalloc;
    t.fromMalloc = nullptr;
    t.count = t.current = 0;
    t.next = t.end = nullptr;
  }
};
thread_local Releaser t_releaser;

[[noreturn]] void outOfMemory(size_t n) {
  std::fprintf(stderr, "oomlint: out of memory allocating %zu bytes for the parser\n", n);
  std::abort();
}

bool owns(const void* p) {
  auto* c = static_cast<const char*>(p);
  for (int i = 0; i < t.count; ++i)
    if (c >= t.blocks[i].base && c < t.blocks[i].base + t.blocks[i].size) return true;
  return false;
}

/// Moves carving to a block with room for `need` bytes: the next kept one, or a new one.
bool nextBlock(size_t need) {
  while (t.current + 1 < t.count) {
    ++t.current;
    Block& b = t.blocks[t.current];
    if (b.size >= need) {
      t.next = b.base;
      t.end = b.base + b.size;
      return true;
    }
  }
  if (t.count >= g_blockLimit) return false;
  size_t size = t.count == 0 ? kFirstBlock : std::min(kLargestBlock, t.blocks[t.count - 1].size * 2);
  if (size < need) size = need;
  auto* base = static_cast<char*>(std::malloc(size));
  if (!base) return false;
  OOMLINT_POISON(base, size);
  (void)&t_releaser;  // registers the thread's releaser
  t.blocks[t.count] = {base, size};
  t.current = t.count++;
  t.next = base;
  t.end = base + size;
  return true;
}

void* carve(size_t n) {
  if (t.active == 0 || n > kLargestRequest) return nullptr;
  size_t need = (n + kHeader + 15) & ~size_t{15};
  if (static_cast<size_t>(t.end - t.next) < need && !nextBlock(need)) return nullptr;
  char* p = t.next;
  t.next += need;
  t.used += need;
  OOMLINT_UNPOISON(p, kHeader + n);
  std::memcpy(p, &n, sizeof n);
  return p + kHeader;
}

size_t sizeOf(const void* p) {
  size_t n;
  std::memcpy(&n, static_cast<const char*>(p) - kHeader, sizeof n);
  return n;
}

/// Remembers a malloc'd pointer handed out inside a scope.
void* tracked(void* p) {
  if (t.active && p) {
    (void)&t_releaser;
    if (!t.fromMalloc) t.fromMalloc = new std::unordered_set<void*>;
    t.fromMalloc->insert(p);
  }
  return p;
}

void untrack(void* p) {
  if (t.fromMalloc && !t.fromMalloc->empty()) t.fromMalloc->erase(p);
}

void* hookMalloc(size_t n) {
  if (void* p = carve(n)) return p;
  void* p = std::malloc(n);
  if (!p && n) outOfMemory(n);
  return tracked(p);
}

void* hookCalloc(size_t count, size_t size) {
  if (size && count > SIZE_MAX / size) outOfMemory(SIZE_MAX);
  if (void* p = carve(count * size)) return std::memset(p, 0, count * size);
  void* p = std::calloc(count, size);
  if (!p && count != 0 && size != 0) outOfMemory(count * size);
  return tracked(p);
}

void* hookRealloc(void* p, size_t n) {
  if (!p) return hookMalloc(n);
  if (!owns(p)) {
    bool wasTracked = t.fromMalloc && t.fromMalloc->count(p) > 0;
    void* q = std::realloc(p, n);
    if (!q && n) outOfMemory(n);
    if (wasTracked && q != p) {
      t.fromMalloc->erase(p);
      t.fromMalloc->insert(q);
    }
    return q;
  }
  size_t old = sizeOf(p);
  if (n <= old) return p;
  // The last allocation of the current block grows in place (tree-sitter's arrays grow this way).
  char* start = static_cast<char*>(p) - kHeader;
  size_t oldNeed = (old + kHeader + 15) & ~size_t{15};
  size_t newNeed = (n + kHeader + 15) & ~size_t{15};
  if (t.active && n <= kLargestRequest && start + oldNeed == t.next && static_cast<size_t>(t.end - start) >= newNeed) {
    t.next = start + newNeed;
    t.used += newNeed - oldNeed;
    OOMLINT_UNPOISON(start, kHeader + n);
    std::memcpy(start, &n, sizeof n);
    return p;
  }
  void* q = hookMalloc(n);
  std::memcpy(q, p, old);
  return q;
}

void hookFree(void* p) {
  if (!p || owns(p)) return;  // arena memory goes back when the arena ends
  untrack(p);
  std::free(p);
}

}  // namespace

void ParseArena::installHooks() {
  static std::once_flag once;
  std::call_once(once, [] { ts_set_allocator(hookMalloc, hookCalloc, hookRealloc, hookFree); });
}

ParseArena::ParseArena() {
  installHooks();
  if (t.active++ == 0 && t.count > 0) {
    t.current = 0;
    t.next = t.blocks[0].base;
    t.end = t.blocks[0].base + t.blocks[0].size;
  }
}

ParseArena::~ParseArena() {
  if (--t.active > 0) return;
  t.used = 0;
  if (t.fromMalloc) {
    for (void* p : *t.fromMalloc) std::free(p);
    t.fromMalloc->clear();
  }
  // Keep the first blocks for the next file, up to kKeepBytes; give the rest back.
  size_t kept = 0;
  int keep = 0;
  while (keep < t.count && kept + t.blocks[keep].size <= kKeepBytes) kept += t.blocks[keep++].size;
  for (int i = keep; i < t.count; ++i) releaseBlock(t.blocks[i]);
  t.count = keep;
  t.current = 0;
  t.next = keep ? t.blocks[0].base : nullptr;
  t.end = keep ? t.blocks[0].base + t.blocks[0].size : nullptr;
}

size_t ParseArena::bytesInUse() { return t.active ? t.used : 0; }

size_t ParseArena::mallocBlocksLive() { return t.fromMalloc ? t.fromMalloc->size() : 0; }

void ParseArena::limitBlocksForTesting(int blocks) {
  g_blockLimit = blocks > 0 && blocks < kMaxBlocks ? blocks : kMaxBlocks;
  if (t.active) return;
  while (t.count > g_blockLimit) releaseBlock(t.blocks[--t.count]);  // the calling thread's kept ones
}

}  // namespace oomlint::python
