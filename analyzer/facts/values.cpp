// Pass 5, values: what is known about every expression's value (autograd history, GPU), by
// abstract interpretation of each function body, callees first so a call of a function of this
// file answers with that function's summary. Then a second round with what backward calls
// prove: the tensor `.backward()` is called on carries history, and so do its siblings (the
// other outputs of the same call, tuple or dict).
//
// Join rule at control-flow merges: a fact holds after the merge only if it holds on both paths
// (Yes and Unknown give Unknown); a name bound on one path only is unknown afterwards.
#include <algorithm>
#include <optional>
#include <unordered_set>

#include "facts/builder.h"
#include "facts/names.h"
#include "facts/torch_api.h"

namespace oomlint {

using namespace torch_api;

namespace {

Tri joinTri(Tri a, Tri b) { return a == b ? a : Tri::Unknown; }

/// Any Yes wins; all No gives No; otherwise Unknown. How history flows through arithmetic.
Tri anyYes(Tri acc, Tri v) {
  if (acc == Tri::Yes || v == Tri::Yes) return Tri::Yes;
  if (acc == Tri::No && v == Tri::No) return Tri::No;
  return Tri::Unknown;
}

ValueFact joinFact(const ValueFact& a, const ValueFact& b) {
  ValueFact j;
  j.history = joinTri(a.history, b.history);
  j.device = joinTri(a.device, b.device);
  j.scalarLoss = a.scalarLoss && b.scalarLoss;
  j.accumulated = a.accumulated || b.accumulated;
  j.leaf = a.leaf && b.leaf;
  j.collection = a.collection || b.collection;
  j.lossElems = a.lossElems && b.lossElems;
  j.origin = a.origin == b.origin ? a.origin : (j.history == Tri::Yes ? a.origin : kNone);
  // A path that leaves a parameter's history behind (`x.item()` under an `isinstance` test) may be
  // the one the value takes: the parameters flow only when no side is known to be history-free.
  if (a.params == b.params) j.params = a.params;
  else if (a.history != Tri::No && b.history != Tri::No) j.params = a.params | b.params;
  // Likewise a path known to be on the host (`x.cpu()` on one branch) keeps the device open.
  if (a.device != Tri::No && b.device != Tri::No) j.devParams = a.devParams | b.devParams;
  return j;
}

struct Binding {
  ValueFact fact;
  NodeId loop = kBoundOutsideLoops;
  NodeId site = kNone;   // the assignment statement that made the value (`x = x + 1` included)
  NodeId bound = kNone;  // the statement that made the binding updates keep (`total = 0` for `total += x`)
  bool accumulated = false;  // an update added a loss to it (`total += loss`): it carries history
};

/// Variable path -> what is known about its value. Branches and loops do not copy it: while a
/// mark is open every change is journaled, and rolling back to the mark restores the state and
/// hands back what changed (the delta), so a join touches only the names a branch bound. A
/// 100k-line function with thousands of `if`s must cost linear time, not a copy per branch.
class Env {
 public:
  /// A key's value after a branch: nullopt when the branch left it unbound.
  using Delta = std::vector<std::pair<std::string_view, std::optional<Binding>>>;
  using Mark = size_t;

  const Binding* get(std::string_view key) const {
    if (index_.empty()) {
      for (const Item& kv : items_)
        if (kv.first == key) return kv.second ? &*kv.second : nullptr;
      return nullptr;
    }
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    const std::optional<Binding>& b = items_[it->second].second;
    return b ? &*b : nullptr;
  }
  std::optional<Binding> lookup(std::string_view key) const {
    const Binding* b = get(key);
    return b ? std::optional<Binding>(*b) : std::nullopt;
  }
  void put(std::string_view key, const Binding& b) { set(key, b); }
  void remove(std::string_view key) {
    if (get(key)) set(key, std::nullopt);
  }
  /// Sets (or, with nullopt, unbinds) a key, journaling the old value while a mark is open.
  void set(std::string_view key, const std::optional<Binding>& b) {
    std::optional<Binding>* slot = find(key);
    if (marks_ > 0) journal_.emplace_back(key, slot ? *slot : std::nullopt);
    if (slot) {
      *slot = b;
      return;
    }
    if (!b) return;
    items_.emplace_back(key, b);
    if (!index_.empty()) index_.emplace(key, static_cast<uint32_t>(items_.size() - 1));
    else if (items_.size() > kIndexFrom) reindex();
  }
  /// Opens a mark; every change until rollback() is journaled.
  Mark mark() {
    ++marks_;
    return journal_.size();
  }
  /// Restores the state of `m` and returns each changed key's value just before the rollback.
  Delta rollback(Mark m) {
    Delta delta;
    std::unordered_set<std::string_view> seen;  // used once the delta outgrows a linear scan
    for (size_t i = journal_.size(); i-- > m;) {
      auto& [key, old] = journal_[i];
      bool known = false;
      if (!seen.empty()) {
        known = !seen.insert(key).second;
      } else {
        for (const auto& d : delta) known = known || d.first == key;
        if (!known && delta.size() >= kIndexFrom)
          for (const auto& d : delta) seen.insert(d.first);
        if (!seen.empty()) seen.insert(key);
      }
      if (!known) delta.emplace_back(key, lookup(key));
      *find(key) = old;
    }
    journal_.resize(m);
    --marks_;
    return delta;
  }

 private:
  using Item = std::pair<std::string_view, std::optional<Binding>>;
  static constexpr size_t kIndexFrom = 48;
  std::optional<Binding>* find(std::string_view key) {
    if (index_.empty()) {
      for (Item& kv : items_)
        if (kv.first == key) return &kv.second;
      return nullptr;
    }
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].second;
  }
  void reindex() {
    index_.clear();
    for (size_t i = 0; i < items_.size(); ++i) index_.emplace(items_[i].first, static_cast<uint32_t>(i));
  }
  std::vector<Item> items_;  // unbound keys stay as nullopt slots so journal entries keep their place
  std::unordered_map<std::string_view, uint32_t> index_;
  std::vector<std::pair<std::string_view, std::optional<Binding>>> journal_;
  int marks_ = 0;
};

/// Join of one key's values on two paths: bound on one path only gives unknown facts and an
/// ambiguous lifetime, unless reading the name where it is unbound raises (`unboundRaises`: a
/// Python function's own local, bound only in a loop, a branch or a `try`): a read that returns
/// reads the one binding.
std::optional<Binding> joinBinding(const std::optional<Binding>& a, const std::optional<Binding>& b, bool unboundRaises = false) {
  if (!a && !b) return std::nullopt;
  if (!a || !b) {
    Binding u;
    if (unboundRaises) u.fact = a ? a->fact : b->fact;
    u.loop = kBoundAmbiguous;
    return u;
  }
  Binding j;
  j.fact = joinFact(a->fact, b->fact);
  j.accumulated = a->accumulated && b->accumulated;  // grown on every path (`if`/`else` both append a loss)
  // A sum of losses on one path and its graph-free start on the other (`total = 0`, then
  // `total += loss` in a loop or a branch): whenever it holds more than its start, it holds the
  // history, so the join is the accumulated value. (Only losses: a count read off a model's
  // output, `n += out["n"]`, is no tensor as often as it is one.)
  if (a->bound == b->bound && a->bound != kNone) {
    const Binding* grown = a->accumulated ? &*a : b->accumulated ? &*b : nullptr;
    const Binding* start = grown == &*a ? &*b : &*a;
    // A list of the caller's losses (`losses.append(crit(outputs[k], y))`) grows the same way.
    bool callersLosses = grown && grown->fact.history == Tri::Unknown && grown->fact.lossElems && grown->fact.params != 0 &&
                         start->fact.history == Tri::No;
    if (grown && (grown->fact.history == Tri::Yes || callersLosses) &&
        (start->fact.history == Tri::No || (start->accumulated && start->fact.history == Tri::Yes))) {
      j.fact = grown->fact;
      j.fact.device = joinTri(a->fact.device, b->fact.device);
      j.accumulated = true;
    }
  }
  j.loop = a->loop == b->loop ? a->loop : kBoundAmbiguous;
  j.site = a->site == b->site ? a->site : kNone;
  j.bound = a->bound == b->bound ? a->bound : kNone;
  return j;
}

/// A key's value on a path that produced `delta`, starting from the current state.
std::optional<Binding> valueAfter(const Env& env, const Env::Delta& delta, std::string_view key) {
  for (const auto& d : delta)
    if (d.first == key) return d.second;
  return env.lookup(key);
}

/// The keys any of the deltas touched, each once.
std::vector<std::string_view> touchedKeys(const std::vector<const Env::Delta*>& deltas) {
  std::vector<std::string_view> keys;
  std::unordered_set<std::string_view> seen;
  for (const Env::Delta* d : deltas)
    for (const auto& kv : *d)
      if (seen.insert(kv.first).second) keys.push_back(kv.first);
  return keys;
}

bool passThroughBuiltin(std::string_view f) {
  return f == "tuple" || f == "list" || f == "sorted" || f == "reversed" || f == "sum" || f == "max" || f == "min" ||
         f == "next" || f == "dict";
}

}  // namespace

