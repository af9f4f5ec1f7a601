#include "rules/store_common.h"

namespace oomlint::rules {

namespace {

/// `collect(out, outputs)` where `collect` appends its first parameter to its second: a store of
/// `out` into the caller's `outputs`.
bool intoArgument(const Facts& f, NodeId call, Store& out) {
  const Module& m = f.module();
  Facts::Callee callee = f.calleeOf(call);
  if (!callee) return false;
  for (const Summary::StoreInto& k : callee.summary->storesParamInto) {
    NodeId value = callee.argFor(m, call, k.value), container = callee.argFor(m, call, k.into);
    if (value == kNone || !isTrackable(m, container)) continue;
    out.value = value;
    out.container = container;
    out.reportAt = call;
    out.viaMethod = true;
    out.intoArgument = true;
    out.elementOfValue = k.element;
    out.storedAt = callee.summary->storeIntoAt;
    return true;
  }
  return false;
}

}  // namespace

bool recognizeStore(const Facts& f, NodeId s, Store& out) {
  const Module& m = f.module();
  const Stmt& st = m.stmt(s);
  out = Store{};
  out.stmt = s;
  if (st.kind == StmtKind::Expr && st.value != kNone && m.expr(st.value).kind == ExprKind::Call) {
    std::string_view meth = methodName(m, st.value);
    NodeId recv = receiverOf(m, st.value);
    if (intoArgument(f, st.value, out)) return true;
    if (recv == kNone) return false;
    // `self.log("loss", loss)` in a LightningModule: Lightning detaches what it logs.
    if ((meth == "log" || meth == "log_dict") && isSelfName(m, recv) &&
        f.classFramework(f.classOfFunction(m.stmt(s).function)) != 0)
      return false;
    if (Facts::Callee callee = f.calleeOf(st.value)) {
      const Summary& sum = *callee.summary;
      if (!callee.bound || !isTrackable(m, recv)) return false;
      // Of several stored arguments (`logger.log(step, loss)` keeps both), the first that carries
      // history is the one reported.
      uint32_t chosen = 0;
      for (uint32_t i = 1; i < callee.params.size() && i < 32; ++i) {
        if (!((sum.storesParam | sum.assignsParam) & (1u << i))) continue;
        // A meter that also sums the argument (`self.val = v; self.sum += v`) is OOM101's accumulation.
        if (sum.accumulatesParam & (1u << i)) continue;
        NodeId arg = callee.argFor(m, st.value, i);
        if (arg == kNone) continue;
        if (chosen == 0) chosen = i;
        if (f.value(arg).history == Tri::Yes) {
          chosen = i;
          break;
        }
      }
      if (chosen == 0) return false;
      out.replaces = !(sum.storesParam & (1u << chosen));
      out.value = callee.argFor(m, st.value, chosen);
      out.container = recv;
      out.reportAt = st.value;
      out.storedAt = sum.accumulateAt;
      out.viaMethod = true;
      return true;
    }
    // `extend(t)` keeps every row of `t`, views that keep all of it.
    if (meth == "append" || meth == "extend") out.value = positionalArg(m, st.value, 0);
    else if (meth == "insert") out.value = positionalArg(m, st.value, 1);
    else return false;
    if (out.value == kNone) return false;
    out.container = recv;
    out.reportAt = st.value;
    return isTrackable(m, recv);
  }
  // `preds += [out]`: a list grown by concatenation, as `append` grows it.
  if (st.kind == StmtKind::AugAssign && st.op == "+=" && st.value != kNone && st.target != kNone) {
    const Expr& v = m.expr(st.value);
    if (v.kind != ExprKind::Container || v.argCount != 1 || shape::isComprehension(v.shape) || m.textOf(st.value).substr(0, 1) != "[")
      return false;
    out.container = st.target;
    out.value = m.args[v.firstArg].value;
    out.listConcat = true;
    return isTrackable(m, st.target);
  }
  if (st.kind != StmtKind::Assign || st.targets.count != 1 || st.value == kNone) return false;
  const Expr& t = m.expr(st.target);
  if (t.kind == ExprKind::Subscript) {
    out.container = t.lhs;
    out.value = st.value;
    out.reportAt = kNone;
    return isTrackable(m, t.lhs);
  }
  if (t.kind == ExprKind::Attribute) {
    out.container = st.target;
    out.value = st.value;
    out.attribute = true;
    return true;
  }
  // `acc = out if acc is None else torch.cat([acc, out])` (C++: `acc.defined() ? ... : out`): the
  // arm that grows it.
  NodeId grown = st.value;
  if (t.kind == ExprKind::Name && m.expr(grown).kind == ExprKind::Conditional && m.expr(grown).argCount == 3) {
    const Expr& c = m.expr(grown);
    NodeId body = m.args[c.firstArg].value, orelse = m.args[c.firstArg + 2].value;
    grown = m.expr(body).kind == ExprKind::Call && !m.canonical(body).empty() ? body : orelse;
  }
  if (t.kind == ExprKind::Name && m.expr(grown).kind == ExprKind::Call) {
    const std::string& canon = m.canonical(grown);
    if (canon != "torch.cat" && canon != "torch.concat" && canon != "torch.concatenate" && canon != "torch.vstack" &&
        canon != "torch.hstack")
      return false;
    NodeId seq = positionalArg(m, grown, 0);
    if (seq == kNone) seq = keywordArg(m, grown, "tensors");
    if (seq == kNone || m.expr(seq).kind != ExprKind::Container) return false;
    std::string_view key = f.pathKey(st.target);
    NodeId self = kNone, other = kNone;
    for (const Arg& a : argsOf(m, m.expr(seq))) {
      if (f.pathKey(a.value) == key) self = a.value;
      else other = a.value;
    }
    if (self == kNone || other == kNone || m.expr(seq).argCount != 2) return false;
    out.container = self;
    out.value = other;
    out.concat = true;
    return true;
  }
  return false;
}

namespace {

/// An append, a store method or a `torch.cat`: the container holds one more each time, where an
/// attribute or element it replaces holds one at most.
bool grows(const Store& st) { return !st.attribute && !st.replaces && (st.reportAt != kNone || st.concat || st.listConcat); }

/// A module's `forward` that no loop of this file runs (Facts::forwardStepOf): only what it appends
/// to an attribute of `self` that nothing in the file ever empties is sure to pile up, step after
/// step. Replaced attributes (`self.last = h`) and stores through other objects' methods are not.
NodeId growthAcrossForwards(const Facts& f, const Store& st) {
  const Module& m = f.module();
  uint32_t fn = m.stmt(st.stmt).function;
  NodeId def = f.forwardStepOf(fn);
  if (def == kNone || !grows(st) || st.concat || st.listConcat || st.viaMethod) return kNone;
  const Expr& c = m.expr(st.container);
  if (c.kind != ExprKind::Attribute || !isSelfName(m, c.lhs) || !f.attributeWriters(c.text).empty()) return kNone;
  std::string_view key = f.pathKey(st.container);
  if (key.empty() || f.keptStateReachesBackward(fn, key)) return kNone;
  return def;
}

}  // namespace

NodeId storeOutlivesLoop(const Facts& f, const Store& st, bool returnedMeansIntended) {
  const Module& m = f.module();
  NodeId loop = f.stepIterationOf(st.stmt);  // a loop, or a framework step run once per batch
  if (loop == kNone) return growthAcrossForwards(f, st);
  uint8_t role = f.iterationRole(loop);
  if (role == 0) return kNone;
  if (!st.attribute && !f.outlivesIteration(st.container, loop)) return kNone;
  if (st.attribute) {
    // `obj.x = v` outlives the iteration when obj does (self always does).
    const Expr& t = m.expr(st.container);
    if (!isSelfName(m, t.lhs) && !f.outlivesIteration(t.lhs, loop)) return kNone;
  }
  // `state["out"] = out` ... `state["out"] = None`: emptied before the iteration ends.
  if (!grows(st) && m.stmt(st.stmt).kind == StmtKind::Assign && f.clearedLaterInIteration(st.stmt, m.stmt(st.stmt).target, loop))
    return kNone;
  // `saved.append(log_prob)` per time step, `saved.clear()` after the episode's backward: the
  // container is emptied later in the iteration of this loop, or of the training loop around it
  // (not of an epoch loop around the training loop: a whole epoch's graphs would pile up).
  if (grows(st) && (!st.viaMethod || st.intoArgument))
    for (NodeId l = loop; l != kNone && m.stmt(l).kind != StmtKind::FunctionDef; l = f.enclosingLoop(l)) {
      if (f.clearedLaterInIteration(st.stmt, st.container, l)) return kNone;
      if (f.loopRole(l) & loop_role::kTraining) break;
    }
  NodeId root = st.container;
  while (m.expr(root).kind == ExprKind::Subscript) root = m.expr(root).lhs;
  std::string_view key = f.pathKey(root);
  if (key.empty()) return kNone;
  uint32_t fn = m.stmt(st.stmt).function;
  if (f.flowsToBackward(fn, key)) return kNone;
  if (calledPerIteration(f, loop)) {
    // Run per iteration by a caller of this file: only growth is certain. A replaced attribute or
    // element (`self.fake = G(z)`) is often read by the class's next method, up to its backward.
    if (f.keptStateReachesBackward(fn, key)) return kNone;
    if (!grows(st) && !st.attribute) return kNone;
  }
  bool trainsOrEvaluates = (role & (loop_role::kTraining | loop_role::kEval)) != 0;
  if (returnedMeansIntended && !trainsOrEvaluates && f.isReturned(fn, key)) return kNone;
  return loop;
}

}  // namespace oomlint::rules
