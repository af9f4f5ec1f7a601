// Pass 7b, forwards whose graph nobody uses: a forward run with autograd on whose output reaches
// nothing but operations that drop history (`.detach()`, `.item()`, `.tolist()`, `argmax`, a
// comparison), directly or through views, arithmetic and local names, in a function that runs no
// backward. Such a forward keeps its activations for a backward that never comes, like one on an
// evaluation path; the function's name and the module's mode say nothing here, the data flow does.
// Typical: code that met "Can't call numpy() on Tensor that requires grad" and added `.detach()`.
#include <unordered_map>

#include "facts/builder.h"
#include "facts/torch_api.h"

namespace oomlint {

namespace {

/// Methods whose result carries no history: the value sinks.
bool dropsHistory(std::string_view method) {
  return method == "detach" || method == "item" || method == "tolist" || method == "argmax" || method == "argmin";
}

/// Methods that say how big a tensor is and nothing of its values.
bool readsShape(std::string_view method) {
  return method == "size" || method == "numel" || method == "dim" || method == "nelement";
}

/// Methods whose result carries the receiver's graph on (views, casts, moves, element-wise maps,
/// reductions): where the result goes, the graph goes.
bool passesGraph(std::string_view method) {
  static constexpr std::string_view kMethods[] = {
      "cpu",     "cuda",       "to",      "float",       "half",    "double", "squeeze", "unsqueeze",
      "view",    "reshape",    "flatten", "permute",     "transpose", "contiguous", "softmax", "log_softmax",
      "sigmoid", "tanh",       "exp",     "mean",        "sum",     "clone",  "t",       "abs"};
  for (std::string_view m : kMethods)
    if (method == m) return true;
  return false;
}

/// torch functions of one tensor argument (or of several, for `cat`/`stack`) whose result carries
/// its graph, and those whose result carries none.
bool passesGraphCanonical(std::string_view canon) {
  static constexpr std::string_view kCalls[] = {"torch.softmax", "torch.log_softmax", "torch.sigmoid", "torch.tanh",
                                                "torch.exp",     "torch.cat",         "torch.stack",   "torch.squeeze",
                                                "torch.nn.functional.softmax", "torch.nn.functional.log_softmax",
                                                "torch.nn.functional.sigmoid", "torch.nn.functional.normalize"};
  for (std::string_view c : kCalls)
    if (canon == c) return true;
  return false;
}

bool dropsHistoryCanonical(std::string_view canon) { return canon == "torch.argmax" || canon == "torch.argmin"; }

}  // namespace

/// Follows one forward's output through a function. Every use must drop its history; one that
/// keeps it, or that the walk cannot see through (a call of anything else, a return, a store, a
/// closure), stops the walk with "used".
class DiscardWalk {
 public:
  DiscardWalk(const Facts& f, const Module& m, uint32_t fn) : f_(f), m_(m), fn_(fn) {}

  /// Starts the walk of another forward of the same function (the index of names stays).
  void restart() {
    budget_ = 256;
    valueSink_ = kNone;
  }