/// The interpreter of one file. Internal to values.cpp; the builder owns one per round.
class ValueWalker {
 public:
  ValueWalker(FactsBuilder& b, Facts& f, const Module& m) : b_(b), f_(f), m_(m) {}

  /// Walks `fn`. A function its callers run in different grad modes (a Lightning `_shared_step`
  /// of `training_step` and `validation_step`) is walked first as if entered with autograd on,
  /// for what it returns (each call site applies its own mode), then as it is, for its values.
  void function(uint32_t fn) {
    // A lambda is walked as a function only where a name bound to it is called (`step = lambda
    // b: ...`, `auto step = [&](...) {...};`); other lambdas (sort keys, callbacks) stay values.
    if (m_.functions[fn].isLambda && b_.callSites_[fn].empty()) return;
    Summary& s = f_.summaries_[fn];
    if (fn == 0 || s.entryGrad != GradMode::Unknown) {
      walkFunction(fn);
      return;
    }
    enteredEnabled_ = true;
    walkFunction(fn);
    enteredEnabled_ = false;
    ValueFact returns = s.returns;
    std::vector<ValueFact> elems = s.returnElems;
    walkFunction(fn);
    s.returns = returns;
    s.returnElems = std::move(elems);
  }

  /// A plain name that is a local of the Python function walked, and of no scope around it (which
  /// a `global` or `nonlocal` could reach): reading it where no assignment ran raises.
  bool raisesWhenUnbound(std::string_view key) const {
    if (m_.lang != Lang::Python || fn_ == 0 || key.find_first_of(".[") != std::string_view::npos) return false;
    for (uint32_t g = m_.functions[fn_].parent;; g = m_.functions[g].parent) {
      if (!f_.assignmentsOf(g, key).empty()) return false;
      if (g == 0) return true;
    }
  }

  void walkFunction(uint32_t fn) {
    const Function& fun = m_.functions[fn];
    fn_ = fn;
    Env env;
    currentLoop_ = kBoundOutsideLoops;
    loopDepth_ = 0;
    returns_ = ReturnAcc{};
    // Parameters are bound before any loop of the function; their values are unknown.
    for (uint32_t i = 0; i < fun.paramCount; ++i) {
      Binding param;
      std::string_view name = m_.params[fun.firstParam + i].name;
      if (i < 32 && name != "self") param.fact.params = param.fact.devParams = 1u << i;  // placeholders for the caller's argument
      env.put(name, param);
    }
    walk(env, fun.body);
    // A Python lambda's body is its return value.
    if (fun.lambdaBody != kNone) onReturn(fun.lambdaBody, eval(env, fun.lambdaBody));
    Summary& s = f_.summaries_[fn];
    s.raisesOnly = !returns_.any && !returns_.none && endsRaising(fun.body);
    if (returns_.yields) {
      s.returns = returns_.yielded;
      s.returns.collection = true;
      s.returns.scalarLoss = false;
      s.returnElems.clear();
    } else if (!returns_.any) {
      s.returns = ValueFact{returns_.none ? Tri::No : Tri::No, Tri::No, false, kNone};
      s.returnElems.clear();
    } else {
      s.returns = returns_.joined;
      s.returns.params = returns_.strips || s.returns.history == Tri::No ? 0 : returns_.params;
      if (returns_.elemsOk && returns_.arity > 0) s.returnElems = returns_.elems;
      else s.returnElems.clear();
    }
  }

 private:
  /// The block's last statement raises, or is an `if` whose every branch ends raising: control
  /// never falls off its end.
  bool endsRaising(List body) const {
    NodeId last = kNone;
    for (NodeId s : items(m_, body)) last = s;
    if (last == kNone) return false;
    const Stmt& st = m_.stmt(last);
    if (st.kind == StmtKind::Raise) return true;
    return st.kind == StmtKind::If && endsRaising(st.body) && endsRaising(st.orelse);
  }

  struct ReturnAcc {
    bool any = false, none = false, elemsOk = true;
    bool yields = false;  // a generator function: its `return` ends the iteration
    ValueFact yielded;    // joined over every `yield`
    uint32_t params = 0;  // the parameters some return is computed from
    bool strips = false;  // a return other than a constant carries no history: it may strip a parameter's
    int arity = -1;
    ValueFact joined;
    std::vector<ValueFact> elems;
  };

  FactsBuilder& b_;
  Facts& f_;
  const Module& m_;
  NodeId currentLoop_ = kBoundOutsideLoops;
  uint32_t fn_ = 0;  // the function walked
  int loopDepth_ = 0;
  ReturnAcc returns_;
  bool addsLoss_ = false;  // the update being bound adds a loss (addsLoss)
  bool enteredEnabled_ = false;  // walking as if the function were entered with autograd on

  /// An update of `target` by `value` adds a loss: the output of a loss function, a sum of losses
  /// (`batch_loss += criterion(seq, y)` per sequence, then `epoch_loss += batch_loss`), or a value a
  /// backward of this function runs on (`loss.backward(); total += loss`).
  bool addsLoss(NodeId target, NodeId value, const ValueFact& v) const {
    if (v.scalarLoss || v.accumulated) return true;
    std::string_view self = f_.pathKey(target);
    uint32_t fn = m_.stmt(m_.expr(value).stmt).function;
    bool backwarded = false;
    b_.forSubtree(value, [&](NodeId x) {
      const Expr& ex = m_.expr(x);
      if (ex.kind != ExprKind::Name && ex.kind != ExprKind::Attribute) return;
      std::string_view p = f_.pathKey(x);
      if (!p.empty() && p != self && f_.flowsToBackward(fn, p)) backwarded = true;
    });
    return backwarded;
  }

