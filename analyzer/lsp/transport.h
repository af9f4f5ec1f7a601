#pragma once
/// JSON-RPC framing over a byte stream (LSP base protocol): `Content-Length: N\r\n\r\n` + N bytes.
/// Reads tolerate partial reads and several messages per read; a bad header is skipped, never fatal.

#include <optional>
#include <string>

namespace oomlint::lsp {

class Transport {
 public:
  Transport(int in, int out) : in_(in), out_(out) {}
  /// The next message body, or nullopt at end of input. Framing errors are reported through
  /// `error` (and the broken header is skipped) so the server can answer with a JSON-RPC error.
  std::optional<std::string> read(std::string& error);
  void write(const std::string& body);

  /// Largest body accepted; larger ones are discarded unread.
  static constexpr size_t kMaxBody = 64u << 20;

 private:
  bool fill();  // reads more bytes; false at EOF
  int in_, out_;
  std::string buf_;
  size_t pos_ = 0;
};

}  // namespace oomlint::lsp
