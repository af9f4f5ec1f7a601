// Definitions and uses of names within a function: which assignments reach a reader, where a
// name is bound and read (one index per function, built on first use), whether a path reaches a
// backward call or a return, and whether a loop reads a path before writing it.
#include <algorithm>

#include "facts/builder.h"

namespace oomlint {

void Facts::definitionsOf(NodeId e, std::vector<NodeId>& out) const {
  out.clear();
  if (e == kNone || m_.expr(e).kind != ExprKind::Name || m_.expr(e).stmt == kNone) return;
  NodeId site = useSite_[e];
  // `scores += bias` updates in place: its value and what the target held before both count.
  for (int guard = 0; guard < 8 && site != kNone && m_.stmt(site).kind == StmtKind::AugAssign; ++guard) {
    out.push_back(site);
    NodeId target = m_.stmt(site).target;
    site = m_.expr(target).kind == ExprKind::Name ? useSite_[target] : kNone;
  }
  if (site != kNone) {
    if (m_.stmt(site).kind == StmtKind::Assign) out.push_back(site);
    return;
  }
  if (!out.empty()) return;
  // No single assignment reaches it: the last few assignments of the name before the reader.
  NodeId reader = m_.expr(e).stmt;
  const std::vector<NodeId>& assigns = assignmentsOf(m_.stmt(reader).function, m_.expr(e).text);
  uint32_t begin = m_.stmt(reader).span.begin;
  auto last = std::lower_bound(assigns.begin(), assigns.end(), begin,
                               [&](NodeId s, uint32_t pos) { return m_.stmt(s).span.begin < pos; });
  auto first = last - std::min<ptrdiff_t>(last - assigns.begin(), 8);
  out.assign(first, last);
}

namespace {

/// The names an assignment target rebinds: a name, or names inside a tuple or list unpack.
template <typename Fn>
void boundNames(const Module& m, NodeId target, Fn&& fn, int depth = 0) {
  if (target == kNone || depth > 8) return;
  const Expr& t = m.expr(target);
  if (t.kind == ExprKind::Name) fn(t.text);
  else if (t.kind == ExprKind::Container)
    for (const Arg& a : argsOf(m, t)) boundNames(m, a.value, fn, depth + 1);
  else if (t.kind == ExprKind::UnaryOp && t.text == "*") boundNames(m, t.lhs, fn, depth + 1);  // `a, *rest = ...`
}

}  // namespace

const Facts::NameIndex& Facts::nameIndex(uint32_t fn) const {
  auto [it, fresh] = nameIndex_.try_emplace(fn);
  NameIndex& index = it->second;
  if (!fresh) return index;
  for (NodeId s : fnStmts_[fn]) {
    const Stmt& st = m_.stmt(s);
    if (st.kind == StmtKind::Assign)
      for (NodeId t : items(m_, st.targets))
        boundNames(m_, t, [&](std::string_view name) {
          std::vector<NodeId>& list = index.assigns[name];
          if (list.empty() || list.back() != s) list.push_back(s);
        });
    forSubtree(st.value, [&](NodeId x) {
      if (m_.expr(x).kind != ExprKind::Name) return;
      std::vector<NodeId>& list = index.reads[m_.expr(x).text];
      if (list.empty() || list.back() != s) list.push_back(s);
    });
  }
  return index;
}

const std::vector<NodeId>& Facts::assignmentsOf(uint32_t fn, std::string_view name) const {
  static const std::vector<NodeId> kNoStatements;
  const NameIndex& index = nameIndex(fn);
  auto it = index.assigns.find(name);
  return it == index.assigns.end() ? kNoStatements : it->second;
}

const std::vector<NodeId>& Facts::readersOf(uint32_t fn, std::string_view name) const {
  static const std::vector<NodeId> kNoStatements;
  const NameIndex& index = nameIndex(fn);
  auto it = index.reads.find(name);
  return it == index.reads.end() ? kNoStatements : it->second;
}

const std::unordered_set<std::string_view>& Facts::backwardPaths(uint32_t fn) const {
  // The paths (and their dotted prefixes) that the function's backward calls mention, once.
  auto [it, fresh] = backwardPaths_.try_emplace(fn);
  std::unordered_set<std::string_view>& paths = it->second;
  if (fresh)
    for (const StepEvent& e : events_[fn]) {
      if (!(e.kind & (event::kBackward | event::kAutogradGrad)) || e.call == kNone) continue;
      if (!isBackwardCall(e.call) && !isAutogradGradCall(e.call) && callTargets(e.call).empty()) continue;
      forSubtree(e.call, [&](NodeId x) {
        ExprKind k = m_.expr(x).kind;
        if (k != ExprKind::Name && k != ExprKind::Attribute) return;
        std::string_view p = pathKey(x);
        if (p.empty()) return;
        paths.insert(p);
        for (size_t i = 0; i < p.size(); ++i)
          if (p[i] == '.') paths.insert(p.substr(0, i));
      });
    }
  return paths;
}

bool Facts::flowsToBackward(uint32_t fn, std::string_view path) const {
  return !path.empty() && backwardPaths(fn).count(path) != 0;
}

bool Facts::backwardComputedFrom(uint32_t fn, std::string_view name) const {
  if (name.empty()) return false;
  // The names the backward calls mention, then the names their assignments read, to a fixed point.
  const std::unordered_set<std::string_view>& mentioned = backwardPaths(fn);
  if (mentioned.count(name)) return true;
  std::vector<std::string_view> pending(mentioned.begin(), mentioned.end());
  std::unordered_set<std::string_view> seen(pending.begin(), pending.end());
  while (!pending.empty()) {
    std::string_view p = pending.back();
    pending.pop_back();
    if (p.find('.') != std::string_view::npos) continue;  // assignments bind plain names
    for (NodeId a : assignmentsOf(fn, p)) {
      if (m_.stmt(a).value == kNone) continue;
      forSubtree(m_.stmt(a).value, [&](NodeId x) {
        if (m_.expr(x).kind != ExprKind::Name) return;
        std::string_view read = pathKey(x);
        if (!read.empty() && seen.insert(read).second) pending.push_back(read);
      });
    }
  }
  return seen.count(name) != 0;
}

bool Facts::keptStateReachesBackward(uint32_t fn, std::string_view path) const {
  if (flowsToBackward(fn, path)) return true;
  // The object as a whole (`self.record(out)` stores into some attribute of it) matches every
  // call on `self` that reaches a backward: only attribute paths are followed further.
  if (path == "self") return false;
  bool onSelf = path.starts_with("self.");
  int32_t cls = classOfFunction(fn);
  if (onSelf && cls >= 0)
    for (uint32_t g = 1; g < m_.functions.size(); ++g)
      if (g != fn && classOfFunction(g) == cls && flowsToBackward(g, path)) return true;
  // Up the callers that run it per iteration; a depth bound keeps mutual recursion finite.
  uint32_t at = fn;
  for (int depth = 0; depth < 16; ++depth) {
    NodeId call = stepCallOf(at);
    if (call == kNone) break;
    at = m_.stmt(m_.expr(call).stmt).function;
    if (flowsToBackward(at, path)) return true;
  }
  return false;
}

NodeId Facts::forwardStepOf(uint32_t fn) const {
  if (fn == 0 || fn >= m_.functions.size()) return kNone;
  const Function& f = m_.functions[fn];
  if (f.name != "forward" || f.isLambda || f.defStmt == kNone || !isModuleClass(f.cls)) return kNone;
  if (frameworkStep(fn) || stepCallOf(fn) != kNone) return kNone;  // this file's own loop runs it
  return f.defStmt;
}

const std::vector<NodeId>& Facts::attributeWriters(std::string_view attr) const {
  static const std::vector<NodeId> kNoStatements;
  if (!attributeWriters_) {
    attributeWriters_ = std::make_unique<std::unordered_map<std::string_view, std::vector<NodeId>>>();
    auto& writers = *attributeWriters_;
    // The attribute a target or receiver names: `x.attr` itself or any item or slice of it.
    auto note = [&](NodeId e, NodeId s) {
      while (e != kNone && m_.expr(e).kind == ExprKind::Subscript) e = m_.expr(e).lhs;
      if (e == kNone || m_.expr(e).kind != ExprKind::Attribute) return;
      std::vector<NodeId>& list = writers[m_.expr(e).text];
      if (list.empty() || list.back() != s) list.push_back(s);
    };
    for (NodeId s = 0; s < m_.stmts.size(); ++s) {
      const Stmt& st = m_.stmt(s);
      if (m_.functions[st.function].name == "__init__") continue;
      if (st.kind == StmtKind::Assign || st.kind == StmtKind::Delete)
        for (NodeId t : items(m_, st.targets)) {
          note(t, s);
          if (m_.expr(t).kind == ExprKind::Container)  // `out, self.hidden = ...`
            for (const Arg& a : argsOf(m_, m_.expr(t))) note(a.value, s);
        }
      if ((st.kind == StmtKind::Expr || st.kind == StmtKind::Assign) && st.value != kNone) {
        // `feats.clear()`, `last = feats.pop()`, `state.detach_()`
        std::string_view meth = methodName(m_, st.value);
        if (meth == "clear" || meth == "pop" || meth == "popleft" || meth == "remove" || meth == "detach_" || meth == "zero_")
          note(receiverOf(m_, st.value), s);
      }
    }
  }
  auto it = attributeWriters_->find(attr);
  return it == attributeWriters_->end() ? kNoStatements : it->second;
}

bool Facts::carriedAcrossForwards(NodeId stmt, NodeId target) const {
  const Stmt& st = m_.stmt(stmt);
  const Function& fun = m_.functions[st.function];
  if (st.kind != StmtKind::Assign || fun.name != "forward" || !isModuleClass(fun.cls)) return false;
  const Expr& t = m_.expr(target);
  if (t.kind != ExprKind::Attribute || !isSelfName(m_, t.lhs)) return false;
  std::string_view key = pathKey(target);
  if (key.empty() || readWithHistory(st.value, key, fun.defStmt) == kNone) return false;
  // Every other writer must be a first state made without history under a test of it
  // (`if self.hidden is None: self.hidden = self.init_hidden(x)`).
  for (NodeId o : attributeWriters(t.text)) {
    if (o == stmt) continue;
    const Stmt& os = m_.stmt(o);
    if (os.kind != StmtKind::Assign || value(os.value).history != Tri::No) return false;
    if (m_.functions[os.function].name == "__init__" && m_.functions[os.function].cls == fun.cls) continue;  // the first state
    if (os.function != st.function) return false;
    bool guarded = false;
    for (NodeId p = os.parent; p != kNone && !guarded; p = m_.stmt(p).parent)
      guarded = m_.stmt(p).kind == StmtKind::If && mentionsPath(m_.stmt(p).value, key);
    if (!guarded) return false;
  }
  return true;
}

NodeId Facts::readWithHistory(NodeId e, std::string_view path, NodeId scope, int depth) const {
  if (e == kNone || path.empty() || depth > 4) return kNone;
  // Calls without history (and `.data`, `.grad`): nothing under them passes any on.
  std::vector<Span> stripped;
  forSubtree(e, [&](NodeId x) {
    const Expr& ex = m_.expr(x);
    // `h is None`, `a and b`: a truth value, no tensor.
    bool strips = ex.kind == ExprKind::Compare || ex.kind == ExprKind::BoolOp ||
                  (ex.kind == ExprKind::Call ? values_[x].history == Tri::No
                                             : ex.kind == ExprKind::Attribute && (ex.text == "data" || ex.text == "grad"));
    if (strips) stripped.push_back(ex.span);
  });
  auto underStripped = [&](const Span& sp) {
    return std::any_of(stripped.begin(), stripped.end(), [&](const Span& s) { return sp.begin >= s.begin && sp.end <= s.end; });
  };
  NodeId found = kNone;
  std::vector<NodeId> locals;
  forSubtree(e, [&](NodeId x) {
    const Expr& ex = m_.expr(x);
    if (found != kNone || (ex.kind != ExprKind::Name && ex.kind != ExprKind::Attribute) || underStripped(ex.span)) return;
    std::string_view p = pathKey(x);
    if (p == path || (p.size() > path.size() && p.substr(0, path.size()) == path && p[path.size()] == '.')) found = x;
    else if (ex.kind == ExprKind::Name) locals.push_back(x);
  });
  if (found != kNone) return found;
  for (NodeId n : locals) {
    NodeId site = useSite_[n];
    if (site == kNone || site == m_.expr(e).stmt || m_.stmt(site).kind != StmtKind::Assign) continue;
    bool inScope = m_.stmt(scope).kind == StmtKind::FunctionDef ? m_.stmt(site).function == m_.stmt(scope).def : within(site, scope);
    if (!inScope) continue;
    if (readWithHistory(m_.stmt(site).value, path, scope, depth + 1) != kNone) return n;
  }
  return kNone;
}

bool Facts::isReturned(uint32_t fn, std::string_view path) const {
  for (NodeId s : fnStmts_[fn]) {
    const Stmt& st = m_.stmt(s);
    if (st.kind == StmtKind::Return && mentionsPath(st.value, path)) return true;
  }
  return false;
}

namespace {

enum class Exposure : uint8_t { None, Read, Written };

class ExposureWalker {
 public:
  ExposureWalker(const Facts& f, const Module& m, std::string_view path) : f_(f), m_(m), path_(path) {}