  /// `losses.append(loss)`: a list of losses carries their history (`torch.stack(losses).mean()`
  /// returned to the caller), as `total += loss` does; joined at the loop's exit like it.
  void collectLoss(Env& env, NodeId call, std::string_view meth) {
    NodeId list = receiverOf(m_, call);
    NodeId item = positionalArg(m_, call, meth == "insert" ? 1 : 0);
    std::string_view key = f_.pathKey(list);
    const Binding* old = key.empty() ? nullptr : env.get(key);
    if (!old || item == kNone) return;
    const ValueFact& v = f_.values_[item];
    // A loss of the caller's argument (`losses.append(F.mse_loss(outputs[k], y))` in a helper
    // that returns `losses`): the list has history where the caller's argument does.
    if (v.history == Tri::Unknown && v.scalarLoss && v.params != 0 && old->fact.history != Tri::Yes) {
      Binding grown = *old;
      grown.fact.history = Tri::Unknown;
      grown.fact.params |= v.params;
      grown.fact.devParams |= v.devParams;
      grown.fact.collection = true;
      grown.fact.lossElems = old->fact.lossElems || old->fact.history == Tri::No;
      grown.fact.accumulated = true;
      grown.accumulated = true;
      env.put(key, grown);
      return;
    }
    if (v.history != Tri::Yes || !addsLoss(list, item, v)) return;
    Binding grown = *old;
    grown.fact.lossElems = v.scalarLoss && (old->fact.lossElems || old->fact.history == Tri::No);
    grown.fact.history = Tri::Yes;
    grown.fact.origin = f_.values_[item].origin;
    grown.fact.scalarLoss = false;
    grown.fact.accumulated = true;
    grown.accumulated = true;
    env.put(key, grown);
  }

  GradMode modeAt(NodeId stmt) const {
    if (stmt == kNone) return GradMode::Unknown;
    return enteredEnabled_ ? b_.gradIfEntered_[stmt] : f_.gradMode_[stmt];
  }

  ValueFact eval(Env& env, NodeId e) {
    if (e == kNone) return {};
    ValueFact out = evalInner(env, e);
    if (out.history == Tri::No) out.params = 0;  // no history to pass on, whatever the argument
    if (out.device == Tri::No) out.devParams = 0;  // on the host, whatever the argument
    NodeId proof = b_.historyEvidence_.empty() ? kNone : b_.historyEvidence_[e];
    if (proof != kNone && out.history == Tri::Unknown) {
      out.history = Tri::Yes;
      out.origin = proof;
      if (b_.lossByCallee_.count(e)) out.scalarLoss = true;
    }
    f_.values_[e] = out;
    return out;
  }

  ValueFact evalInner(Env& env, NodeId e) {
    const Expr& x = m_.expr(e);
    ValueFact out;
    switch (x.kind) {
      case ExprKind::Name: {
        if (const Binding* b = env.get(x.text)) {
          out = b->fact;
          f_.useBind_[e] = b->loop;
          f_.useSite_[e] = b->site;
          f_.useBound_[e] = b->bound;
        } else if (f_.gpuNames_.count(x.text)) {
          out.history = Tri::No;
        }
        break;
      }
      case ExprKind::Attribute: {
        ValueFact base = eval(env, x.lhs);
        std::string_view key = f_.pathKey(e);
        if (x.text == "data") {
          out.history = Tri::No;
          out.device = base.device;
        } else if (isNonTensorAttribute(x.text)) {
          out.history = Tri::No;
          out.device = Tri::No;
        } else if (x.text == "grad") {
          out.history = Tri::No;
          out.device = base.device;
        } else if (const Binding* b = key.empty() ? nullptr : env.get(key)) {
          out = b->fact;
          break;
        } else if (base.history == Tri::Yes) {
          out.history = Tri::Yes;  // `outputs.loss`, `out.logits`
          out.device = base.device;
          out.origin = base.origin;
        } else if (base.params != 0 && base.history == Tri::Unknown) {
          out.params = base.params;  // `outputs.loss` of a parameter
        } else if (base.device == Tri::Yes && base.history == Tri::No && f_.kindOf(x.lhs) != Kind::Module) {
          out.history = Tri::No;  // `out.logits` of a forward under no_grad: still on the GPU
          out.device = Tri::Yes;
        }
        // `batch.x`, `out.logits` of what a parameter gives: where it lives.
        if (!isNonTensorAttribute(x.text) && f_.kindOf(x.lhs) != Kind::Module) out.devParams = base.devParams;
        break;
      }
      case ExprKind::Subscript: {
        ValueFact base = eval(env, x.lhs);
        eval(env, x.rhs);
        out.history = base.history;
        out.device = base.device;
        out.origin = base.origin;
        out.accumulated = base.accumulated;
        out.scalarLoss = base.lossElems;
        out.params = base.params;
        out.devParams = base.devParams;
        if (base.leaf && modeAt(x.stmt) != GradMode::Disabled) out.history = Tri::Yes;  // `w[0]` of a leaf
        break;
      }
      case ExprKind::Call: out = evalCall(env, e); break;
      case ExprKind::BinOp: {
        ValueFact l = eval(env, x.lhs), r = eval(env, x.rhs);
        out.history = anyYes(l.history, r.history);
        out.device = anyYes(l.device, r.device);
        out.origin = l.history == Tri::Yes ? l.origin : r.origin;
        out.scalarLoss = (l.scalarLoss && (r.history == Tri::No)) || (r.scalarLoss && l.history == Tri::No) ||
                         (l.scalarLoss && r.scalarLoss);
        out.accumulated = l.accumulated || r.accumulated;
        out.params = l.params | r.params;
        out.devParams = l.devParams | r.devParams;
        if (l.leaf || r.leaf) out.history = Tri::Yes;  // computed from a leaf that requires grad
        if (modeAt(x.stmt) == GradMode::Disabled) out.history = Tri::No;
        break;
      }
      case ExprKind::UnaryOp: {
        out = eval(env, x.lhs);
        if (out.leaf && modeAt(x.stmt) != GradMode::Disabled) out.history = Tri::Yes;  // `-w`
        out.leaf = false;
        if (x.text == "not" || x.text == "!") out = ValueFact{Tri::No, Tri::No, false, kNone};
        break;
      }
      case ExprKind::Compare:
      case ExprKind::BoolOp:
        for (const Arg& a : argsOf(m_, x)) eval(env, a.value);
        out.history = Tri::No;
        break;
      case ExprKind::Number:
      case ExprKind::String:
      case ExprKind::Bool:
      case ExprKind::NoneLit:
        out.history = Tri::No;
        out.device = Tri::No;
        break;
      case ExprKind::Container: {
        if (shape::isComprehension(x.shape)) return comprehension(env, e);
        Tri h = Tri::No, d = Tri::No;
        bool losses = x.argCount > 0;
        for (const Arg& a : argsOf(m_, x)) {
          ValueFact v = eval(env, a.value);
          losses = losses && v.scalarLoss && a.keyword.empty();
          h = anyYes(h, v.history);
          d = anyYes(d, v.device);
          out.params |= v.params;
          out.devParams |= v.devParams;
          if (v.history == Tri::Yes && out.origin == kNone) out.origin = v.origin;
        }
        out.history = h;
        out.device = d;
        out.collection = true;
        out.lossElems = losses;
        break;
      }
      case ExprKind::Conditional: {
        bool first = true;
        uint32_t i = 0;
        for (const Arg& a : argsOf(m_, x)) {
          ValueFact v = eval(env, a.value);
          if (i++ == 1) continue;  // the condition
          out = first ? v : joinFact(out, v);
          first = false;
        }
        out.scalarLoss = false;
        break;
      }
      case ExprKind::Lambda:
        out.history = Tri::No;
        out.device = Tri::No;
        break;
      case ExprKind::Other:
        if (x.shape == shape::kYield || x.shape == shape::kYieldFrom) {
          if (x.argCount == 1) onYield(x.shape, m_.args[x.firstArg].value, eval(env, m_.args[x.firstArg].value));
          break;  // what `send` passes in: unknown
        }
        if (x.shape == shape::kPair) {
          // A dict entry's value is what the dict holds.
          uint32_t i = 0;
          for (const Arg& a : argsOf(m_, x)) {
            ValueFact v = eval(env, a.value);
            if (i++ == 1) out = v;
          }
          break;
        }
        for (const Arg& a : argsOf(m_, x)) eval(env, a.value);
        break;
    }
    return out;
  }

