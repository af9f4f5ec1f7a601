// Replays a trace's events: once for growth (what is live when the last step ends), once for the
// peak (what is live at the highest allocated total) and once more past the peak to learn which
// of those blocks outlived their step.
#include "trace/analysis.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

namespace oomlint::trace {
namespace {

struct Block {
  int64_t size = 0;
  uint32_t stack = 0;
  int64_t step = 0;   // 1-based step it was allocated in; steps.size() + 1 after the last mark
  size_t event = 0;
};

using Live = std::unordered_map<uint64_t, Block>;

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

/// A stack's kind from its frames alone; Gradients is decided later (frameless blocks).
Kind kindOfFrames(const Trace& t, uint32_t stack) {
  auto [begin, end] = t.stack(stack);
  if (begin == end) return Kind::Gradients;
  bool forward = false;
  for (const uint32_t* f = begin; f != end; ++f) {
    const Frame& fr = t.frames[*f];
    std::string_view path = t.files[fr.file].path;
    std::string_view name = fr.name;
    if (contains(path, "torch/optim/")) return Kind::OptimizerState;
    if (contains(path, "torch/nn/parameter.py") ||
        (contains(path, "torch/nn/modules/module.py") &&
         (name == "_apply" || name == "to" || name == "cuda" || name == "_load_from_state_dict")) ||
        (contains(path, "torch/nn/modules/") && (name == "__init__" || name == "reset_parameters")))
      return Kind::Parameters;
    if (name == "forward" || contains(path, "torch/nn/modules/") || contains(path, "torch/nn/functional.py"))
      forward = true;
    // LibTorch C++ frames (oomlint/trace.h records them by their demangled names).
    if (contains(name, "torch::optim::")) return Kind::OptimizerState;
    if (contains(name, "torch::nn::Module::to") || contains(name, "Impl::reset(") || contains(name, "register_parameter"))
      return Kind::Parameters;
    if (contains(name, "torch::autograd::Engine::")) return Kind::Gradients;  // the backward's thread
    if (contains(name, "::forward(")) forward = true;
  }
  return forward ? Kind::Activations : Kind::Other;
}

/// The step each event belongs to: 1 + the marks at or before it.
class StepOf {
 public:
  explicit StepOf(const Trace& t) {
    for (const Step& s : t.steps)
      if (s.event >= 0) marks_.push_back({s.event, s.index});
  }
  /// Call with increasing event indexes.
  int64_t at(size_t event) {
    while (next_ < marks_.size() && static_cast<size_t>(marks_[next_].first) <= event) current_ = marks_[next_++].second;
    return current_ + 1;
  }

 private:
  std::vector<std::pair<int64_t, int64_t>> marks_;  // (event, step)
  size_t next_ = 0;
  int64_t current_ = 0;
};

void apply(const Event& e, size_t i, int64_t step, Live& live, int64_t& allocated) {
  if (e.action == Action::Alloc) {
    auto [it, fresh] = live.try_emplace(e.addr, Block{e.size, e.stack, step, i});
    if (!fresh) {  // a free the history lost: the old block is gone
      allocated -= it->second.size;
      it->second = Block{e.size, e.stack, step, i};
    }
    allocated += e.size;
  } else if (e.action == Action::Free) {
    if (auto it = live.find(e.addr); it != live.end()) {
      allocated -= it->second.size;
      live.erase(it);
    }
  }
}

void sortGroups(std::vector<LineGroup>& groups) {
  std::sort(groups.begin(), groups.end(), [](const LineGroup& a, const LineGroup& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.frame < b.frame;
  });
}

LineGroup& groupFor(std::unordered_map<int32_t, LineGroup>& groups, int32_t frame) {
  auto [it, fresh] = groups.try_emplace(frame);
  if (fresh) it->second.frame = frame;
  return it->second;
}

void addStack(LineGroup& g, uint32_t stack) {
  if (std::find(g.stacks.begin(), g.stacks.end(), stack) == g.stacks.end()) g.stacks.push_back(stack);
}

void slope(const Trace& t, Analysis& a) {
  size_t n = t.steps.size();
  if (n < 3) return;
  double sx = 0, sy = 0, sr = 0, sxx = 0, sxy = 0, sxr = 0, m = 0;
  for (size_t i = 1; i < n; ++i) {
    double x = static_cast<double>(t.steps[i].index);
    double y = static_cast<double>(t.steps[i].allocated), r = static_cast<double>(t.steps[i].reserved);
    sx += x, sy += y, sr += r, sxx += x * x, sxy += x * y, sxr += x * r, m += 1;
  }
  double den = m * sxx - sx * sx;
  if (den == 0) return;
  a.slopeKnown = true;
  a.slopeAllocated = (m * sxy - sx * sy) / den;
  a.slopeReserved = (m * sxr - sx * sr) / den;
}

/// The hooks called, in `step`, with a tensor inside the block [addr, addr + size).
class HookIndex {
 public:
  explicit HookIndex(const Trace& t) {
    for (const HookCall& c : t.hookCalls) byStep_[c.step].push_back({c.addr, c.hook});
    for (auto& [step, calls] : byStep_) std::sort(calls.begin(), calls.end());
  }
  void add(int64_t step, uint64_t addr, int64_t size, std::vector<uint32_t>& out) const {
    auto it = byStep_.find(step);
    if (it == byStep_.end()) return;
    const auto& calls = it->second;
    for (auto c = std::lower_bound(calls.begin(), calls.end(), std::make_pair(addr, uint32_t{0}));
         c != calls.end() && c->first < addr + static_cast<uint64_t>(size); ++c)
      if (std::find(out.begin(), out.end(), c->second) == out.end()) out.push_back(c->second);
  }