  Exposure block(List body, uint32_t from = 0) const {
    uint32_t k = 0;
    for (NodeId s : items(m_, body)) {
      if (k++ < from) continue;
      Exposure e = statement(s);
      if (e != Exposure::None) return e;
    }
    return Exposure::None;
  }

 private:
  bool reads(NodeId e) const { return e != kNone && f_.mentionsPath(e, path_); }
  bool binds(NodeId target) const {
    bool found = false;
    const Expr& t = m_.expr(target);
    if (t.kind == ExprKind::Name || t.kind == ExprKind::Attribute) return f_.pathKey(target) == path_;
    if (t.kind == ExprKind::Container)
      for (const Arg& a : argsOf(m_, t))
        if (binds(a.value)) found = true;
    return found;
  }

  Exposure statement(NodeId s) const {
    const Stmt& st = m_.stmt(s);
    switch (st.kind) {
      case StmtKind::Assign: {
        if (reads(st.value)) return Exposure::Read;
        bool written = false;
        for (NodeId t : items(m_, st.targets)) {
          if (binds(t)) written = true;
          else if (reads(t)) return Exposure::Read;  // `h[0] = x` uses what `h` holds
        }
        return written ? Exposure::Written : Exposure::None;
      }
      case StmtKind::AugAssign: return reads(st.target) || reads(st.value) ? Exposure::Read : Exposure::None;
      case StmtKind::If: {
        if (reads(st.value)) return Exposure::Read;
        Exposure a = block(st.body), b = block(st.orelse);
        if (a == Exposure::Read || b == Exposure::Read) return Exposure::Read;
        return a == Exposure::Written && b == Exposure::Written ? Exposure::Written : Exposure::None;
      }
      case StmtKind::For:
      case StmtKind::While:
        if (reads(st.value)) return Exposure::Read;
        return block(st.body) == Exposure::Read || block(st.orelse) == Exposure::Read ? Exposure::Read : Exposure::None;
      case StmtKind::With: {
        for (NodeId t : items(m_, st.targets))
          if (reads(t)) return Exposure::Read;
        return block(st.body);
      }
      case StmtKind::Try: {
        Exposure body = block(st.body);
        if (body == Exposure::Read) return body;
        for (uint32_t h = 0; h < st.handlerCount; ++h)
          if (block(m_.handlers[st.firstHandler + h].body) == Exposure::Read) return Exposure::Read;
        return body;
      }
      case StmtKind::FunctionDef:
      case StmtKind::ClassDef: return Exposure::None;
      default: {
        if (reads(st.value)) return Exposure::Read;
        for (NodeId t : items(m_, st.targets))
          if (reads(t)) return Exposure::Read;
        return Exposure::None;
      }
    }
  }