  /// `[f(x) for x in xs if c]`: the loop variables are bound to elements of their iterables in a
  /// scope of their own; the result holds what the element expression gives.
  ValueFact comprehension(Env& env, NodeId e) {
    const Expr& x = m_.expr(e);
    Env& inner = env;
    Env::Mark scope = inner.mark();
    NodeId elem = kNone;
    uint32_t i = 0;
    for (const Arg& a : argsOf(m_, x)) {
      if (i++ == 0) {
        elem = a.value;
        continue;
      }
      const Expr& part = m_.expr(a.value);
      if (part.shape == shape::kForClause && part.argCount >= 2) {
        NodeId target = m_.args[part.firstArg].value;
        NodeId iterable = m_.args[part.firstArg + 1].value;
        eval(inner, iterable);
        bindElements(inner, target, iterable, kNone);
        f_.values_[a.value] = ValueFact{};
      } else {
        eval(inner, a.value);
      }
    }
    ValueFact v = eval(inner, elem);
    inner.rollback(scope);
    ValueFact out;
    out.history = v.history;
    out.device = v.device;
    out.origin = v.origin;
    out.params = v.params;
    out.devParams = v.devParams;
    out.collection = true;
    out.lossElems = v.scalarLoss;
    return out;
  }

  /// What an element of an iterated value is known to be.
  /// Binds a loop's target to the elements of `iterable` (already evaluated). `for k, v in
  /// d.items()` and `for v in d.values()` take the dict's values (a dict of losses carries their
  /// history); the keys carry nothing.
  void bindElements(Env& env, NodeId target, NodeId iterable, NodeId site) {
    const Expr& x = m_.expr(iterable);
    const Expr& t = m_.expr(target);
    // `for a, b in zip(xs, ys)` and `for i, x in enumerate(xs)`: each position takes the elements
    // of its own iterable (a list of outputs zipped with targets keeps the outputs' history; the
    // count carries none).
    if (t.kind == ExprKind::Container && x.kind == ExprKind::Call && m_.canonical(iterable).empty() &&
        m_.expr(x.lhs).kind == ExprKind::Name) {
      std::string_view f = calleeName(m_, iterable);
      std::vector<NodeId> parts;
      for (const Arg& a : argsOf(m_, x))
        if (a.keyword.empty()) parts.push_back(a.value);
      if (f == "zip" && parts.size() == t.argCount && parts.size() == x.argCount) {
        uint32_t i = 0;
        for (const Arg& a : argsOf(m_, t)) bindElements(env, a.value, parts[i++], site);
        return;
      }
      if (f == "enumerate" && t.argCount == 2 && !parts.empty()) {
        ValueFact count;
        count.history = Tri::No;
        count.device = Tri::No;
        bind(env, m_.args[t.firstArg].value, count, kNone, false, site);
        bindElements(env, m_.args[t.firstArg + 1].value, parts[0], site);
        return;
      }
    }
    NodeId dict = x.kind == ExprKind::Call && x.argCount == 0 ? receiverOf(m_, iterable) : kNone;
    std::string_view meth = dict != kNone ? methodName(m_, iterable) : std::string_view();
    if (meth == "values") {
      bind(env, target, elementOf(f_.values_[dict], dict), kNone, false, site);
      return;
    }
    if (meth == "items" && t.kind == ExprKind::Container && t.argCount == 2) {
      ValueFact key;
      key.history = Tri::No;
      bind(env, m_.args[t.firstArg].value, key, kNone, false, site);
      bind(env, m_.args[t.firstArg + 1].value, elementOf(f_.values_[dict], dict), kNone, false, site);
      return;
    }
    bind(env, target, elementOf(f_.values_[iterable], iterable), kNone, false, site);
  }

  ValueFact elementOf(const ValueFact& it, NodeId iterable) const {
    ValueFact elem;
    NodeId iter = unwrapIterable(m_, iterable);
    if (iter != kNone && f_.kindOf(iter) == Kind::Loader) {
      elem.history = Tri::No;
      if (f_.loaderOnGpu(iter)) elem.device = Tri::Yes;  // a launcher's loader moves its batches
    } else if (iter != kNone && m_.expr(iter).kind == ExprKind::Call && calleeName(m_, iter) == "range") {
      elem.history = Tri::No;
      elem.device = Tri::No;
    } else if (it.history == Tri::Yes) {
      elem.history = Tri::Yes;
      elem.device = it.device;
      elem.origin = it.origin;
      elem.devParams = it.devParams;
      elem.scalarLoss = it.lossElems;
    } else {
      if (it.device == Tri::Yes) elem.device = Tri::Yes;
      elem.devParams = it.devParams;
      if (it.history == Tri::Unknown) elem.params = it.params;  // the caller's list of losses
      elem.scalarLoss = it.lossElems;
    }
    return elem;
  }