 private:
  std::unordered_map<int64_t, std::vector<std::pair<uint64_t, uint32_t>>> byStep_;
};

void growth(const Trace& t, std::vector<int32_t>& userOf, Analysis& a) {
  size_t n = t.steps.size();
  if (n < 3) {
    a.notes.push_back("growth by line needs at least 3 steps; this run marked " + std::to_string(n));
    return;
  }
  int64_t end = t.steps.back().event;
  if (end < 0) return;
  Live live;
  int64_t allocated = 0;
  StepOf stepOf(t);
  for (size_t i = 0; i < static_cast<size_t>(end); ++i) apply(t.events[i], i, stepOf.at(i), live, allocated);
  // Steps whose marks were lost cannot be told apart: the window starts after the first mark kept.
  int64_t first = 2;
  for (const Step& s : t.steps)
    if (s.event < 0) first = s.index + 2;
  int64_t last = static_cast<int64_t>(n) - 1;
  a.window = std::max<int64_t>(0, last - first + 1);
  if (a.window == 0) return;
  std::unordered_map<int32_t, LineGroup> groups;
  std::unordered_map<int32_t, std::vector<int64_t>> stepsOf;
  HookIndex hooks(t);
  for (const auto& [addr, b] : live) {
    if (b.step < first || b.step > last) continue;
    LineGroup& g = groupFor(groups, userOf[b.stack]);
    g.bytes += b.size;
    ++g.blocks;
    addStack(g, b.stack);
    hooks.add(b.step, addr, b.size, g.hooks);
    stepsOf[g.frame].push_back(b.step);
  }
  int64_t needed = std::min<int64_t>(3, a.window);
  for (auto& [frame, g] : groups) {
    auto& s = stepsOf[frame];
    std::sort(s.begin(), s.end());
    g.steps = std::unique(s.begin(), s.end()) - s.begin();
    g.perStep = static_cast<double>(g.bytes) / static_cast<double>(a.window);
    std::sort(g.stacks.begin(), g.stacks.end());
    std::sort(g.hooks.begin(), g.hooks.end());
    (g.steps >= needed ? a.growth : a.keptOnce).push_back(std::move(g));
  }
  sortGroups(a.growth);
  sortGroups(a.keptOnce);
  for (const LineGroup& g : a.growth) a.growthPerStep += g.perStep;
}

void peak(const Trace& t, std::vector<int32_t>& userOf, Analysis& a) {
  Live live;
  int64_t allocated = 0, best = -1;
  size_t at = 0;
  {
    StepOf stepOf(t);
    for (size_t i = 0; i < t.events.size(); ++i) {
      apply(t.events[i], i, stepOf.at(i), live, allocated);
      if (allocated > best) best = allocated, at = i;
    }
  }
  if (best <= 0) return;
  live.clear();
  allocated = 0;
  int64_t reserved = 0;
  std::unordered_map<uint64_t, int64_t> segments;
  StepOf stepOf(t);
  int64_t peakStep = 0;
  for (size_t i = 0; i <= at; ++i) {
    const Event& e = t.events[i];
    peakStep = stepOf.at(i);
    apply(e, i, peakStep, live, allocated);
    if (e.action == Action::SegmentAlloc) {
      segments[e.addr] += e.size;
      reserved += e.size;
    } else if (e.action == Action::SegmentFree) {
      reserved -= e.size;
      segments.erase(e.addr);
    }
  }
  a.peakAllocated = allocated;
  a.peakStep = peakStep;
  // The allocator's own counters know segments made before the history started; the replay
  // does not. Take the larger.
  int64_t statReserved = 0;
  for (const Step& s : t.steps)
    if (s.index == peakStep || s.index == peakStep - 1) statReserved = std::max(statReserved, s.reserved);
  a.peakReserved = std::max(reserved, statReserved);
  a.peakReserved = std::max(a.peakReserved, allocated);

  // Frameless blocks still live when their step ended are gradients: learn when each is freed.
  std::unordered_map<uint64_t, size_t> freedAt;
  for (size_t i = at + 1; i < t.events.size(); ++i) {
    const Event& e = t.events[i];
    if ((e.action == Action::Free || e.action == Action::Alloc) && live.count(e.addr) && !freedAt.count(e.addr))
      freedAt[e.addr] = i;
  }
  auto stepEnd = [&](int64_t step) -> size_t {
    if (step >= 1 && step <= static_cast<int64_t>(t.steps.size()) && t.steps[step - 1].event >= 0)
      return static_cast<size_t>(t.steps[step - 1].event);
    return t.events.size();
  };
  std::unordered_map<int32_t, LineGroup> groups;
  for (const auto& [addr, b] : live) {
    Kind kind = kindOfFrames(t, b.stack);
    if (kind == Kind::Gradients) {
      auto f = freedAt.find(addr);
      size_t freed = f == freedAt.end() ? t.events.size() : f->second;
      if (freed < stepEnd(b.step)) kind = Kind::Other;
    }
    LineGroup& g = groupFor(groups, userOf[b.stack]);
    g.bytes += b.size;
    ++g.blocks;
    g.kinds[static_cast<size_t>(kind)] += b.size;
    a.peakKinds[static_cast<size_t>(kind)] += b.size;
    addStack(g, b.stack);
  }
  for (auto& [frame, g] : groups) {
    std::sort(g.stacks.begin(), g.stacks.end());
    a.peak.push_back(std::move(g));
  }
  sortGroups(a.peak);
}

void oom(const Trace& t, std::vector<int32_t>& userOf, Analysis& a) {
  StepOf stepOf(t);
  for (size_t i = 0; i < t.events.size(); ++i) {
    int64_t step = stepOf.at(i);
    const Event& e = t.events[i];
    if (e.action != Action::Oom) continue;
    a.oom = true;
    a.oomStep = step;
    a.oomRequested = e.size;
    a.oomFree = static_cast<int64_t>(e.addr);
    a.oomFrame = userOf[e.stack];
    break;  // the first one: the one that ended the run, unless the program caught it
  }
  if (!a.oom && t.oom.present) {
    a.oom = true;
    a.oomStep = static_cast<int64_t>(t.steps.size()) + 1;
  }
  if (a.oomFrame >= 0) {
    a.oomFile = t.files[t.frames[a.oomFrame].file].path;
    a.oomLine = t.frames[a.oomFrame].line;
  } else if (t.oom.present && !t.oom.file.empty()) {
    a.oomFile = t.oom.file;
    a.oomLine = t.oom.line;
  }
}

}  // namespace

const char* kindName(Kind kind) {
  switch (kind) {
    case Kind::Parameters: return "parameters";
    case Kind::Gradients: return "gradients";
    case Kind::OptimizerState: return "optimizer state";
    case Kind::Activations: return "activations";
    case Kind::Other: return "other";
  }
  return "other";
}

int32_t userFrame(const Trace& trace, uint32_t stack) {
  auto [begin, end] = trace.stack(stack);
  for (const uint32_t* f = begin; f != end; ++f)
    if (trace.files[trace.frames[*f].file].user) return static_cast<int32_t>(*f);
  return -1;
}

Analysis analyze(const Trace& t) {
  Analysis a;
  a.steps = t.steps.size();
  std::vector<int32_t> userOf(t.stackCount());
  for (uint32_t s = 0; s < userOf.size(); ++s) userOf[s] = userFrame(t, s);
  if (t.steps.empty())
    a.notes.push_back("no step was marked: the program never stepped an optimizer (mark steps with oomlint.trace.step())");
  if (!t.run.history)
    a.notes.push_back("this run recorded the counters only, without the allocator's history: no lines");
  if (t.run.historyDropped)
    a.notes.push_back("the allocator's history overflowed (raise --max-events): the earliest events are lost, and "
                      "the figures cover the steps whose marks remain");
  slope(t, a);
  growth(t, userOf, a);
  peak(t, userOf, a);
  oom(t, userOf, a);
  return a;
}

}  // namespace oomlint::trace
