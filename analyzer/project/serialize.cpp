// One record per line, fields separated by tabs, lists by commas: names never hold either.
#include "project/serialize.h"

#include <charconv>
#include <type_traits>

namespace oomlint::project {

namespace {

void joinTo(std::string& out, const std::vector<std::string>& items) {
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    out += items[i];
  }
}

std::vector<std::string> splitList(std::string_view s) {
  std::vector<std::string> out;
  while (!s.empty()) {
    size_t c = s.find(',');
    out.emplace_back(s.substr(0, c));
    if (c == std::string_view::npos) break;
    s.remove_prefix(c + 1);
  }
  return out;
}

std::vector<std::string_view> fields(std::string_view line) {
  std::vector<std::string_view> out;
  for (;;) {
    size_t t = line.find('\t');
    out.push_back(line.substr(0, t));
    if (t == std::string_view::npos) break;
    line.remove_prefix(t + 1);
  }
  return out;
}

bool number(std::string_view s, uint64_t& v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size();
}

bool numbers(std::string_view s, std::vector<uint64_t>& out) {
  out.clear();
  while (!s.empty()) {
    size_t sp = s.find(' ');
    uint64_t v = 0;
    if (!number(s.substr(0, sp), v)) return false;
    out.push_back(v);
    if (sp == std::string_view::npos) break;
    s.remove_prefix(sp + 1);
  }
  return true;
}

uint64_t valueBits(const ValueFact& v) {
  return static_cast<uint64_t>(v.history) | static_cast<uint64_t>(v.device) << 2 | static_cast<uint64_t>(v.scalarLoss) << 4 |
         static_cast<uint64_t>(v.accumulated) << 5 | static_cast<uint64_t>(v.collection) << 6 | static_cast<uint64_t>(v.lossElems) << 7 |
         static_cast<uint64_t>(v.params) << 8 |
         static_cast<uint64_t>(v.devParams & 0xffffffu) << 40;
}

ValueFact valueFrom(uint64_t b) {
  ValueFact v;
  v.history = static_cast<Tri>(b & 3);
  v.device = static_cast<Tri>((b >> 2) & 3);
  v.scalarLoss = (b >> 4) & 1;
  v.accumulated = (b >> 5) & 1;
  v.collection = (b >> 6) & 1;
  v.lossElems = (b >> 7) & 1;
  v.params = static_cast<uint32_t>(b >> 8);
  v.devParams = static_cast<uint32_t>(b >> 40) & 0xffffffu;
  return v;
}

}  // namespace

/// Appends each piece (strings and numbers) to `out`.
template <typename... Pieces>
void put(std::string& out, const Pieces&... pieces) {
  auto one = [&](const auto& piece) {
    if constexpr (std::is_arithmetic_v<std::decay_t<decltype(piece)>>) out += std::to_string(piece);
    else out += piece;
  };
  (one(pieces), ...);
}

std::string encode(const CachedModule& c) {
  std::string out;
  const FileExports& e = c.exports;
  for (const auto& [local, dotted] : e.imports) put(out, "I\t", local, "\t", dotted, "\n");
  for (const ExportedFunction& f : e.functions) {
    const Summary& s = f.summary;
    put(out, "F\t", f.name, "\t", f.method ? "1" : "0", "\t");
    joinTo(out, f.params);
    put(out, "\t", valueBits(s.returns), " ", static_cast<int>(s.returnsModule) | static_cast<int>(s.returnsLoader) << 1 | static_cast<int>(s.raisesOnly) << 2, " ", static_cast<int>(s.events), " ", s.accumulatesParam, " ",
        s.storesParam, " ", s.assignsParam, " ", s.softmaxOfParam + 1, " ", s.backwardParams, "\t");
    for (size_t i = 0; i < s.eventOrder.size(); ++i) put(out, i ? " " : "", static_cast<int>(s.eventOrder[i]));
    put(out, "\t");
    for (size_t i = 0; i < s.returnElems.size(); ++i) put(out, i ? " " : "", valueBits(s.returnElems[i]));
    put(out, "\t");
    for (size_t i = 0; i < s.storesParamInto.size(); ++i)
      put(out, i ? " " : "", static_cast<int>(s.storesParamInto[i].element) << 16 | s.storesParamInto[i].value << 8 | s.storesParamInto[i].into);
    put(out, "\n");
  }
  for (const ExportedClass& k : e.classes) {
    put(out, "C\t", k.name, "\t", static_cast<int>(k.module) | static_cast<int>(k.accumulator) << 1 | static_cast<int>(k.tensor) << 2 | static_cast<int>(k.framework) << 3 | static_cast<int>(k.batches) << 12, "\t");
    joinTo(out, k.bases);
    put(out, "\t");
    joinTo(out, k.methods);
    put(out, "\n");
  }
  for (const ExportedCall& k : e.calls) {
    put(out, "K\t", k.callee, "\t", static_cast<int>(k.grad), "\t", k.evalPositional, "\t", k.onTrainingPath ? "1" : "0", "\t");
    joinTo(out, k.evalKeywords);
    put(out, "\n");
  }
  put(out, "P\t", static_cast<int>(e.bindsDevice) | static_cast<int>(e.usesGradScaler) << 1 | static_cast<int>(e.mentionsCuda) << 2 |
                       static_cast<int>(e.importsTorch) << 3,
      "\n");
  for (const std::string& q : c.questions.functions) put(out, "Qf\t", q, "\n");
  for (const std::string& q : c.questions.classes) put(out, "Qc\t", q, "\n");
  for (const std::string& q : c.questions.callers) put(out, "Qk\t", q, "\n");
  if (c.questions.program) put(out, "Qp\t", static_cast<int>(c.questions.program), "\n");
  put(out, "U\t", c.answered, "\n");
  return out;
}