  ValueFact evalCall(Env& env, NodeId e) {
    const Expr& x = m_.expr(e);
    ValueFact callee;
    NodeId recv = receiverOf(m_, e);
    if (recv != kNone) callee = eval(env, recv);
    else if (x.lhs != kNone) eval(env, x.lhs);
    Tri argHist = Tri::No, argDev = Tri::No;
    NodeId argOrigin = kNone;
    bool anyArg = false, argLeaf = false;
    uint32_t argParams = 0, argDevParams = 0;
    for (const Arg& a : argsOf(m_, x)) {
      ValueFact v = eval(env, a.value);
      argParams |= v.params;
      argDevParams |= v.devParams;
      argLeaf = argLeaf || v.leaf;
      argHist = anyYes(argHist, v.leaf ? Tri::Yes : v.history);
      argDev = anyYes(argDev, v.device);
      if (v.history == Tri::Yes && argOrigin == kNone) argOrigin = v.origin;
      anyArg = true;
    }
    if (!anyArg) argHist = argDev = Tri::No;
    GradMode mode = modeAt(x.stmt);
    const std::string& canon = m_.canonical(e);
    std::string_view meth = methodName(m_, e);
    std::string_view name = calleeName(m_, e);
    ValueFact out;
    // What a differentiable operation makes of its arguments: their history, device and origin.
    auto fromArguments = [&] {
      ValueFact v;
      v.history = mode == GradMode::Disabled ? Tri::No : argHist;
      v.device = argDev;
      v.origin = argOrigin;
      v.params = argParams;
      v.devParams = argDevParams;
      return v;
    };

    if (f_.isForwardCall(e)) {
      out = forwardResult(e, mode, argHist, argDev);
      out.devParams = argDevParams | f_.values_[forwardModule(e)].devParams;
      return out;
    }
    if (f_.isLossCall(e)) {
      out = lossResult(e, mode, argHist, argDev, argOrigin);
      out.params = argParams;
      out.devParams = argDevParams;
      return out;
    }
    // A function of this file: what its summary says it returns. An abstract method (it only
    // raises) says nothing of the override that runs.
    std::span<const uint32_t> targets = f_.callTargets(e);
    if (!targets.empty()) {
      uint32_t concrete = 0, only = 0;
      for (uint32_t t : targets) {
        if (f_.summaries_[t].raisesOnly) continue;
        out = concrete++ ? joinFact(out, f_.summaries_[t].returns) : f_.summaries_[t].returns;
        only = t;
      }
      if (concrete == 0) return ValueFact{};
      if (concrete == 1) out = withArguments(out, e, f_.calleeFunction(only));
      if (mode == GradMode::Disabled) out.history = Tri::No;
      // Walked as if entered with autograd on (function()): from a call whose mode is unknown, the
      // history is unknown too.
      if (mode == GradMode::Unknown && out.history == Tri::Yes &&
          std::any_of(targets.begin(), targets.end(), [&](uint32_t t) { return !f_.summaries_[t].raisesOnly && f_.summaries_[t].entryGrad == GradMode::Unknown; }))
        out.history = Tri::Unknown;
      if (out.history == Tri::Yes) out.origin = e;
      return out;
    }
    if (const ImportedFunction* imp = f_.importedCallee(e)) {  // a function of another module
      out = withArguments(imp->summary->returns, e, f_.calleeOf(e));
      out.origin = kNone;
      if (mode == GradMode::Disabled) out.history = Tri::No;
      if (out.history == Tri::Yes) out.origin = e;
      return out;
    }
    // `loss = optimizer.step(closure)`: the step returns what its closure returns (LBFGS and
    // every optimizer that takes one).
    if (auto handed = f_.closuresHandedTo_.find(e); handed != f_.closuresHandedTo_.end() && handed->second.size() == 1 &&
                                                    f_.isOptimizerStep(e)) {
      out = f_.summaries_[handed->second.front()].returns;
      if (mode == GradMode::Disabled) out.history = Tri::No;
      out.origin = out.history == Tri::Yes ? e : kNone;
      return out;
    }
    if (f_.gathersAcrossProcesses(e)) {  // a collective: no graph, on the launcher's device
      out.history = Tri::No;
      out.device = f_.launcherPlaces(recv) ? Tri::Yes : argDev;
      out.devParams = argDevParams;
      return out;
    }
    // A custom autograd Function runs its forward and records its backward: what it returns
    // carries its inputs' history (a straight-through quantizer's codes).
    if (meth == "apply" && namesAutogradFunction(recv)) return fromArguments();
    if (!meth.empty() && recv != kNone && canon.empty()) {
      // Tensor (or object) method.
      if (isNonDifferentiableMethod(meth)) {
        out.history = Tri::No;
        out.device = leavesDevice(meth) ? Tri::No : callee.device;
        if (!leavesDevice(meth)) out.devParams = callee.devParams;
        return out;
      }
      if (meth == "cpu") {
        out = callee;
        out.device = Tri::No;
        return out;
      }
      if (meth == "cuda" || meth == "to") {
        out = callee;
        // A copy made under no_grad records nothing (one already carrying history may be returned
        // as it is, when it is on that device already).
        if (mode == GradMode::Disabled && out.history == Tri::Unknown) out.history = Tri::No;
        NodeId dev = meth == "to" ? positionalArg(m_, e, 0) : kNone;
        if (meth == "to" && dev == kNone) dev = keywordArg(m_, e, "device");
        if (meth == "cuda" || f_.isGpuDeviceExpr(dev)) out.device = Tri::Yes;
        else if (dev != kNone && isCpuLiteral(dev)) out.device = Tri::No;
        else if (dev != kNone && m_.expr(dev).kind == ExprKind::Attribute && m_.expr(dev).text == "device") {
          out.device = f_.values_[m_.expr(dev).lhs].device;  // `.to(other.device)`
          out.devParams = f_.values_[m_.expr(dev).lhs].devParams;
        } else if (dev != kNone && !isDtype(dev)) {
          out.devParams = 0;  // `.to(device)` of a device oomlint does not know
        }
        return out;
      }
      if (callee.history == Tri::Yes || callee.history == Tri::No) {
        // A method on a tensor whose history is known keeps it (sum, mean, view, clone, ...); on a
        // leaf that requires grad it starts one.
        if (callee.leaf && meth == "requires_grad_") return callee;
        out.history = mode == GradMode::Disabled ? Tri::No : anyYes(callee.leaf ? Tri::Yes : callee.history, argHist);
        out.device = callee.device;
        out.origin = callee.history == Tri::Yes ? callee.origin : argOrigin;
        out.scalarLoss = callee.scalarLoss && (meth == "mean" || meth == "sum" || meth == "float" ||
                                               meth == "double" || meth == "squeeze" || meth == "clone");
        out.accumulated = callee.accumulated && out.history == Tri::Yes;
        out.params = callee.params | argParams;
        out.devParams = callee.devParams;
        if (callee.history == Tri::No && !callee.leaf && argHist != Tri::No) out.history = mode == GradMode::Disabled ? Tri::No : Tri::Unknown;
        return out;
      }
      out.params = callee.params;  // `loss.mean()` of a parameter: the caller's argument decides
      out.devParams = callee.devParams;
      return out;  // unknown receiver, unknown method
    }
    if (canon.empty() && m_.expr(x.lhs).kind == ExprKind::Name) {
      if (isStrippingBuiltin(name)) {
        out.history = Tri::No;
        out.device = Tri::No;
        return out;
      }
      if (passThroughBuiltin(name)) {
        NodeId a = positionalArg(m_, e, 0);
        if (a == kNone) return out;
        out = f_.values_[a];
        out.scalarLoss = false;
        return out;
      }
    }
    if (canon == "torch.autograd.grad") {
      // Gradients carry history only when asked to (higher-order gradients).
      out.history = isTrueLiteral(m_, keywordArg(m_, e, "create_graph")) ? argHist : Tri::No;
      out.device = argDev;
      out.devParams = argDevParams;
      return out;
    }
    if (startsWith(canon, "torch.")) {
      std::string_view last = names::lastComponent(canon);
      if (isTensorFactory(last)) {
        out.history = Tri::No;
        out.leaf = isTrueLiteral(m_, keywordArg(m_, e, "requires_grad"));
        NodeId dev = keywordArg(m_, e, "device");
        out.device = dev != kNone && f_.isGpuDeviceExpr(dev) ? Tri::Yes : (dev == kNone ? Tri::No : Tri::Unknown);
        if (endsWith(last, "_like")) {
          out.device = argDev;
          if (dev == kNone) out.devParams = argDevParams;
        }
        return out;
      }
      if (isNonDifferentiableMethod(last) || startsWith(canon, "torch.cuda.")) {
        out.history = Tri::No;
        out.device = argDev;
        out.devParams = argDevParams;
        return out;
      }
      if (canon == "torch.nn.Parameter" || canon == "torch.nn.parameter.Parameter") {
        NodeId rg = keywordArg(m_, e, "requires_grad");
        if (rg == kNone) rg = positionalArg(m_, e, 1);
        out.history = Tri::No;
        out.device = argDev;
        out.devParams = argDevParams;
        out.leaf = rg == kNone || isTrueLiteral(m_, rg);
        return out;
      }
      if (isUpperInitial(last)) return out;  // classes
    }
    if (passesHistory(canon)) return fromArguments();  // a differentiable torch function, a library's (`hvd.allreduce(loss)`)
    return out;  // a function we know nothing about
  }

