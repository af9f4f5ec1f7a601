// Sizes the code states: integers, tensor shapes, layer lists and dtypes (see sizes.h).
#include "facts/sizes.h"

#include <algorithm>
#include <array>

#include "facts/facts.h"
#include "facts/names.h"
#include "facts/torch_api.h"

namespace oomlint {

namespace {

constexpr int kMaxDepth = 8;
using torch_api::startsWith;

}  // namespace

int Sizes::conversionBytes(std::string_view method) {
  if (method == "half" || method == "bfloat16") return 2;
  if (method == "float") return 4;
  if (method == "double") return 8;
  return 0;
}

std::string_view Sizes::floatName(std::string_view name) {
  if (name == "bfloat16") return "bf16";
  if (name == "half" || name == "float16") return "f16";
  if (name == "float" || name == "float32") return "f32";
  if (name == "double" || name == "float64") return "f64";
  return {};
}

int64_t KnownShape::rows() const {
  int64_t n = 1;
  for (size_t i = 0; i + 1 < dims.size(); ++i) n *= dims[i];
  return n;
}

int64_t KnownNetwork::parameters() const {
  int64_t n = 0;
  for (const LayerSize& l : layers) n += l.parameters;
  return n;
}

int64_t KnownNetwork::inFeatures() const {
  for (const LayerSize& l : layers)
    if (l.inFeatures) return l.inFeatures;
  return 0;
}

Sizes::Sizes(const Facts& facts) : f_(facts), m_(facts.module()) {}

std::string Sizes::at(NodeId e) const {
  // One line of source, whitespace runs collapsed; a long call keeps its callee: `nn.Sequential(...)`.
  std::string text;
  for (char c : m_.textOf(e)) {
    bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r';
    if (space && (text.empty() || text.back() == ' ' || text.back() == '(')) continue;
    text += space ? ' ' : c;
  }
  if (text.size() > 48) {
    text = m_.expr(e).kind == ExprKind::Call ? std::string(m_.textOf(m_.expr(e).lhs)) + "(...)" : text.substr(0, 45) + "...";
  }
  std::string out = "`";  // appended: GCC 12 warns falsely (-Wrestrict) on "`" + std::string
  out += text;
  out += "` at line ";
  out += std::to_string(m_.expr(e).span.line);
  return out;
}

NodeId Sizes::bindingOf(NodeId name) const {
  const Expr& x = m_.expr(name);
  if (x.kind != ExprKind::Name || x.stmt == kNone) return kNone;
  NodeId site = f_.reachingAssignment(name);
  if (site != kNone) return site;
  // Not assigned in this function: a parameter is unknown, a module constant is known when the
  // module binds it exactly once.
  uint32_t fn = m_.stmt(x.stmt).function;
  const Function& func = m_.functions[fn];
  for (uint32_t i = 0; i < func.paramCount; ++i)
    if (m_.params[func.firstParam + i].name == x.text) return kNone;
  if (fn == 0 || !f_.assignmentsOf(fn, x.text).empty()) return kNone;  // assigned on some paths only
  const std::vector<NodeId>& top = f_.assignmentsOf(0, x.text);
  return top.size() == 1 ? top.front() : kNone;
}

std::optional<int64_t> Sizes::intValue(NodeId e) const { return intIn(e, nullptr, 0); }

std::optional<int64_t> Sizes::intIn(NodeId e, const Bindings* env, int depth) const {
  if (e == kNone || depth > kMaxDepth) return std::nullopt;
  const Expr& x = m_.expr(e);
  switch (x.kind) {
    case ExprKind::Number: {
      std::string digits;
      for (char c : x.text) {
        if (c == '_') continue;
        if (c < '0' || c > '9') return std::nullopt;  // floats, hex, suffixes: not a size
        digits += c;
      }
      if (digits.empty() || digits.size() > 15) return std::nullopt;
      return std::stoll(digits);
    }
    case ExprKind::UnaryOp: {  // `-1`: an axis counted from the end
      if (x.text != "-") return std::nullopt;
      auto v = intIn(x.lhs, env, depth + 1);
      if (!v) return std::nullopt;
      return -*v;
    }
    case ExprKind::BinOp: {
      auto a = intIn(x.lhs, env, depth + 1), b = intIn(x.rhs, env, depth + 1);
      if (!a || !b) return std::nullopt;
      if (x.text == "*") return *a * *b;
      if (x.text == "+") return *a + *b;
      if (x.text == "-") return *a - *b;
      if (x.text == "//" && *b > 0 && *a >= 0) return *a / *b;  // C++ truncates where Python floors
      return std::nullopt;
    }
    case ExprKind::Name: {
      if (env) {
        auto it = env->find(x.text);
        if (it != env->end()) return intIn(it->second, nullptr, depth + 1);
      }
      NodeId site = bindingOf(e);
      if (site == kNone) return std::nullopt;
      const Stmt& s = m_.stmt(site);
      if (s.kind != StmtKind::Assign || s.targets.count != 1 || m_.expr(s.target).kind != ExprKind::Name) return std::nullopt;
      return intIn(s.value, nullptr, depth + 1);
    }
    default:
      return std::nullopt;
  }
}

int Sizes::dtypeBytes(NodeId e) const {
  const std::string& c = m_.canonical(e);
  std::string_view last = names::lastComponent(c);
  if (!startsWith(c, "torch.")) return 0;
  if (last == "float16" || last == "half" || last == "bfloat16") return 2;
  if (last == "float32" || last == "float") return 4;
  if (last == "float64" || last == "double" || last == "int64" || last == "long") return 8;
  if (last == "int32" || last == "int") return 4;
  if (last == "int8" || last == "uint8" || last == "bool") return 1;
  return 0;
}

std::optional<KnownShape> Sizes::shapeOf(NodeId e) const { return shapeIn(e, 0); }

std::optional<KnownShape> Sizes::shapeIn(NodeId e, int depth) const {
  if (e == kNone || depth > kMaxDepth) return std::nullopt;
  const Expr& x = m_.expr(e);
  if (x.kind == ExprKind::Name) {
    NodeId site = bindingOf(e);
    if (site == kNone) return std::nullopt;
    const Stmt& s = m_.stmt(site);
    if (s.kind == StmtKind::For) return batchOfLoader(site, e);
    if (s.kind != StmtKind::Assign || s.targets.count != 1) return std::nullopt;
    const Expr& t = m_.expr(s.target);
    if (t.kind == ExprKind::Name) return shapeIn(s.value, depth + 1);
    // `x, y = x.cuda(), y.cuda()`: the element of the tuple in the name's place.
    const Expr& v = m_.expr(s.value);
    if (t.kind != ExprKind::Container || v.kind != ExprKind::Container || t.argCount != v.argCount) return std::nullopt;
    for (uint32_t i = 0; i < t.argCount; ++i) {
      const Expr& el = m_.expr(m_.args[t.firstArg + i].value);
      if (el.kind == ExprKind::Name && el.text == x.text) return shapeIn(m_.args[v.firstArg + i].value, depth + 1);
    }
    return std::nullopt;
  }
  if (x.kind != ExprKind::Call) return std::nullopt;
  std::string_view meth = methodName(m_, e);
  const std::string& canon = m_.canonical(e);
  if (!meth.empty() && canon.empty()) {
    // Moves and conversions keep the shape: `.to(device)`, `.cuda()`, `.bfloat16()`.
    auto base = shapeIn(receiverOf(m_, e), depth + 1);
    if (!base) return std::nullopt;
    if (int bytes = conversionBytes(meth)) base->elementBytes = bytes;
    else if (meth == "to") {
      int bytes = dtypeBytes(keywordArg(m_, e, "dtype"));
      for (uint32_t i = 0; !bytes && i < 2; ++i) bytes = dtypeBytes(positionalArg(m_, e, i));
      if (bytes) base->elementBytes = bytes;
    } else if (meth != "cuda" && meth != "contiguous" && meth != "detach" && meth != "requires_grad_") {
      return std::nullopt;
    }
    return base;
  }
  std::string_view last = names::lastComponent(canon);
  if (!startsWith(canon, "torch.") || canon.find('.', 6) != std::string::npos) return std::nullopt;
  static constexpr std::array<std::string_view, 6> factories = {"randn", "rand", "zeros", "ones", "empty", "randint"};
  if (std::find(factories.begin(), factories.end(), last) == factories.end()) return std::nullopt;
  KnownShape shape;
  shape.elementBytes = last == "randint" ? 8 : 4;
  if (int bytes = dtypeBytes(keywordArg(m_, e, "dtype"))) shape.elementBytes = bytes;
  std::vector<NodeId> dims;
  NodeId sizeArg = keywordArg(m_, e, "size");
  uint32_t firstSize = last == "randint" ? 1 : 0;  // randint(high, size) / randint(low, high, size)
  if (last == "randint") {
    NodeId a2 = positionalArg(m_, e, 2), a1 = positionalArg(m_, e, 1);
    if (sizeArg == kNone) sizeArg = a2 != kNone ? a2 : a1;
  }
  if (sizeArg == kNone) {
    NodeId first = positionalArg(m_, e, firstSize);
    if (first != kNone && m_.expr(first).kind == ExprKind::Container) sizeArg = first;
  }
  if (sizeArg != kNone) {
    const Expr& c = m_.expr(sizeArg);
    if (c.kind != ExprKind::Container || (c.shape != shape::kTuple && c.shape != shape::kList)) return std::nullopt;
    for (const Arg& a : argsOf(m_, c)) dims.push_back(a.value);
  } else {
    for (const Arg& a : argsOf(m_, x)) {
      if (!a.keyword.empty()) continue;
      dims.push_back(a.value);
    }
  }
  if (dims.empty()) return std::nullopt;
  for (NodeId d : dims) {
    auto v = intIn(d, nullptr, depth + 1);
    if (!v || *v <= 0) return std::nullopt;
    shape.dims.push_back(*v);
  }
  shape.source = at(e);
  return shape;
}

std::optional<KnownShape> Sizes::batchOfLoader(NodeId forStmt, NodeId target) const {
  // `for x, y in loader` / `for i, (x, y) in enumerate(loader)` over
  // `DataLoader(TensorDataset(X, Y), batch_size=B)`: x is X's rows, B at a time.
  const Stmt& s = m_.stmt(forStmt);
  NodeId iter = s.value, pattern = s.target;
  if (m_.expr(iter).kind == ExprKind::Call && calleeName(m_, iter) == "enumerate" && m_.canonical(iter).empty()) {
    iter = positionalArg(m_, iter, 0);
    const Expr& p = m_.expr(pattern);
    if (p.kind != ExprKind::Container || p.argCount != 2) return std::nullopt;
    pattern = m_.args[p.firstArg + 1].value;
  }
  const Expr& p = m_.expr(pattern);
  if (p.kind != ExprKind::Container) return std::nullopt;
  int index = -1;
  for (uint32_t i = 0; i < p.argCount; ++i) {
    const Expr& el = m_.expr(m_.args[p.firstArg + i].value);
    if (el.kind == ExprKind::Name && el.text == m_.expr(target).text) index = static_cast<int>(i);
  }
  if (index < 0) return std::nullopt;
  auto l = tensorLoader(iter);
  if (!l) return std::nullopt;
  auto all = shapeIn(positionalArg(m_, l->dataset, static_cast<uint32_t>(index)), 1);
  if (!all || all->dims.empty()) return std::nullopt;
  all->dims[0] = std::min(all->dims[0], l->batch);
  all->source = "batches of " + std::to_string(l->batch) + " from " + at(l->loader) + " over " + all->source;
  return all;
}

std::optional<Sizes::TensorLoader> Sizes::tensorLoader(NodeId iter) const {
  NodeId loader = f_.constructorOf(iter);
  if (loader == kNone || names::lastComponent(m_.canonical(loader)) != "DataLoader") return std::nullopt;
  auto batch = intIn(keywordArg(m_, loader, "batch_size"), nullptr, 0);
  if (!batch) batch = intIn(positionalArg(m_, loader, 1), nullptr, 0);
  if (!batch || *batch <= 0) return std::nullopt;
  NodeId dataset = keywordArg(m_, loader, "dataset");
  if (dataset == kNone) dataset = positionalArg(m_, loader, 0);
  NodeId ds = m_.expr(dataset).kind == ExprKind::Call ? dataset : f_.constructorOf(dataset);
  if (ds == kNone || names::lastComponent(m_.canonical(ds)) != "TensorDataset") return std::nullopt;
  return TensorLoader{loader, ds, *batch};
}

std::optional<int64_t> Sizes::loaderLength(NodeId iter) const {
  // `len(DataLoader(TensorDataset(X, ...), batch_size=B))`: ceil(N / B), or floor with drop_last.
  if (m_.expr(iter).kind == ExprKind::Call && calleeName(m_, iter) == "enumerate" && m_.canonical(iter).empty())
    iter = positionalArg(m_, iter, 0);
  auto l = tensorLoader(iter);
  if (!l) return std::nullopt;
  NodeId dropLast = keywordArg(m_, l->loader, "drop_last");
  if (dropLast != kNone && !isTrueLiteral(m_, dropLast) && !isFalseLiteral(m_, dropLast)) return std::nullopt;
  // A sampler or batch sampler decides how many batches there are.
  for (std::string_view k : {"sampler", "batch_sampler"})
    if (keywordArg(m_, l->loader, k) != kNone) return std::nullopt;
  auto all = shapeIn(positionalArg(m_, l->dataset, 0), 1);
  if (!all || all->dims.empty()) return std::nullopt;
  int64_t n = all->dims[0];
  return dropLast != kNone && isTrueLiteral(m_, dropLast) ? n / l->batch : (n + l->batch - 1) / l->batch;
}

std::optional<int64_t> Sizes::tripCount(NodeId forStmt) const {
  const Stmt& s = m_.stmt(forStmt);
  if (s.kind != StmtKind::For || m_.expr(s.value).kind != ExprKind::Call) {
    if (s.kind == StmtKind::For) return loaderLength(s.value);
    return std::nullopt;
  }
  if (calleeName(m_, s.value) != "range" || !m_.canonical(s.value).empty()) return loaderLength(s.value);
  NodeId a0 = positionalArg(m_, s.value, 0), a1 = positionalArg(m_, s.value, 1);
  if (positionalArg(m_, s.value, 2) != kNone) return std::nullopt;
  auto hi = intIn(a1 != kNone ? a1 : a0, nullptr, 0);
  auto lo = a1 != kNone ? intIn(a0, nullptr, 0) : std::optional<int64_t>(0);
  if (!hi || !lo || *hi <= *lo) return std::nullopt;
  return *hi - *lo;
}

}  // namespace oomlint
