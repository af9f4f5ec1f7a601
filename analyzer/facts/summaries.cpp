// Pass 2b, stores: which parameters each function sums or stores into state that outlives the
// call (`self.sum += val * n`, `self.history[k].append(v)`, `LOG.append(x)` on a global), so a
// caller's `meter.update(loss)` is an accumulation whatever the meter is called; and the classes
// of this file whose methods do that (meters, recorders).
#include <algorithm>
#include <unordered_set>

#include "facts/builder.h"
#include "facts/torch_api.h"

namespace oomlint {

namespace {

/// Index of the parameter `e` is made from without leaving the tensor (`val`, `val * n`,
/// `val.mean()`, `val[0]`), or -1. `.item()`, `.detach()`, `float(val)` leave it.
int paramRoot(const Module& m, const Function& fn, NodeId e, int depth = 0) {
  if (e == kNone || depth > 8) return -1;
  const Expr& x = m.expr(e);
  switch (x.kind) {
    case ExprKind::Name:
      for (uint32_t i = 0; i < fn.paramCount; ++i)
        if (m.params[fn.firstParam + i].name == x.text) return x.text == "self" ? -1 : static_cast<int>(i);
      return -1;
    case ExprKind::Subscript:
    case ExprKind::Attribute:
      if (x.kind == ExprKind::Attribute && (x.text == "data" || x.text == "shape" || x.text == "grad")) return -1;
      return paramRoot(m, fn, x.lhs, depth + 1);
    case ExprKind::BinOp: {
      int l = paramRoot(m, fn, x.lhs, depth + 1);
      return l >= 0 ? l : paramRoot(m, fn, x.rhs, depth + 1);
    }
    case ExprKind::Call: {
      // `torch.mean(val)`, `hvd.allreduce(val)`: the tensor argument, history and all.
      if (const std::string& canon = m.canonical(e); !canon.empty())
        return torch_api::passesHistory(canon) ? paramRoot(m, fn, positionalArg(m, e, 0), depth + 1) : -1;
      std::string_view meth = methodName(m, e);
      if (receiverOf(m, e) == kNone) return -1;
      if (meth == "item" || meth == "detach" || meth == "tolist" || meth == "numpy" || meth == "cpu" || meth == "size") return -1;
      return paramRoot(m, fn, receiverOf(m, e), depth + 1);
    }
    default: return -1;
  }
}

/// `for v in values:`, `for i, v in enumerate(values):`, `for k, v in values.items():`: the
/// parameter whose elements the loop around `stmt` binds to `name`, or -1. Keys and indices are
/// not elements, and a name the function also assigns itself (`v = v.item()`) is not one either.
/// Nested loops count (`for group in outputs.values(): for v in group.values():`).
int elementOfParam(const Module& m, const Facts& f, const Function& fun, uint32_t fn, NodeId stmt, std::string_view name,
                   int depth = 0) {
  for (NodeId s : f.statementsOf(fn)) {
    const Stmt& st = m.stmt(s);
    if (st.kind == StmtKind::For) continue;
    for (NodeId t : items(m, st.targets))
      if (m.expr(t).kind == ExprKind::Name && m.expr(t).text == name) return -1;
    if (st.kind == StmtKind::AugAssign && m.expr(st.target).kind == ExprKind::Name && m.expr(st.target).text == name)
      return -1;
  }
  for (NodeId p = m.stmt(stmt).parent; p != kNone; p = m.stmt(p).parent) {
    const Stmt& loop = m.stmt(p);
    if (loop.kind != StmtKind::For || loop.target == kNone || loop.value == kNone) continue;
    NodeId iter = loop.value;
    NodeId element = loop.target;
    const Expr& it = m.expr(iter);
    const Expr& target = m.expr(element);
    if (it.kind == ExprKind::Call) {
      std::string_view meth = methodName(m, iter);
      bool enumerates = calleeName(m, iter) == "enumerate" && m.canonical(iter).empty();
      bool pairs = enumerates || meth == "items";
      if (enumerates) iter = positionalArg(m, iter, 0);
      else if (meth == "items" || meth == "values") iter = receiverOf(m, iter);
      else continue;
      if (pairs) {
        if (target.kind != ExprKind::Container || target.argCount != 2) continue;
        element = (m.argsBegin(target) + 1)->value;
      }
    }
    if (element == kNone || m.expr(element).kind != ExprKind::Name || m.expr(element).text != name) continue;
    if (iter == kNone || m.expr(iter).kind != ExprKind::Name) return -1;
    for (uint32_t i = 0; i < fun.paramCount; ++i)
      if (m.params[fun.firstParam + i].name == m.expr(iter).text) return m.expr(iter).text == "self" ? -1 : static_cast<int>(i);
    return depth < 4 ? elementOfParam(m, f, fun, fn, p, m.expr(iter).text, depth + 1) : -1;
  }
  return -1;
}

/// The parameter a stored value is made from (paramRoot), or, for a loop's name, whose elements
/// it walks (elementOfParam, then `element` is set); -1 when neither.
int storedParam(const Module& m, const Facts& f, const Function& fun, uint32_t fn, NodeId stmt, NodeId value, bool& element) {
  int p = paramRoot(m, fun, value);
  element = p < 0 && m.expr(value).kind == ExprKind::Name;
  if (element) p = elementOfParam(m, f, fun, fn, stmt, m.expr(value).text);
  return p;
}

/// The parameter whose object an append's receiver belongs to (`out`, `out[key]`, `out.history`,
/// `out.setdefault(key, [])`), when the function never rebinds it: the caller's own container.
/// `self` is not one (Summary::storesParam covers the object's state), and -1 when none.
int containerParam(const Module& m, const Facts& f, const Function& fun, uint32_t fn, NodeId recv) {
  NodeId root = recv;
  for (int depth = 0; root != kNone && depth < 8; ++depth) {
    const Expr& x = m.expr(root);
    if (x.kind == ExprKind::Subscript || x.kind == ExprKind::Attribute) root = x.lhs;
    else if (x.kind == ExprKind::Call && m.canonical(root).empty() && (methodName(m, root) == "setdefault" || methodName(m, root) == "get"))
      root = receiverOf(m, root);
    else break;
  }
  if (root == kNone || m.expr(root).kind != ExprKind::Name || m.expr(root).text == "self") return -1;
  for (uint32_t i = 0; i < fun.paramCount && i < 32; ++i)
    if (m.params[fun.firstParam + i].name == m.expr(root).text)
      return f.assignmentsOf(fn, m.expr(root).text).empty() ? static_cast<int>(i) : -1;
  return -1;
}

/// Records that `fn` appends parameter `value` (or an element of it) to parameter `into`; true
/// when that is new.
bool addStoreInto(Summary& sum, int value, int into, bool element, NodeId at) {
  if (value < 0 || into < 0 || value >= 32 || into >= 32 || value == into) return false;
  Summary::StoreInto store{static_cast<uint8_t>(value), static_cast<uint8_t>(into), element};
  if (std::find(sum.storesParamInto.begin(), sum.storesParamInto.end(), store) != sum.storesParamInto.end()) return false;
  sum.storesParamInto.push_back(store);
  if (sum.storeIntoAt == kNone) sum.storeIntoAt = at;
  return true;
}

/// Parameter `p` is rebound before `stmt` to a value its history does not reach (`val =
/// val.detach().item()`, perhaps under an `isinstance` test): what `stmt` reads of it may carry no
/// history, and a store of history must be certain.
bool rebindsWithoutHistory(const Module& m, const Facts& f, const Function& fun, uint32_t fn, NodeId stmt, int p) {
  std::string_view name = m.params[fun.firstParam + static_cast<uint32_t>(p)].name;
  for (NodeId s : f.assignmentsOf(fn, name)) {  // the name index: linear in a long function
    const Stmt& st = m.stmt(s);
    if (m.stmt(s).span.begin >= m.stmt(stmt).span.begin) break;  // in source order
    if (st.value == kNone) continue;
    for (NodeId t : items(m, st.targets))
      if (m.expr(t).kind == ExprKind::Name && m.expr(t).text == name && paramRoot(m, fun, st.value) != p) return true;
  }
  return false;
}

/// The statement's target is state that outlives a call: an attribute of `self` (or an element of
/// one), or a module-level name the function does not bind itself.
bool outlivesCall(const Module& m, const Facts& f, uint32_t fn, NodeId target) {
  NodeId root = target;
  while (m.expr(root).kind == ExprKind::Subscript || m.expr(root).kind == ExprKind::Attribute) {
    if (m.expr(root).kind == ExprKind::Attribute && isSelfName(m, m.expr(root).lhs)) return true;
    root = m.expr(root).lhs;
  }
  if (m.expr(root).kind != ExprKind::Name || root == target) return false;
  std::string_view name = m.expr(root).text;
  const Function& fun = m.functions[fn];
  for (uint32_t i = 0; i < fun.paramCount; ++i)
    if (m.params[fun.firstParam + i].name == name) return false;
  for (NodeId s : f.statementsOf(fn))
    for (NodeId t : items(m, m.stmt(s).targets))
      if (m.expr(t).kind == ExprKind::Name && m.expr(t).text == name) return false;
  return fn != 0;
}

}  // namespace

void FactsBuilder::computeStores() {
  f_.accumulatorClass_.assign(m_.classes.size(), false);
  for (uint32_t fn = 1; fn < m_.functions.size(); ++fn) {
    const Function& fun = m_.functions[fn];
    if (fun.isLambda || fun.paramCount == 0) continue;
    Summary& sum = f_.summaries_[fn];
    std::unordered_set<std::string_view> locals;  // names some statement of the function binds, once needed
    bool localsKnown = false;
    for (NodeId s : f_.fnStmts_[fn]) {
      const Stmt& st = m_.stmt(s);
      NodeId target = kNone, value = kNone;
      bool accumulates = false;
      if (st.kind == StmtKind::AugAssign && (st.op == "+=" || st.op == "-=")) {
        target = st.target;
        value = st.value;
        accumulates = true;
      } else if (st.kind == StmtKind::Assign && st.targets.count == 1 && st.value != kNone) {
        target = st.target;
        // `self.total = self.total + v`, `self.center = self.center * m + v.mean(0) * (1 - m)`: the
        // first added term a parameter reaches is what the update sums.
        std::vector<NodeId> terms;
        if (f_.runningUpdate(st.value, f_.pathKey(target), &terms) != kNone) {
          for (NodeId t : terms)
            if (paramRoot(m_, fun, t) >= 0) {
              value = t;
              break;
            }
          if (value == kNone && !terms.empty()) value = terms.front();
          accumulates = true;
        } else if (m_.expr(target).kind == ExprKind::Subscript || m_.expr(target).kind == ExprKind::Attribute) {
          value = st.value;
        }
      } else if (st.kind == StmtKind::Expr && st.value != kNone && m_.expr(st.value).kind == ExprKind::Call) {
        std::string_view meth = methodName(m_, st.value);
        if (meth == "append" || meth == "push_back" || meth == "emplace_back") value = positionalArg(m_, st.value, 0);
        else if (meth == "insert") value = positionalArg(m_, st.value, 1);
        if (value != kNone) target = receiverOf(m_, st.value);
        if (target != kNone) storeIntoParam(fn, s, target, value);
        if (target != kNone && m_.expr(target).kind == ExprKind::Name) {
          // An append to a name: state only when it is not the function's own.
          if (!outlivesCall(m_, f_, fn, target)) {
            if (!localsKnown) {
              for (NodeId t2 : f_.fnStmts_[fn])
                for (NodeId tt : items(m_, m_.stmt(t2).targets))
                  if (m_.expr(tt).kind == ExprKind::Name) locals.insert(m_.expr(tt).text);
              for (uint32_t i = 0; i < fun.paramCount; ++i) locals.insert(m_.params[fun.firstParam + i].name);
              localsKnown = true;
            }
            if (locals.count(m_.expr(target).text)) continue;
          }
        }
      }
      if (target == kNone || value == kNone) continue;
      // Under `no_grad` what the statement computes records no history (`self.running_mean =
      // (1 - m) * self.running_mean + m * x.mean(0)`); a tensor stored as it is keeps its own.
      if (f_.gradMode_[s] == GradMode::Disabled && (accumulates || m_.expr(value).kind != ExprKind::Name)) continue;
      // A bare name summed in a function is that function's own (Python makes it local).
      bool outer = m_.expr(target).kind == ExprKind::Name ? st.kind == StmtKind::Expr : outlivesCall(m_, f_, fn, target);
      if (!outer) continue;
      bool element = false;
      int p = storedParam(m_, f_, fun, fn, s, value, element);
      if (p < 0 || p >= 32 || rebindsWithoutHistory(m_, f_, fun, fn, s, p)) continue;
      if (accumulates) sum.accumulatesParam |= 1u << p;
      else if (m_.expr(target).kind == ExprKind::Attribute && st.kind == StmtKind::Assign) sum.assignsParam |= 1u << p;
      else sum.storesParam |= 1u << p;
      if (sum.accumulateAt == kNone) sum.accumulateAt = s;
    }
    // A softmax wrapper: it returns the softmax of a parameter (`return x.masked_fill(m, -inf).softmax(-1)`).
    for (NodeId s : f_.fnStmts_[fn]) {
      const Stmt& st = m_.stmt(s);
      if (st.kind != StmtKind::Return || st.value == kNone || m_.expr(st.value).kind != ExprKind::Call) continue;
      NodeId input = f_.softmaxInput(st.value);
      int p = input == kNone ? -1 : paramRoot(m_, fun, input);
      if (p >= 0) sum.softmaxOfParam = p;
    }
  }
  storeThroughCalls();
  for (uint32_t fn = 1; fn < m_.functions.size(); ++fn) {
    const Function& fun = m_.functions[fn];
    const Summary& sum = f_.summaries_[fn];
    int32_t cls = f_.classOfFunction(fn);
    if (cls >= 0 && fun.cls >= 0 && (sum.accumulatesParam || sum.storesParam || sum.assignsParam) && fun.name != "__init__")
      f_.accumulatorClass_[static_cast<size_t>(cls)] = true;
  }
}

void FactsBuilder::storeIntoParam(uint32_t fn, NodeId s, NodeId receiver, NodeId value) {
  const Function& fun = m_.functions[fn];
  int into = containerParam(m_, f_, fun, fn, receiver);
  if (into < 0) return;
  bool element = false;
  int p = storedParam(m_, f_, fun, fn, s, value, element);
  if (p < 0 || p >= 32 || rebindsWithoutHistory(m_, f_, fun, fn, s, p)) return;
  addStoreInto(f_.summaries_[fn], p, into, element, s);
}

bool FactsBuilder::storeIntoThrough(uint32_t fn, NodeId s, const Facts::Callee& callee) {
  // `record(outputs, out)` calling `collect(out, outputs)`: it appends one parameter to another too.
  const Function& fun = m_.functions[fn];
  bool changed = false;
  for (Summary::StoreInto inner : std::vector<Summary::StoreInto>(callee.summary->storesParamInto)) {
    NodeId call = m_.stmt(s).value;
    NodeId value = callee.argFor(m_, call, inner.value), container = callee.argFor(m_, call, inner.into);
    if (value == kNone || container == kNone) continue;
    int into = containerParam(m_, f_, fun, fn, container);
    bool element = false;
    int p = storedParam(m_, f_, fun, fn, s, value, element);
    if (into < 0 || p < 0 || rebindsWithoutHistory(m_, f_, fun, fn, s, p)) continue;
    changed |= addStoreInto(f_.summaries_[fn], p, into, element || inner.element, s);
  }
  return changed;
}

void FactsBuilder::storeThroughCalls() {
  // `update_ctc_loss(self, batch, loss)` calling `self._ctc_loss.update(loss / n)` sums `loss` as
  // the meter's method does. Only into state that outlives the call: `self`, an attribute of it, a
  // module name, or a function with no receiver (its own stores are into such state already).
  size_t nf = m_.functions.size();
  for (int round = 0; round < 8; ++round) {
    bool changed = false;
    for (uint32_t fn = 1; fn < nf; ++fn) {
      const Function& fun = m_.functions[fn];
      if (fun.isLambda || fun.paramCount == 0) continue;
      Summary& sum = f_.summaries_[fn];
      for (NodeId s : f_.fnStmts_[fn]) {
        const Stmt& st = m_.stmt(s);
        if (st.kind != StmtKind::Expr || st.value == kNone || m_.expr(st.value).kind != ExprKind::Call) continue;
        Facts::Callee callee = f_.calleeOf(st.value);
        if (!callee || callee.summary == &sum) continue;
        bool noGrad = f_.gradMode_[s] == GradMode::Disabled;  // the callee's sums record no history
        if (!callee.summary->storesParamInto.empty() && fun.paramCount >= 2 && storeIntoThrough(fn, s, callee)) changed = true;
        const Summary& inner = *callee.summary;
        if (!(inner.accumulatesParam | inner.storesParam | inner.assignsParam)) continue;
        NodeId recv = receiverOf(m_, st.value);
        bool selfRooted = recv != kNone && isSelfName(m_, recv);
        if (recv != kNone && !selfRooted && !outlivesCall(m_, f_, fn, recv) && !f_.isModuleName(fn, f_.pathKey(recv)))
          continue;
        for (uint32_t i = callee.bound ? 1 : 0; i < callee.params.size() && i < 32; ++i) {
          uint32_t bit = 1u << i;
          if (!((inner.accumulatesParam | inner.storesParam | inner.assignsParam) & bit)) continue;
          NodeId arg = callee.argFor(m_, st.value, i);
          if (arg == kNone) continue;
          bool element = false;
          int p = storedParam(m_, f_, fun, fn, s, arg, element);
          if (p < 0 || p >= 32) continue;
          uint32_t mine = 1u << p;
          if (noGrad && (inner.accumulatesParam & bit)) continue;
          uint32_t& into = (inner.accumulatesParam & bit) ? sum.accumulatesParam
                           : (inner.storesParam & bit)    ? sum.storesParam
                                                          : sum.assignsParam;
          if (into & mine) continue;
          into |= mine;
          if (sum.accumulateAt == kNone) sum.accumulateAt = s;
          changed = true;
        }
      }
    }
    if (!changed) break;
  }
}

}  // namespace oomlint