  /// True when the value of `e` only reaches history-dropping uses; valueSink() is the first use
  /// that reads values (not just the shape).
  bool discarded(NodeId e) {
    if (--budget_ < 0) return false;
    NodeId s = m_.expr(e).stmt;
    const Stmt& st = m_.stmt(s);
    NodeId p = parentOf(e);
    if (p == kNone) {
      if (st.value != e) return false;
      if (st.kind == StmtKind::If || st.kind == StmtKind::While) return sink(e);
      return st.kind == StmtKind::Assign && boundDiscarded(s);
    }
    const Expr& px = m_.expr(p);
    switch (px.kind) {
      case ExprKind::Attribute: {
        if (px.lhs != e) return false;
        if (px.text == "shape" || px.text == "dtype" || px.text == "device" || px.text == "ndim") return true;
        if (px.text == "data") return sink(p);
        NodeId call = parentOf(p);
        if (call == kNone || m_.expr(call).kind != ExprKind::Call || m_.expr(call).lhs != p) return discarded(p);  // `out.logits`
        if (dropsHistory(px.text)) return sink(call);
        if (readsShape(px.text)) return true;
        return passesGraph(px.text) && discarded(call);
      }
      case ExprKind::Subscript: return px.lhs == e && discarded(p);
      case ExprKind::BinOp:
      case ExprKind::UnaryOp:
      case ExprKind::Conditional: return discarded(p);
      case ExprKind::Compare:  // `out is None` reads no value
        for (const Arg& a : argsOf(m_, px))
          if (m_.expr(a.value).kind == ExprKind::NoneLit) return true;
        return sink(p);
      case ExprKind::Call: {
        if (px.lhs == e) return false;
        const std::string& canon = m_.canonical(p);
        if (dropsHistoryCanonical(canon)) return sink(p);
        return passesGraphCanonical(canon) && discarded(p);
      }
      default: return false;
    }
  }

  NodeId valueSink() const { return valueSink_; }

 private:
  bool sink(NodeId at) {
    if (valueSink_ == kNone) valueSink_ = at;
    return true;
  }

  /// The expression of statement `s`'s tree whose operand (receiver, argument, element) `e` is.
  NodeId parentOf(NodeId e) const {
    const Stmt& st = m_.stmt(m_.expr(e).stmt);
    for (NodeId x = st.firstExpr; x < st.endExpr; ++x) {
      const Expr& px = m_.expr(x);
      if (px.stmt != m_.expr(e).stmt) continue;
      if (px.lhs == e || px.rhs == e) return x;
      for (uint32_t i = 0; i < px.argCount; ++i)
        if (m_.args[px.firstArg + i].value == e) return x;
    }
    return kNone;
  }

  /// `out = model(x)` (or `a, b = model(x)`): every later read of the names, and every read in a
  /// loop that holds the binding, drops the history. A name a closure or lambda reads escapes.
  bool boundDiscarded(NodeId s) {
    const Stmt& st = m_.stmt(s);
    if (st.targets.count != 1) return false;
    std::vector<NodeId> names;
    const Expr& t = m_.expr(st.target);
    if (t.kind == ExprKind::Name) names.push_back(st.target);
    else if (t.kind == ExprKind::Container && (t.shape == shape::kTuple || t.shape == shape::kList))
      for (const Arg& a : argsOf(m_, t)) {
        if (m_.expr(a.value).kind != ExprKind::Name) return false;
        names.push_back(a.value);
      }
    else
      return false;
    for (NodeId target : names)
      if (!readsDiscarded(s, m_.expr(target).text)) return false;
    return true;
  }

  bool readsDiscarded(NodeId s, std::string_view name) {
    uint32_t bound = m_.stmt(s).span.begin;
    NodeId loop = f_.enclosingLoop(s);
    for (NodeId x : mentions(name)) {
      const Expr& xe = m_.expr(x);
      if (xe.owner != fn_) return false;  // read by a lambda or a nested function
      NodeId at = xe.stmt;
      if (at == s) continue;
      bool later = m_.stmt(at).span.begin > bound;
      if (!later && !(loop != kNone && f_.within(at, loop))) continue;  // read before the binding exists
      const Stmt& ast = m_.stmt(at);
      if (parentOf(x) == kNone && x != ast.value) {
        if (ast.kind == StmtKind::Assign) continue;  // rebound (a plain or a tuple target)
        if (ast.kind == StmtKind::For && ast.target == x) continue;
        return false;
      }
      if (ast.kind == StmtKind::Assign && isTargetPart(ast, x)) continue;
      if (!discarded(x)) return false;
    }
    return true;
  }