  /// What a function returns, seen from one call: where its return is computed from parameters
  /// (`return loss * k`), the arguments given there decide. One that carries history gives the
  /// result history; parameters of the function being walked pass on as placeholders.
  ValueFact withArguments(ValueFact out, NodeId call, const Facts::Callee& callee) const {
    uint32_t placeholders = out.params, devPlaceholders = out.devParams;
    out.params = out.devParams = 0;
    if (!callee) return out;
    // On the GPU when an argument there is (`return model(xs[0])` given GPU batches).
    for (uint32_t i = 0; devPlaceholders != 0 && i < callee.params.size() && i < 32; ++i) {
      if (!(devPlaceholders & (1u << i))) continue;
      NodeId arg = callee.argFor(m_, call, i);
      // `self.forward(*batch)`: whichever parameters the unpacked list fills get its elements.
      if (arg == kNone && !(callee.bound && i == 0)) arg = unpackedArgument(call);
      if (arg == kNone) continue;
      const ValueFact& given = f_.values_[arg];
      out.devParams |= given.devParams;
      if (given.device == Tri::Yes && out.device == Tri::Unknown) out.device = Tri::Yes;
    }
    if (placeholders == 0) return out;
    for (uint32_t i = 0; i < callee.params.size() && i < 32; ++i) {
      if (!(placeholders & (1u << i))) continue;
      NodeId arg = callee.argFor(m_, call, i);
      if (arg == kNone) continue;
      const ValueFact& given = f_.values_[arg];
      out.params |= given.params;
      if (out.history != Tri::Unknown || (given.history != Tri::Yes && !given.leaf)) continue;
      out.history = Tri::Yes;
      out.origin = given.origin != kNone ? given.origin : arg;
    }
    return out;
  }

  /// The list a call unpacks into its positional arguments (`f(*batch)`), when it unpacks one.
  NodeId unpackedArgument(NodeId call) const {
    NodeId found = kNone;
    for (const Arg& a : argsOf(m_, m_.expr(call))) {
      if (a.keyword != "*") continue;
      if (found != kNone) return kNone;
      found = a.value;
    }
    return found;
  }

  /// `torch.float16`, `torch.bfloat16`: `.to(dtype)` keeps the device.
  bool isDtype(NodeId e) const {
    const std::string& canon = m_.canonical(e);
    return startsWith(canon, "torch.") && canon != "torch.device" && m_.expr(e).kind == ExprKind::Attribute;
  }

  /// The module a forward call runs: `model` of `model(x)`; the receiver of `model.forward(x)`
  /// and `backbone.forward_features(x)`.
  NodeId forwardModule(NodeId call) const {
    NodeId callee = m_.expr(call).lhs;
    if (m_.expr(callee).kind == ExprKind::Attribute && (m_.expr(callee).text == "forward" || runsModuleForward(m_.expr(callee).text)))
      callee = m_.expr(callee).lhs;
    return callee;
  }

  bool isCpuLiteral(NodeId dev) const {
    const Expr& d = m_.expr(dev);
    if (d.kind == ExprKind::String) return d.text.find("cpu") != std::string_view::npos;
    return m_.canonical(dev) == "torch.kCPU";
  }

  ValueFact forwardResult(NodeId call, GradMode mode, Tri argHist, Tri argDev) const {
    ValueFact out;
    out.history = mode == GradMode::Disabled ? Tri::No : (mode == GradMode::Enabled ? Tri::Yes : Tri::Unknown);
    NodeId callee = forwardModule(call);
    // A module whose parameters are all frozen adds no history of its own.
    if (out.history == Tri::Yes && f_.isFrozenModule(callee)) out.history = argHist == Tri::Yes ? Tri::Yes : argHist;
    if (out.history == Tri::Yes) out.origin = call;
    std::string_view key = f_.pathKey(callee);
    bool onGpu = (!key.empty() && f_.modulesOnGpu_.count(key)) || f_.placedModule(callee) || f_.values_[callee].device == Tri::Yes;
    out.device = (argDev == Tri::Yes || onGpu) ? Tri::Yes : Tri::Unknown;
    return out;
  }

  static ValueFact lossResult(NodeId call, GradMode mode, Tri argHist, Tri argDev, NodeId argOrigin) {
    ValueFact out;
    out.history = mode == GradMode::Disabled ? Tri::No : argHist;
    out.device = argDev;
    out.scalarLoss = true;
    out.origin = argOrigin != kNone ? argOrigin : call;
    return out;
  }

  /// `v`, the value of `e`, carries history only because a backward's evidence says so.
  bool provenOnly(NodeId e, const ValueFact& v) const {
    return e != kNone && !b_.historyEvidence_.empty() && b_.historyEvidence_[e] != kNone && v.origin == b_.historyEvidence_[e];
  }

  /// True when the assignment's value reads the target itself (`total = total + x`).
  bool readsItself(NodeId target, NodeId value) const {
    std::string_view key = f_.pathKey(target);
    if (key.empty() || value == kNone) return false;
    bool reads = false;
    b_.forSubtree(value, [&](NodeId x) {
      const Expr& ex = m_.expr(x);
      if ((ex.kind == ExprKind::Name || ex.kind == ExprKind::Attribute) && f_.pathKey(x) == key) reads = true;
    });
    return reads;
  }

  void bind(Env& env, NodeId target, const ValueFact& v, NodeId valueExpr, bool update, NodeId site = kNone) {
    if (target == kNone) return;
    const Expr& t = m_.expr(target);
    if (t.kind == ExprKind::Container) {
      const Expr* ve = valueExpr != kNone ? &m_.expr(valueExpr) : nullptr;
      bool pairwise = ve && ve->kind == ExprKind::Container && !shape::isComprehension(ve->shape) && ve->argCount == t.argCount;
      // `loss, logits = helper(...)`: a function of this file returning a tuple answers per element.
      const std::vector<ValueFact>* elems = nullptr;
      if (ve && ve->kind == ExprKind::Call) {
        std::span<const uint32_t> targets = f_.callTargets(valueExpr);
        if (targets.size() == 1 && f_.summaries_[targets[0]].returnElems.size() == t.argCount && !f_.isForwardCall(valueExpr))
          elems = &f_.summaries_[targets[0]].returnElems;
        const ImportedFunction* imp = targets.empty() ? f_.importedCallee(valueExpr) : nullptr;
        if (imp && imp->summary->returnElems.size() == t.argCount && !f_.isForwardCall(valueExpr)) elems = &imp->summary->returnElems;
      }
      uint32_t i = 0;
      for (const Arg& a : argsOf(m_, t)) {
        if (pairwise) {
          NodeId ve2 = m_.args[ve->firstArg + i].value;
          bind(env, a.value, f_.values_[ve2], ve2, false, site);
        } else {
          ValueFact elem = elems ? (*elems)[i] : v;
          // A backward proves only the outputs it reaches: of `loss, rewards = loss_fn(...)` with
          // `loss.backward()`, `rewards` may well be detached (DPO losses return them so).
          if (!elems && provenOnly(valueExpr, v) && !b_.provenTargets_.count({site, f_.pathKey(a.value)})) {
            elem.history = Tri::Unknown;
            elem.origin = kNone;
          }
          elem.scalarLoss = false;
          if (!elems) elem.collection = false;  // a part of what is unpacked
          if (elems && modeAt(m_.expr(valueExpr).stmt) == GradMode::Disabled) elem.history = Tri::No;
          if (elems && elem.history == Tri::Yes) elem.origin = valueExpr;
          // What a backward proved of the call holds for the outputs it reached (`loss` of `loss, n,
          // logs = step(...)` with `loss.backward()`); the others may be detached, or numbers.
          if (elems && v.history == Tri::Yes && elem.history == Tri::Unknown && b_.provenTargets_.count({site, f_.pathKey(a.value)})) {
            elem.history = Tri::Yes;
            elem.origin = v.origin;
          }
          bind(env, a.value, elem, kNone, false, site);
        }
        ++i;
      }
      return;
    }
    std::string_view key = f_.pathKey(target);
    if (key.empty()) return;
    const Binding* old = env.get(key);
    if (t.kind == ExprKind::Name) f_.useBind_[target] = old ? old->loop : kBoundOutsideLoops;
    Binding b;
    b.fact = v;
    b.loop = (update && old) ? old->loop : (update ? kBoundOutsideLoops : currentLoop_);
    b.site = site;
    b.bound = (update && old) ? old->bound : site;
    b.accumulated = update && old && v.history == Tri::Yes && addsLoss_;
    if (b.accumulated) b.fact.accumulated = true;
    if (t.kind == ExprKind::Attribute && !update) b.loop = kBoundOutsideLoops;  // attributes outlive frames
    env.put(key, b);
  }

