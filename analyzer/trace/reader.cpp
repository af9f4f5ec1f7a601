// Reads a trace's JSON (docs/trace.md) into trace::Trace, checking every id and type, so that the
// analysis can index without checks of its own.
#include <fstream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "trace/trace.h"

namespace oomlint::trace {
namespace {

using json = nlohmann::json;

constexpr int64_t kVersion = 1;

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw TraceError(where + ": " + what);
}

const json& member(const json& obj, const char* key, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end()) fail(where, std::string("missing \"") + key + "\"");
  return *it;
}

const json& arrayMember(const json& obj, const char* key, const std::string& where) {
  const json& v = member(obj, key, where);
  if (!v.is_array()) fail(where + "." + key, "not an array");
  return v;
}

int64_t integer(const json& v, const std::string& where) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) fail(where, "number out of range");
    return static_cast<int64_t>(u);
  }
  fail(where, "not an integer");
}

uint64_t unsignedInteger(const json& v, const std::string& where) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer() && v.get<int64_t>() >= 0) return static_cast<uint64_t>(v.get<int64_t>());
  fail(where, "not a non-negative integer");
}

uint32_t index(const json& v, size_t bound, const std::string& where, const char* of) {
  uint64_t i = unsignedInteger(v, where);
  if (i >= bound) fail(where, std::to_string(i) + " is not an index of " + of + " (" + std::to_string(bound) + ")");
  return static_cast<uint32_t>(i);
}

std::string text(const json& v, const std::string& where) {
  if (!v.is_string()) fail(where, "not a string");
  return v.get<std::string>();
}

std::string optionalText(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int64_t optionalInteger(const json& obj, const char* key, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return 0;
  return integer(*it, where + "." + key);
}

double optionalNumber(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_number() ? it->get<double>() : 0.0;
}

void readRun(const json& run, RunInfo& out) {
  const std::string where = "run";
  if (!run.is_object()) fail(where, "not an object");
  if (auto it = run.find("argv"); it != run.end() && it->is_array())
    for (const json& a : *it)
      if (a.is_string()) out.argv.push_back(a.get<std::string>());
  out.cwd = optionalText(run, "cwd");
  out.python = optionalText(run, "python");
  out.torch = optionalText(run, "torch");
  out.deviceName = optionalText(run, "device_name");
  out.frames = optionalText(run, "frames");
  out.ended = optionalText(run, "ended");
  out.device = optionalInteger(run, "device", where);
  out.totalMemory = optionalInteger(run, "total_memory", where);
  out.exitCode = optionalInteger(run, "exit_code", where);
  out.stepsLimit = optionalInteger(run, "steps_limit", where);
  out.baselineAllocated = optionalInteger(run, "baseline_allocated", where);
  if (auto h = run.find("history"); h != run.end() && h->is_boolean()) out.history = h->get<bool>();
  auto dropped = run.find("history_dropped");
  out.historyDropped = dropped != run.end() && dropped->is_boolean() && dropped->get<bool>();
  out.seconds = optionalNumber(run, "seconds");
}

void readFiles(const json& files, Trace& out) {
  out.files.reserve(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string where = "files[" + std::to_string(i) + "]";
    const json& f = files[i];
    if (!f.is_array() || f.size() != 2 || !f[1].is_boolean()) fail(where, "not [path, user]");
    out.files.push_back({text(f[0], where), f[1].get<bool>()});
  }
}

void readFrames(const json& frames, Trace& out) {
  out.frames.reserve(frames.size());
  for (size_t i = 0; i < frames.size(); ++i) {
    const std::string where = "frames[" + std::to_string(i) + "]";
    const json& f = frames[i];
    if (!f.is_array() || f.size() != 3) fail(where, "not [file, line, name]");
    uint64_t line = unsignedInteger(f[1], where);
    if (line > std::numeric_limits<uint32_t>::max()) fail(where, "line out of range");
    out.frames.push_back({index(f[0], out.files.size(), where, "files"), static_cast<uint32_t>(line), text(f[2], where)});
  }
}

void readStacks(const json& stacks, Trace& out) {
  out.stackStart.reserve(stacks.size() + 1);
  for (size_t i = 0; i < stacks.size(); ++i) {
    const std::string where = "stacks[" + std::to_string(i) + "]";
    if (!stacks[i].is_array()) fail(where, "not an array of frames");
    for (const json& f : stacks[i]) out.stackFrames.push_back(index(f, out.frames.size(), where, "frames"));
    out.stackStart.push_back(static_cast<uint32_t>(out.stackFrames.size()));
  }
}

Action action(const json& v, const std::string& where) {
  if (!v.is_string()) fail(where, "action is not a string");
  const std::string& a = v.get_ref<const std::string&>();
  if (a == "a") return Action::Alloc;
  if (a == "f") return Action::Free;
  if (a == "sa") return Action::SegmentAlloc;
  if (a == "sf") return Action::SegmentFree;
  if (a == "oom") return Action::Oom;
  fail(where, "unknown action \"" + a + "\"");
}

void readEvents(const json& events, Trace& out) {
  out.events.reserve(events.size());
  const size_t stacks = out.stackCount();
  for (size_t i = 0; i < events.size(); ++i) {
    const json& e = events[i];
    if (!e.is_array() || e.size() != 4) fail("events[" + std::to_string(i) + "]", "not [action, addr, size, stack]");
    auto where = [&] { return "events[" + std::to_string(i) + "]"; };
    Event ev;
    ev.action = action(e[0], where());
    ev.addr = unsignedInteger(e[1], where());
    ev.size = integer(e[2], where());
    if (ev.size < 0) fail(where(), "negative size");
    ev.stack = index(e[3], stacks, where(), "stacks");
    out.events.push_back(ev);
  }
}

void readSteps(const json& steps, Trace& out) {
  out.steps.reserve(steps.size());
  int64_t lastEvent = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    const std::string where = "steps[" + std::to_string(i) + "]";
    const json& s = steps[i];
    if (!s.is_array() || s.size() != 6) fail(where, "not [step, allocated, reserved, peak, event, seconds]");
    Step st;
    st.index = integer(s[0], where);
    st.allocated = integer(s[1], where);
    st.reserved = integer(s[2], where);
    st.peakAllocated = integer(s[3], where);
    st.event = integer(s[4], where);
    if (!s[5].is_number()) fail(where, "seconds is not a number");
    st.seconds = s[5].get<double>();
    if (st.index != static_cast<int64_t>(i) + 1) fail(where, "steps are not numbered 1, 2, 3 ...");
    if (st.event < -1 || st.event > static_cast<int64_t>(out.events.size()))
      fail(where, "event " + std::to_string(st.event) + " is outside the " + std::to_string(out.events.size()) + " events");
    if (st.event >= 0) {
      if (st.event < lastEvent) fail(where, "its mark comes before the previous step's");
      lastEvent = st.event;
    } else if (lastEvent > 0) {
      fail(where, "a lost mark after a recorded one");
    }
    out.steps.push_back(st);
  }
}