  /// `x` is an element of a tuple target of `st` (`a, out = ...`).
  bool isTargetPart(const Stmt& st, NodeId x) const {
    for (NodeId t : items(m_, st.targets)) {
      if (t == x) return true;
      const Expr& te = m_.expr(t);
      if (te.kind == ExprKind::Container)
        for (const Arg& a : argsOf(m_, te))
          if (a.value == x) return true;
    }
    return false;
  }

  /// Every Name expression spelled `name` in the function (its lambdas included) and in functions
  /// nested in it, indexed once per function.
  const std::vector<NodeId>& mentions(std::string_view name) {
    if (!indexed_) {
      indexed_ = true;
      for (NodeId s : f_.statementsOf(fn_)) index(s);
      for (uint32_t g = fn_ + 1; g < m_.functions.size(); ++g)
        if (nestedIn(g))
          for (NodeId s : f_.statementsOf(g)) index(s);
    }
    static const std::vector<NodeId> kNone_;
    auto it = mentions_.find(name);
    return it == mentions_.end() ? kNone_ : it->second;
  }

  void index(NodeId s) {
    const Stmt& st = m_.stmt(s);
    for (NodeId x = st.firstExpr; x < st.endExpr; ++x)
      if (m_.expr(x).stmt == s && m_.expr(x).kind == ExprKind::Name) mentions_[m_.expr(x).text].push_back(x);
  }

  bool nestedIn(uint32_t g) const {
    for (uint32_t p = m_.functions[g].parent, guard = 0; guard < 64; p = m_.functions[p].parent, ++guard) {
      if (p == fn_) return true;
      if (p == 0) return false;
    }
    return false;
  }

  const Facts& f_;
  const Module& m_;
  uint32_t fn_;
  int budget_ = 256;
  NodeId valueSink_ = kNone;
  bool indexed_ = false;
  std::unordered_map<std::string_view, std::vector<NodeId>> mentions_;
};

void FactsBuilder::findDiscardedForwards() {
  f_.discardedAt_.clear();
  std::vector<char> hasForward(m_.classes.size(), 0);
  for (const Function& g : m_.functions)
    if (g.cls >= 0 && !g.isLambda && g.name == "forward") hasForward[static_cast<size_t>(g.cls)] = 1;
  for (uint32_t fn = 0; fn < m_.functions.size(); ++fn) {
    const Function& func = m_.functions[fn];
    if (func.isLambda || func.name == "__init__") continue;  // a constructor's forward measures a shape once
    if (isTestFunction(m_, fn)) continue;
    // A module's own methods are its API: their callers choose the grad mode (`predict` that
    // returns `self(x).argmax(1)` may well run under the caller's no_grad).
    if (func.cls >= 0 && (f_.isModuleClass(func.cls) || hasForward[static_cast<size_t>(func.cls)])) continue;
    bool trains = false;
    for (const StepEvent& e : f_.events(fn)) trains = trains || (e.kind & (event::kBackward | event::kAutogradGrad | event::kUpdate));
    if (trains) continue;
    DiscardWalk walk(f_, m_, fn);
    for (NodeId s : f_.fnStmts_[fn]) {
      if (f_.gradMode_[s] != GradMode::Enabled) continue;
      for (NodeId c : f_.stmtCalls_[s]) {
        // `model.get_decoder()`: a call without arguments is an accessor far more often than a forward.
        if (!f_.isForwardCall(c) || m_.expr(c).argCount == 0 || f_.evalOpener_.count(c) || m_.expr(c).owner != fn) continue;
        if (f_.values_[c].history != Tri::Yes) continue;  // a frozen module records no graph
        walk.restart();
        if (walk.discarded(c) && walk.valueSink() != kNone) f_.discardedAt_[c] = walk.valueSink();
      }
    }
  }
}

NodeId Facts::discardedAt(NodeId forward) const {
  auto it = discardedAt_.find(forward);
  return it == discardedAt_.end() ? kNone : it->second;
}

}  // namespace oomlint