bool decode(std::string_view text, CachedModule& out) {
  out = CachedModule{};
  FileExports& e = out.exports;
  bool ended = false;
  std::vector<uint64_t> nums;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    if (nl == std::string_view::npos) return false;
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl + 1);
    std::vector<std::string_view> f = fields(line);
    std::string_view tag = f[0];
    if (tag == "I" && f.size() == 3) {
      e.imports.emplace_back(std::string(f[1]), std::string(f[2]));
    } else if (tag == "F" && f.size() == 8) {
      ExportedFunction fn;
      fn.name = std::string(f[1]);
      fn.method = f[2] == "1";
      fn.params = splitList(f[3]);
      if (!numbers(f[4], nums) || nums.size() != 8) return false;
      Summary& s = fn.summary;
      s.returns = valueFrom(nums[0]);
      s.returnsModule = (nums[1] & 1) != 0;
      s.returnsLoader = (nums[1] & 2) != 0;
      s.raisesOnly = (nums[1] & 4) != 0;
      s.events = static_cast<uint8_t>(nums[2]);
      s.accumulatesParam = static_cast<uint32_t>(nums[3]);
      s.storesParam = static_cast<uint32_t>(nums[4]);
      s.assignsParam = static_cast<uint32_t>(nums[5]);
      s.softmaxOfParam = static_cast<int>(nums[6]) - 1;
      s.backwardParams = static_cast<uint32_t>(nums[7]);
      if (!numbers(f[5], nums)) return false;
      for (uint64_t v : nums) s.eventOrder.push_back(static_cast<uint8_t>(v));
      if (!numbers(f[6], nums)) return false;
      for (uint64_t v : nums) s.returnElems.push_back(valueFrom(v));
      if (!numbers(f[7], nums)) return false;
      for (uint64_t v : nums)
        s.storesParamInto.push_back({static_cast<uint8_t>(v >> 8 & 0xff), static_cast<uint8_t>(v & 0xff), ((v >> 16) & 1) != 0});
      e.functions.push_back(std::move(fn));
    } else if (tag == "C" && f.size() == 5) {
      ExportedClass k;
      k.name = std::string(f[1]);
      uint64_t bits = 0;
      if (!number(f[2], bits)) return false;
      k.module = bits & 1;
      k.accumulator = bits & 2;
      k.tensor = bits & 4;
      k.framework = static_cast<uint8_t>((bits >> 3) & 0xff);
      k.batches = (bits >> 12) & 1;
      k.bases = splitList(f[3]);
      k.methods = splitList(f[4]);
      e.classes.push_back(std::move(k));
    } else if (tag == "K" && f.size() == 6) {
      ExportedCall k;
      k.callee = std::string(f[1]);
      uint64_t grad = 0, eval = 0;
      if (!number(f[2], grad) || !number(f[3], eval)) return false;
      k.grad = static_cast<uint8_t>(grad);
      k.evalPositional = static_cast<uint32_t>(eval);
      k.onTrainingPath = f[4] == "1";
      k.evalKeywords = splitList(f[5]);
      e.calls.push_back(std::move(k));
    } else if (tag == "P" && f.size() == 2) {
      uint64_t bits = 0;
      if (!number(f[1], bits)) return false;
      e.bindsDevice = bits & 1;
      e.usesGradScaler = bits & 2;
      e.mentionsCuda = bits & 4;
      e.importsTorch = bits & 8;
    } else if (tag == "Qf" && f.size() == 2) {
      out.questions.functions.emplace_back(f[1]);
    } else if (tag == "Qc" && f.size() == 2) {
      out.questions.classes.emplace_back(f[1]);
    } else if (tag == "Qk" && f.size() == 2) {
      out.questions.callers.emplace_back(f[1]);
    } else if (tag == "Qp" && f.size() == 2) {
      uint64_t bits = 0;
      if (!number(f[1], bits) || bits == 0 || bits > 15) return false;
      out.questions.program = static_cast<uint8_t>(bits);
    } else if (tag == "U" && f.size() == 2) {
      if (!number(f[1], out.answered)) return false;
      ended = true;
    } else {
      return false;
    }
  }
  return ended;
}

}  // namespace oomlint::project