  const Facts& f_;
  const Module& m_;
  std::string_view path_;
};

}  // namespace

NodeId Facts::onlyBindingValue(uint32_t fn, std::string_view name) const {
  const std::vector<NodeId>& assigns = assignmentsOf(fn, name);
  if (assigns.size() != 1) return kNone;
  const Stmt& st = m_.stmt(assigns.front());
  if (st.kind != StmtKind::Assign || st.targets.count != 1 || m_.expr(st.target).kind != ExprKind::Name) return kNone;
  return st.value;
}

NodeId Facts::dictEntryOf(NodeId subscript) const {
  const Expr& x = m_.expr(subscript);
  if (x.kind != ExprKind::Subscript || x.rhs == kNone || x.stmt == kNone || m_.expr(x.rhs).kind != ExprKind::String) return kNone;
  const Expr& dict = m_.expr(x.lhs);
  if (dict.kind != ExprKind::Name) return kNone;
  // The function that binds the name: a closure reads its enclosing function's dict.
  uint32_t fn = m_.stmt(x.stmt).function;
  for (int guard = 0; guard < 16 && assignmentsOf(fn, dict.text).empty(); ++guard) {
    if (fn == 0) return kNone;
    fn = m_.functions[fn].parent;
  }
  NodeId bound = onlyBindingValue(fn, dict.text);
  if (bound == kNone || m_.expr(bound).kind != ExprKind::Container || m_.expr(bound).shape != shape::kDict) return kNone;
  std::string_view wanted = stringContents(m_.expr(x.rhs).text);
  for (const Arg& a : argsOf(m_, m_.expr(bound))) {
    std::string_view key;
    NodeId value;
    if (stringKeyedEntry(m_, a.value, key, value) && key == wanted) return value;
  }
  return kNone;
}

bool Facts::readBeforeWritten(NodeId loop, std::string_view path) const {
  if (loop == kNone || path.empty()) return false;
  const Stmt& l = m_.stmt(loop);
  if (l.kind == StmtKind::While && l.value != kNone && mentionsPath(l.value, path)) return true;
  auto [memo, fresh] = firstMentions_.try_emplace(loop);
  if (fresh) {
    uint32_t k = 0;
    for (NodeId s : items(m_, l.body)) {
      const Stmt& st = m_.stmt(s);
      for (NodeId e = st.firstExpr; e < st.endExpr; ++e) {
        ExprKind kind = m_.expr(e).kind;
        if (kind != ExprKind::Name && kind != ExprKind::Attribute) continue;
        std::string_view key = pathKey(e);
        for (size_t dot = key.find('.'); dot != std::string_view::npos; dot = key.find('.', dot + 1)) memo->second.try_emplace(key.substr(0, dot), k);
        if (!key.empty()) memo->second.try_emplace(key, k);
      }
      ++k;
    }
  }
  auto first = memo->second.find(path);
  if (first == memo->second.end()) return false;  // the body never mentions it
  return ExposureWalker(*this, m_, path).block(l.body, first->second) == Exposure::Read;
}


}  // namespace oomlint
