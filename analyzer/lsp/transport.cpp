#include "lsp/transport.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace oomlint::lsp {

bool Transport::fill() {
  if (pos_ > 0 && pos_ == buf_.size()) {
    buf_.clear();
    pos_ = 0;
  } else if (pos_ > (1u << 20)) {
    buf_.erase(0, pos_);
    pos_ = 0;
  }
  char chunk[65536];
  for (;;) {
    ssize_t n = ::read(in_, chunk, sizeof chunk);
    if (n > 0) {
      buf_.append(chunk, static_cast<size_t>(n));
      return true;
    }
    if (n < 0 && errno == EINTR) continue;
    return false;
  }
}

std::optional<std::string> Transport::read(std::string& error) {
  error.clear();
  for (;;) {
    // Headers end at the first blank line.
    size_t end = buf_.find("\r\n\r\n", pos_);
    while (end == std::string::npos) {
      if (buf_.size() - pos_ > 65536) {  // no header end in sight: not LSP framing
        error = "header too long or missing";
        pos_ = buf_.size();
      }
      if (!fill()) return std::nullopt;
      end = buf_.find("\r\n\r\n", pos_);
      if (!error.empty()) return std::string();
    }
    std::string headers = buf_.substr(pos_, end - pos_);
    pos_ = end + 4;
    long long length = -1;
    size_t start = 0;
    while (start <= headers.size()) {
      size_t nl = headers.find("\r\n", start);
      std::string line = headers.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
      if (line.size() > 15 && strncasecmp(line.c_str(), "Content-Length:", 15) == 0) {
        char* endp = nullptr;
        length = std::strtoll(line.c_str() + 15, &endp, 10);
        while (endp && *endp == ' ') ++endp;
        if (!endp || *endp != '\0' || length < 0) length = -2;
      }
      if (nl == std::string::npos) break;
      start = nl + 2;
    }
    if (length < 0) {
      error = "missing or invalid Content-Length header";
      return std::string();
    }
    size_t need = static_cast<size_t>(length);
    if (need > kMaxBody) {
      // Discard the body as it streams in.
      size_t left = need;
      while (left > 0) {
        size_t have = buf_.size() - pos_;
        size_t take = std::min(have, left);
        pos_ += take;
        left -= take;
        if (left > 0 && !fill()) return std::nullopt;
      }
      error = "message too large";
      return std::string();
    }
    while (buf_.size() - pos_ < need)
      if (!fill()) return std::nullopt;
    std::string body = buf_.substr(pos_, need);
    pos_ += need;
    return body;
  }
}

void Transport::write(const std::string& body) {
  std::string msg = "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  size_t off = 0;
  while (off < msg.size()) {
    ssize_t n = ::write(out_, msg.data() + off, msg.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // the client is gone
    }
    off += static_cast<size_t>(n);
  }
}

}  // namespace oomlint::lsp
