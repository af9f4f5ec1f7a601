#include "facts/mode_switch.h"

namespace oomlint {

namespace {

/// Both expressions are the same dotted path (`self.model`).
bool sameText(const Module& m, NodeId a, NodeId b) { return a != kNone && b != kNone && m.textOf(a) == m.textOf(b); }

bool returnsTheModule(std::string_view meth) {
  return meth == "to" || meth == "cuda" || meth == "cpu" || meth == "half" || meth == "float" || meth == "double" ||
         meth == "bfloat16" || meth == "requires_grad_" || meth == "share_memory" || meth == "to_empty";
}

char switchOf(const Module& m, NodeId call, std::string_view meth) {
  if (meth == "eval") return m.expr(call).argCount == 0 ? 'e' : 0;
  NodeId a = positionalArg(m, call, 0);
  if (a == kNone) a = keywordArg(m, call, "mode");
  if (a != kNone && isFalseLiteral(m, a)) return 'e';
  return (a == kNone || isTrueLiteral(m, a)) ? 't' : 0;
}

}  // namespace

char moduleModeSwitch(const Module& m, NodeId call, NodeId& base) {
  char sw = 0;
  bool decided = false;
  NodeId e = call;
  for (int guard = 0; guard < 8 && e != kNone && m.expr(e).kind == ExprKind::Call; ++guard) {
    std::string_view meth = methodName(m, e);
    NodeId recv = receiverOf(m, e);
    if (recv == kNone || !m.canonical(e).empty()) break;
    if (meth == "eval" || meth == "train") {
      if (!decided) sw = switchOf(m, e, meth);
      decided = true;
    } else if (!returnsTheModule(meth)) {
      break;
    }
    e = recv;
  }
  base = e;
  return sw;
}

char collectionModeSwitch(const Module& m, NodeId loop, NodeId& collection) {
  const Stmt& l = m.stmt(loop);
  if (l.kind != StmtKind::For || l.target == kNone || l.value == kNone) return 0;
  auto body = items(m, l.body);
  if (body.size() != 1) return 0;
  const Stmt& only = m.stmt(*body.begin());
  if (only.kind != StmtKind::Expr || only.value == kNone || m.expr(only.value).kind != ExprKind::Call) return 0;
  NodeId switched = kNone;
  char sw = moduleModeSwitch(m, only.value, switched);
  if (!sw || switched == kNone) return 0;
  // What the loop walks: `C`, `C.keys()`, `C.values()`, `C.items()`.
  NodeId walked = l.value;
  std::string_view meth;
  if (m.expr(walked).kind == ExprKind::Call && m.canonical(walked).empty() && receiverOf(m, walked) != kNone) {
    meth = methodName(m, walked);
    if (meth != "keys" && meth != "values" && meth != "items") return 0;
    walked = receiverOf(m, walked);
  } else if (m.expr(walked).kind == ExprKind::Call) {
    return 0;
  }
  // The loop's element: the target, or the value of a `(key, value)` target for items().
  NodeId element = l.target;
  if (meth == "items") {
    const Expr& t = m.expr(l.target);
    if (t.kind != ExprKind::Container || t.argCount != 2) return 0;
    element = (m.argsBegin(t) + 1)->value;
  }
  if (m.expr(element).kind != ExprKind::Name) return 0;
  const Expr& s = m.expr(switched);
  bool isElement = s.kind == ExprKind::Name && s.text == m.expr(element).text && meth != "keys";
  // `C[key]` over the keys of C (iterating a dict walks its keys).
  bool byKey = s.kind == ExprKind::Subscript && s.rhs != kNone && m.expr(s.rhs).kind == ExprKind::Name &&
               m.expr(s.rhs).text == m.expr(element).text && (meth.empty() || meth == "keys") && sameText(m, s.lhs, walked);
  if (!isElement && !byKey) return 0;
  collection = walked;
  return sw;
}

}  // namespace oomlint