  void walk(Env& env, List body) {
    for (NodeId s : items(m_, body)) walkStmt(env, s);
  }

  void walkLoopBody(Env& env, NodeId loop) {
    const Stmt& st = m_.stmt(loop);
    NodeId savedLoop = currentLoop_;
    ++loopDepth_;
    currentLoop_ = loop;
    auto once = [&]() {
      if (st.kind == StmtKind::For) bindElements(env, st.target, st.value, loop);
      else eval(env, st.value);
      walk(env, st.body);
    };
    // Joins the state before the loop (current) with the state after its body (delta): names
    // bound before the loop keep their binding site even if the body reassigned them.
    auto joinWithBefore = [&](const Env::Delta& delta) {
      for (const auto& [key, after] : delta) {
        std::optional<Binding> before = env.lookup(key);
        std::optional<Binding> j = joinBinding(before, after, raisesWhenUnbound(key));
        if (before && j && j->loop == kBoundAmbiguous) j->loop = before->loop;
        env.set(key, j);
      }
    };
    Env::Mark m = env.mark();
    once();
    Env::Delta body = env.rollback(m);
    if (loopDepth_ <= 3) {
      // Second pass sees what the previous iteration left (carried state).
      m = env.mark();
      joinWithBefore(body);
      once();
      body = env.rollback(m);
    }
    joinWithBefore(body);
    walk(env, st.orelse);
    --loopDepth_;
    currentLoop_ = savedLoop;
  }

  /// A generator function's call is iterated for what it yields, as a list of those values would
  /// be: `for loss in losses(model, loader)` takes the yielded losses' history.
  void onYield(uint8_t kind, NodeId value, const ValueFact& v) {
    ValueFact each = kind == shape::kYieldFrom ? elementOf(v, value) : v;
    each.params = v.params;
    returns_.yielded = returns_.yields ? joinFact(returns_.yielded, each) : each;
    returns_.yields = true;
  }

  /// `Quantize` in `Quantize.apply(z)` names a custom autograd Function: a class of this file
  /// whose bases (or an in-file base's) are torch's `autograd.Function`.
  bool namesAutogradFunction(NodeId e, int depth = 0) const {
    if (e == kNone || m_.expr(e).kind != ExprKind::Name || depth > 4) return false;
    int32_t cls = f_.classNamed(m_.expr(e).text);
    if (cls < 0) return false;
    for (NodeId b : items(m_, m_.classes[static_cast<size_t>(cls)].bases)) {
      const std::string& canon = m_.canonical(b);
      if (canon == "torch.autograd.Function" || canon == "torch.autograd.function.Function") return true;
      if (canon.empty() && m_.textOf(b) != m_.expr(e).text && namesAutogradFunction(b, depth + 1)) return true;
    }
    return false;
  }

  void onReturn(NodeId value, const ValueFact& v) {
    if (value == kNone || m_.expr(value).kind == ExprKind::NoneLit) {
      returns_.none = true;
      return;
    }
    returns_.joined = returns_.any ? joinFact(returns_.joined, v) : v;
    const Expr& x = m_.expr(value);
    // `return 0` for a missing loss passes nothing on; `return loss.item()` may be the path the
    // caller's tensor takes.
    bool constant = x.kind == ExprKind::Number || x.kind == ExprKind::String || x.kind == ExprKind::Bool;
    if (!constant && v.history == Tri::No) returns_.strips = true;
    returns_.params |= v.params;
    if (x.kind == ExprKind::Container && x.shape == shape::kTuple) {
      int arity = static_cast<int>(x.argCount);
      if (returns_.arity < 0) {
        returns_.arity = arity;
        for (const Arg& a : argsOf(m_, x)) returns_.elems.push_back(f_.values_[a.value]);
      } else if (returns_.arity == arity) {
        uint32_t i = 0;
        for (const Arg& a : argsOf(m_, x)) {
          returns_.elems[i] = joinFact(returns_.elems[i], f_.values_[a.value]);
          ++i;
        }
      } else {
        returns_.elemsOk = false;
      }
    } else {
      returns_.elemsOk = false;
    }
    returns_.any = true;
  }

