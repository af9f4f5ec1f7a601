// libFuzzer target: arbitrary bytes on the language server's stdin (framing, JSON, requests).
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fcntl.h>
#include <string>

#include "lsp/server.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int in = ::memfd_create("lsp-in", 0);
  int out = ::open("/dev/null", O_WRONLY);
  if (in < 0 || out < 0) return 0;
  // Initialize first so the fuzzer's bytes reach the document handlers too.
  std::string init = R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{}}})";
  std::string framed = "Content-Length: " + std::to_string(init.size()) + "\r\n\r\n" + init;
  if (::write(in, framed.data(), framed.size()) < 0 || (size && ::write(in, data, size) < 0)) {
    ::close(in);
    ::close(out);
    return 0;
  }
  ::lseek(in, 0, SEEK_SET);
  oomlint::lsp::runServer(in, out);
  ::close(in);
  ::close(out);
  return 0;
}