/// The optional "hooks" and "hook_calls" arrays (a trace without them is whole).
void readHooks(const json& doc, Trace& out) {
  if (auto hooks = doc.find("hooks"); hooks != doc.end()) {
    if (!hooks->is_array()) fail("hooks", "not an array");
    for (size_t i = 0; i < hooks->size(); ++i) {
      const std::string where = "hooks[" + std::to_string(i) + "]";
      const json& h = (*hooks)[i];
      if (!h.is_array() || h.size() != 4) fail(where, "not [file, first line, last line, name]");
      Hook hook{index(h[0], out.files.size(), where, "files"), 0, 0, text(h[3], where)};
      uint64_t first = unsignedInteger(h[1], where), last = unsignedInteger(h[2], where);
      if (last < first || last > std::numeric_limits<uint32_t>::max()) fail(where, "its lines are not a range");
      hook.firstLine = static_cast<uint32_t>(first);
      hook.lastLine = static_cast<uint32_t>(last);
      out.hooks.push_back(std::move(hook));
    }
  }
  if (auto calls = doc.find("hook_calls"); calls != doc.end()) {
    if (!calls->is_array()) fail("hook_calls", "not an array");
    out.hookCalls.reserve(calls->size());
    for (size_t i = 0; i < calls->size(); ++i) {
      const std::string where = "hook_calls[" + std::to_string(i) + "]";
      const json& c = (*calls)[i];
      if (!c.is_array() || c.size() != 3) fail(where, "not [step, addr, hook]");
      out.hookCalls.push_back({integer(c[0], where), unsignedInteger(c[1], where), index(c[2], out.hooks.size(), where, "hooks")});
    }
  }
}

void readOom(const json& oom, OomSite& out) {
  if (oom.is_null()) return;
  if (!oom.is_object()) fail("oom", "not an object or null");
  out.present = true;
  out.message = optionalText(oom, "message");
  out.file = optionalText(oom, "file");
  out.name = optionalText(oom, "name");
  out.line = optionalInteger(oom, "line", "oom");
}

}  // namespace

Trace parseTrace(std::string_view textIn) {
  json doc = json::parse(textIn, nullptr, false);
  if (doc.is_discarded()) throw TraceError("not valid JSON (a truncated or damaged trace?)");
  if (!doc.is_object()) throw TraceError("not a trace: the top level is not a JSON object");
  auto format = doc.find("format");
  if (format == doc.end() || !format->is_string() || format->get<std::string>() != "oomlint-trace")
    throw TraceError("not an oomlint trace: \"format\" is not \"oomlint-trace\"");
  int64_t version = integer(member(doc, "version", "trace"), "version");
  if (version != kVersion)
    throw TraceError("trace version " + std::to_string(version) + " is not one this oomlint reads (it reads " +
                     std::to_string(kVersion) + ")");
  Trace out;
  readRun(member(doc, "run", "trace"), out.run);
  readFiles(arrayMember(doc, "files", "trace"), out);
  readFrames(arrayMember(doc, "frames", "trace"), out);
  readStacks(arrayMember(doc, "stacks", "trace"), out);
  readEvents(arrayMember(doc, "events", "trace"), out);
  readSteps(arrayMember(doc, "steps", "trace"), out);
  readHooks(doc, out);
  if (auto oom = doc.find("oom"); oom != doc.end()) readOom(*oom, out.oom);
  return out;
}

Trace readTraceFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TraceError("cannot read " + path);
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) throw TraceError("cannot read " + path);
  return parseTrace(buf.str());
}

}  // namespace oomlint::trace
