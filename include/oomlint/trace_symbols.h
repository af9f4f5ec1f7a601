#pragma once
/// oomlint/trace_symbols.h: the C++ stacks of oomlint/trace.h. A stack is taken as return
/// addresses (cheap, at every allocation) and named once, when the trace is written: by file, line
/// and function, with inlined calls expanded. LibTorch's module calls (`model(x)`) are templates
/// that the compiler inlines, so without the expansion an optimised program's own line would read
/// as the LibTorch header it inlined. Needs no LibTorch; reads debug information through binutils'
/// addr2line, and names other libraries' frames by their symbol tables.

#include <cxxabi.h>
#include <dlfcn.h>
#include <elf.h>
#include <execinfo.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace oomlint::trace::symbols {

struct Frame {
  std::string file;  // as the debug information names it; the library's path when it has none
  uint64_t line = 0; // 0: unknown
  std::string function;
};

/// The calling thread's return addresses, innermost first, without the `skip` innermost.
inline std::vector<void*> capture(int skip) {
  void* buffer[128];
  int n = ::backtrace(buffer, 128);
  return std::vector<void*>(buffer + std::min(skip, n), buffer + n);
}

namespace detail {

inline std::string demangled(const char* name) {
  if (!name) return "??";
  int status = 0;
  char* out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string result = status == 0 && out ? out : name;
  std::free(out);
  return result;
}

inline std::string mainProgram() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

/// `path` with single quotes, for the shell.
inline std::string shellQuoted(const std::string& path) {
  std::string out = "'";
  for (char c : path) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// "file:line" or "file:line (discriminator N)" from addr2line; "??:0" and "??:?" are unknown.
inline void location(const std::string& text, Frame& f) {
  std::string loc = text.substr(0, text.find(" ("));
  size_t colon = loc.rfind(':');
  f.file = colon == std::string::npos ? loc : loc.substr(0, colon);
  f.line = colon == std::string::npos ? 0 : std::strtoull(loc.c_str() + colon + 1, nullptr, 10);
  if (f.file == "??") f.file.clear();
  if (!f.file.empty() && f.file[0] == '/') f.file = std::filesystem::path(f.file).lexically_normal().string();
}

/// Runs addr2line over `offsets` in `library`; each offset's frames, innermost (inlined) first.
/// Empty when addr2line cannot run.
inline std::map<uint64_t, std::vector<Frame>> readDebugInfo(const std::string& library, const std::vector<uint64_t>& offsets) {
  std::map<uint64_t, std::vector<Frame>> out;
  char name[] = "/tmp/oomlint-trace-addresses-XXXXXX";
  int fd = ::mkstemp(name);
  if (fd < 0) return out;
  std::string text;
  for (uint64_t o : offsets) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx\n", static_cast<unsigned long long>(o));
    text += buf;
  }
  bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!written) {
    ::unlink(name);
    return out;
  }
  std::string command = "addr2line -a -C -f -i -e " + shellQuoted(library) + " < " + name + " 2>/dev/null";
  if (FILE* p = ::popen(command.c_str(), "r")) {
    std::vector<std::string> lines;
    char buf[8192];
    while (std::fgets(buf, sizeof buf, p)) {
      std::string line(buf);
      while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
      lines.push_back(line);
    }
    ::pclose(p);
    // Per address: its echo ("0x..."), then pairs of function and location, innermost first.
    std::vector<Frame>* current = nullptr;
    for (size_t i = 0; i < lines.size(); ++i) {
      if (lines[i].rfind("0x", 0) == 0) {
        current = &out[std::strtoull(lines[i].c_str(), nullptr, 16)];
        continue;
      }
      if (!current || i + 1 >= lines.size()) break;
      Frame f;
      f.function = lines[i] == "??" ? "" : lines[i];
      location(lines[++i], f);
      current->push_back(f);
    }
  }
  ::unlink(name);
  return out;
}

}  // namespace detail

/// The frames of each address, innermost (inlined) call first. The libraries that `detailed`
/// accepts (by path; the program's own) are read through their debug information; every other
/// frame is named by its library's path and its symbol. Addresses are return addresses: each is
/// looked up one byte back, inside its call.
inline std::map<void*, std::vector<Frame>> name(const std::vector<void*>& pcs,
                                                const std::function<bool(const std::string&)>& detailed) {
  std::map<void*, std::vector<Frame>> out;
  std::map<std::string, std::vector<std::pair<void*, uint64_t>>> byLibrary;
  const std::string self = detail::mainProgram();
  for (void* pc : pcs) {
    if (out.count(pc)) continue;
    auto* at = static_cast<char*>(pc) - 1;
    Dl_info info{};
    if (!::dladdr(at, &info) || !info.dli_fbase) {
      out[pc] = {Frame{"", 0, "??"}};
      continue;
    }
    // The executable's own name is as it was started (argv[0]): made absolute, like the rest.
    std::string library = info.dli_fname ? info.dli_fname : "";
    char* real = library.empty() ? nullptr : ::realpath(library.c_str(), nullptr);
    library = real ? real : self;
    std::free(real);
    out[pc] = {Frame{library, 0, detail::demangled(info.dli_sname)}};
    if (!detailed(library)) continue;
    // A position-dependent executable's addresses are its own; anything else's are offsets.
    const auto* header = static_cast<const ElfW(Ehdr)*>(info.dli_fbase);
    uint64_t base = header->e_type == ET_EXEC ? 0 : reinterpret_cast<uintptr_t>(info.dli_fbase);
    byLibrary[library].push_back({pc, reinterpret_cast<uintptr_t>(at) - base});
  }
  for (const auto& [library, addresses] : byLibrary) {
    std::vector<uint64_t> offsets;
    for (const auto& a : addresses) offsets.push_back(a.second);
    std::map<uint64_t, std::vector<Frame>> frames = detail::readDebugInfo(library, offsets);
    for (const auto& [pc, offset] : addresses) {
      auto found = frames.find(offset);
      if (found == frames.end() || found->second.empty()) continue;
      std::vector<Frame> named = found->second;
      for (Frame& f : named)
        if (f.function.empty()) f.function = out[pc].front().function;
      out[pc] = named;
    }
  }
  return out;
}

}  // namespace oomlint::trace::symbols
