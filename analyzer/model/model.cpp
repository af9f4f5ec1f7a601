#include "model/model.h"

#include <algorithm>

#include <cstring>

namespace oomlint {

std::vector<uint32_t> lineStartsOf(std::string_view text) {
  std::vector<uint32_t> starts{0};
  const char* begin = text.data();
  const char* end = begin + text.size();
  for (const char* p = begin; (p = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)))) != nullptr;)
    starts.push_back(static_cast<uint32_t>(++p - begin));
  return starts;
}

std::string_view Module::lineText(uint32_t line) const {
  if (line == 0 || line > lineStarts.size()) return {};
  uint32_t b = lineStarts[line - 1];
  uint32_t e = line < lineStarts.size() ? lineStarts[line] : static_cast<uint32_t>(source.size());
  std::string_view t = std::string_view(source).substr(b, e - b);
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.remove_suffix(1);
  return t;
}

std::string_view Module::externalTextOf(const Span& s) const {
  auto it = std::upper_bound(externalTexts.begin(), externalTexts.end(), s.begin,
                             [](uint32_t pos, const ExternalText& t) { return pos < t.base; });
  if (it == externalTexts.begin()) return {};
  const ExternalText& t = *--it;
  uint32_t b = s.begin - t.base;
  if (b > t.text.size()) return {};
  return t.text.substr(b, s.end - s.begin);
}

uint32_t Module::lineOf(uint32_t offset) const {
  auto it = std::upper_bound(lineStarts.begin(), lineStarts.end(), offset);
  return static_cast<uint32_t>(it - lineStarts.begin());
}

bool isSelfName(const Module& m, NodeId e) { return e != kNone && m.expr(e).kind == ExprKind::Name && m.expr(e).text == "self"; }

std::string_view methodName(const Module& m, NodeId call) {
  if (call == kNone) return {};
  const Expr& c = m.expr(call);
  if (c.kind != ExprKind::Call || c.lhs == kNone) return {};
  const Expr& callee = m.expr(c.lhs);
  return callee.kind == ExprKind::Attribute ? callee.text : std::string_view{};
}

NodeId receiverOf(const Module& m, NodeId call) {
  if (call == kNone) return kNone;
  const Expr& c = m.expr(call);
  if (c.kind != ExprKind::Call || c.lhs == kNone) return kNone;
  const Expr& callee = m.expr(c.lhs);
  return callee.kind == ExprKind::Attribute ? callee.lhs : kNone;
}

std::string_view calleeName(const Module& m, NodeId call) {
  const Expr& c = m.expr(call);
  if (c.kind != ExprKind::Call || c.lhs == kNone) return {};
  const Expr& callee = m.expr(c.lhs);
  if (callee.kind == ExprKind::Name || callee.kind == ExprKind::Attribute) return callee.text;
  return {};
}

NodeId positionalArg(const Module& m, NodeId call, uint32_t index) {
  const Expr& c = m.expr(call);
  uint32_t seen = 0;
  for (const Arg& a : argsOf(m, c)) {
    if (!a.keyword.empty() && m.lang == Lang::Python) continue;
    if (seen++ == index) return a.value;
  }
  return kNone;
}

NodeId argumentOf(const Module& m, NodeId call, std::string_view name, uint32_t index) {
  NodeId v = keywordArg(m, call, name);
  return v != kNone ? v : positionalArg(m, call, index);
}

NodeId keywordArg(const Module& m, NodeId call, std::string_view name) {
  const Expr& c = m.expr(call);
  for (const Arg& a : argsOf(m, c))
    if (a.keyword == name) return a.value;
  return kNone;
}

std::string dottedPath(const Module& m, NodeId e) {
  std::vector<std::string_view> parts;
  while (e != kNone) {
    const Expr& x = m.expr(e);
    if (x.kind == ExprKind::Name) {
      parts.push_back(x.text);
      break;
    }
    if (x.kind != ExprKind::Attribute) return {};
    parts.push_back(x.text);
    e = x.lhs;
  }
  if (e == kNone) return {};
  std::string out;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    if (!out.empty()) out += '.';
    out += *it;
  }
  return out;
}

bool isTrueLiteral(const Module& m, NodeId e) {
  return e != kNone && m.expr(e).kind == ExprKind::Bool && m.textOf(e) == (m.lang == Lang::Python ? "True" : "true");
}
bool isFalseLiteral(const Module& m, NodeId e) {
  return e != kNone && m.expr(e).kind == ExprKind::Bool && m.textOf(e) == (m.lang == Lang::Python ? "False" : "false");
}

bool stringKeyedEntry(const Module& m, NodeId element, std::string_view& key, NodeId& value) {
  const Expr& pair = m.expr(element);
  if (pair.shape != shape::kPair || pair.argCount != 2) return false;
  const Expr& k = m.expr(m.args[pair.firstArg].value);
  if (k.kind != ExprKind::String) return false;
  key = stringContents(k.text);
  value = m.args[pair.firstArg + 1].value;
  return true;
}

std::string_view stringContents(std::string_view t) {
  size_t open = t.find_first_of("\"'");
  if (open == std::string_view::npos) return {};
  t.remove_prefix(open);
  while (!t.empty() && (t.front() == '"' || t.front() == '\'')) t.remove_prefix(1);
  while (!t.empty() && (t.back() == '"' || t.back() == '\'')) t.remove_suffix(1);
  return t;
}

}  // namespace oomlint
