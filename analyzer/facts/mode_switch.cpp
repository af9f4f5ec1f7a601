#include "facts/mode_switch.h"

namespace oomlint {

namespace {

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

}  // namespace oomlint
