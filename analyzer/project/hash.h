#pragma once
/// The hashes that tell whether what a module exports, or an answer a module was given, changed:
/// fixed functions (FNV-1a for text), the same in every build, since they are stored in the cache.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "facts/facts.h"

namespace oomlint::project {

inline uint64_t mix(uint64_t h, uint64_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }

inline uint64_t mix(uint64_t h, std::string_view s) {
  uint64_t x = 1469598103934665603ULL;
  for (unsigned char c : s) x = (x ^ c) * 1099511628211ULL;
  return mix(h, x);
}

/// What a caller can learn of a function: its summary, its parameters, whether it is a method.
inline uint64_t summaryHash(const Summary& s, const std::vector<std::string>& params, bool method) {
  auto value = [](const ValueFact& v) {
    uint64_t bits = static_cast<uint64_t>(v.history) | static_cast<uint64_t>(v.device) << 4 | static_cast<uint64_t>(v.scalarLoss) << 8 |
                    static_cast<uint64_t>(v.collection) << 9 | static_cast<uint64_t>(v.lossElems) << 10 |
                    static_cast<uint64_t>(v.params) << 20;
    return bits ^ static_cast<uint64_t>(v.devParams) * 0x9E3779B97F4A7C15ull;
  };
  uint64_t h = mix(0, value(s.returns) | static_cast<uint64_t>(s.returnsModule) << 9 | static_cast<uint64_t>(s.events) << 10 |
                          static_cast<uint64_t>(method) << 18 | static_cast<uint64_t>(s.returnsLoader) << 19 |
                          static_cast<uint64_t>(s.raisesOnly) << 52);
  for (const ValueFact& v : s.returnElems) h = mix(h, value(v));
  for (uint8_t e : s.eventOrder) h = mix(h, e);
  h = mix(mix(mix(h, s.accumulatesParam), s.storesParam), s.assignsParam);
  h = mix(mix(h, static_cast<uint64_t>(s.softmaxOfParam + 1)), s.backwardParams);
  for (const Summary::StoreInto& k : s.storesParamInto) h = mix(h, static_cast<uint64_t>(k.element) << 16 | static_cast<uint64_t>(k.value) << 8 | k.into);
  for (const std::string& p : params) h = mix(h, p);
  return h;
}

}  // namespace oomlint::project