  void walkStmt(Env& env, NodeId s) {
    const Stmt& st = m_.stmt(s);
    switch (st.kind) {
      case StmtKind::Assign: {
        ValueFact v = eval(env, st.value);
        for (NodeId t : items(m_, st.targets)) {
          // Evaluate subscript/attribute targets' bases so their facts exist.
          const Expr& te = m_.expr(t);
          if (te.kind == ExprKind::Subscript) {
            eval(env, te.lhs);
            eval(env, te.rhs);
            continue;
          }
          if (te.kind == ExprKind::Attribute) eval(env, te.lhs);
          bool update = readsItself(t, st.value);
          addsLoss_ = update && v.history == Tri::Yes && addsLoss(t, st.value, v);
          bind(env, t, v, st.value, update, s);
          addsLoss_ = false;
        }
        break;
      }
      case StmtKind::AugAssign: {
        ValueFact v = eval(env, st.value);
        ValueFact cur = eval(env, st.target);
        const Expr& te = m_.expr(st.target);
        if (te.kind == ExprKind::Name || te.kind == ExprKind::Attribute) {
          ValueFact next;
          next.history = modeAt(s) == GradMode::Disabled ? cur.history : anyYes(cur.history, v.history);
          next.device = anyYes(cur.device, v.device);
          next.origin = cur.history == Tri::Yes ? cur.origin : v.origin;
          next.accumulated = cur.accumulated;
          // A tensor updated in place keeps its identity: a leaf that requires grad stays one
          // (`with torch.no_grad(): w -= lr * w.grad`), and what is computed from it next has history.
          next.leaf = cur.leaf;
          addsLoss_ = next.history == Tri::Yes && addsLoss(st.target, st.value, v);
          bind(env, st.target, next, kNone, true, s);
          addsLoss_ = false;
        }
        break;
      }
      case StmtKind::For:
        eval(env, st.value);
        walkLoopBody(env, s);
        break;
      case StmtKind::While:
        walkLoopBody(env, s);
        break;
      case StmtKind::If: {
        eval(env, st.value);
        Env::Mark m = env.mark();
        walk(env, st.body);
        Env::Delta body = env.rollback(m);
        m = env.mark();
        walk(env, st.orelse);
        Env::Delta orelse = env.rollback(m);
        for (std::string_view key : touchedKeys({&body, &orelse}))
          env.set(key, joinBinding(valueAfter(env, body, key), valueAfter(env, orelse, key), raisesWhenUnbound(key)));
        break;
      }
      case StmtKind::With:
        for (NodeId t : items(m_, st.targets)) eval(env, t);
        walk(env, st.body);
        break;
      case StmtKind::Try: {
        walk(env, st.body);
        if (st.handlerCount == 0) {
          walk(env, st.orelse);
          walk(env, st.finalbody);
          break;
        }
        // After the try: the else path joined with every handler's path, all from the body's state.
        std::vector<Env::Delta> handlers;
        for (uint32_t h = 0; h < st.handlerCount; ++h) {
          const Handler& hd = m_.handlers[st.firstHandler + h];
          Env::Mark m = env.mark();
          if (hd.type != kNone) eval(env, hd.type);
          walk(env, hd.body);
          handlers.push_back(env.rollback(m));
        }
        Env::Mark m = env.mark();
        walk(env, st.orelse);
        Env::Delta orelse = env.rollback(m);
        std::vector<const Env::Delta*> all{&orelse};
        for (const Env::Delta& d : handlers) all.push_back(&d);
        for (std::string_view key : touchedKeys(all)) {
          std::optional<Binding> joined = env.lookup(key);
          bool raises = raisesWhenUnbound(key);
          for (const Env::Delta& d : handlers) joined = joinBinding(joined, valueAfter(env, d, key), raises);
          env.set(key, joinBinding(valueAfter(env, orelse, key), joined, raises));
        }
        walk(env, st.finalbody);
        break;
      }
      case StmtKind::Delete:
        for (NodeId t : items(m_, st.targets)) {
          std::string_view key = f_.pathKey(t);
          if (!key.empty()) env.remove(key);
          else eval(env, t);
        }
        break;
      case StmtKind::Expr: {
        eval(env, st.value);
        // `h.detach_()` / `x.requires_grad_(False)` strip history in place.
        std::string_view meth = methodName(m_, st.value);
        if (meth == "append" || meth == "extend" || meth == "insert") collectLoss(env, st.value, meth);
        NodeId flag = positionalArg(m_, st.value, 0);
        if (meth == "requires_grad_" && (flag == kNone || isTrueLiteral(m_, flag))) {
          std::string_view key = f_.pathKey(receiverOf(m_, st.value));
          if (const Binding* b = key.empty() ? nullptr : env.get(key); b && b->fact.history == Tri::No) {
            Binding leaf = *b;
            leaf.fact.leaf = true;
            env.put(key, leaf);
          }
        }
        if (meth == "detach_" || (meth == "requires_grad_" && isFalseLiteral(m_, flag))) {
          std::string_view key = f_.pathKey(receiverOf(m_, st.value));
          if (const Binding* b = key.empty() ? nullptr : env.get(key)) {
            Binding stripped = *b;
            stripped.fact.history = Tri::No;
            stripped.fact.leaf = false;
            env.put(key, stripped);
          }
        }
        break;
      }
      case StmtKind::Return: {
        ValueFact v = st.value != kNone ? eval(env, st.value) : ValueFact{};
        onReturn(st.value, v);
        break;
      }
      case StmtKind::FunctionDef:
      case StmtKind::ClassDef:
        for (NodeId t : items(m_, st.targets)) eval(env, t);
        if (st.kind == StmtKind::ClassDef) walk(env, st.body);
        break;
      default:
        if (st.value != kNone) eval(env, st.value);
        for (NodeId t : items(m_, st.targets))
          if (t != st.value) eval(env, t);
        break;
    }
  }
};


void FactsBuilder::computeValues() {
  size_t ne = m_.exprs.size();
  f_.values_.assign(ne, ValueFact{});
  f_.useBind_.assign(ne, kBoundOutsideLoops);
  f_.useSite_.assign(ne, kNone);
  f_.useBound_.assign(ne, kNone);
  for (int round = 0; round < 2; ++round) {
    ValueWalker walker(*this, f_, m_);
    for (uint32_t fn : bottomUp_) walker.function(fn);
    if (round == 1) break;
    // What backward calls prove: the value of the assignment that reaches their subject carries
    // history (backward_evidence.cpp).
    std::vector<NodeId> proofs(ne, kNone);
    bool any = collectHistoryEvidence(proofs);
    if (!any) break;
    historyEvidence_ = std::move(proofs);
    std::fill(f_.useBind_.begin(), f_.useBind_.end(), kBoundOutsideLoops);
    std::fill(f_.useSite_.begin(), f_.useSite_.end(), kNone);
    std::fill(f_.useBound_.begin(), f_.useBound_.end(), kNone);
  }
  forgetDetachedEntries();
}

// ------------------------------------------------------------------ queries

bool Facts::isModuleName(uint32_t fn, std::string_view name) const {
  if (fn == 0 || assignmentsOf(0, name).empty()) return false;
  // The function and every function it is nested in: a binding there shadows the module's name.
  for (uint32_t g = fn; g != 0; g = m_.functions[g].parent) {
    if (!assignmentsOf(g, name).empty()) return false;
    const Function& fun = m_.functions[g];
    for (uint32_t i = 0; i < fun.paramCount; ++i)
      if (m_.params[fun.firstParam + i].name == name) return false;
  }
  return true;
}

bool Facts::outlivesIteration(NodeId target, NodeId loop) const {
  if (target == kNone || loop == kNone) return false;
  const Expr& t = m_.expr(target);
  if (m_.stmt(loop).kind == StmtKind::FunctionDef) {
    // A step's body: its locals and parameters are made afresh per batch; `self` and the module's
    // own names (a `history = []` at the top of the file) outlive it.
    if (t.kind == ExprKind::Attribute) return isSelfName(m_, t.lhs) || outlivesIteration(t.lhs, loop);
    if (t.kind == ExprKind::Name)
      return (t.text == "self" && m_.functions[m_.stmt(loop).def].cls >= 0) || isModuleName(m_.stmt(loop).def, t.text);
    return t.kind == ExprKind::Subscript && outlivesIteration(t.lhs, loop);
  }
  switch (t.kind) {
    case ExprKind::Name: {
      uint32_t reader = t.stmt == kNone ? 0 : m_.stmt(t.stmt).function;
      if (reader != m_.stmt(loop).function) return capturedOutlivesIteration(reader, t.text, loop);
      NodeId b = useBind_[target];
      if (b == kBoundAmbiguous) return false;
      if (b == kBoundOutsideLoops) return true;
      // Bound inside `loop` (or a loop nested in it): a fresh object each iteration.
      return !within(b, loop);
    }
    case ExprKind::Attribute: {
      if (isSelfName(m_, t.lhs)) return true;
      return outlivesIteration(t.lhs, loop);
    }
    case ExprKind::Subscript: return outlivesIteration(t.lhs, loop);
    default: return false;
  }
}

}  // namespace oomlint
