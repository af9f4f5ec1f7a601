#include "facts/facts.h"

#include "facts/builder.h"
#include "facts/names.h"
#include "facts/sizes.h"
#include "facts/torch_api.h"

namespace oomlint {

using namespace torch_api;

// The passes, in order. Each line: what it reads -> what it writes.
void FactsBuilder::build() {
  f_.summaries_.assign(m_.functions.size(), Summary{});
  buildStructure();      // model -> statements per function, loops, calls per statement, class families
  findInlineClosures();  // loops, calls -> nested functions run inside a loop's iteration
  classifyClasses();     // class bases -> module classes
  findFrameworkSteps();  // class bases -> framework classes and their step methods
  collectKinds();        // assignments, loop targets, call sites, uses, names -> kinds of paths; call targets
  collectFreezes();      // requires_grad writes -> frozen modules
  computeGradModes();    // contexts, decorators, call sites -> grad mode per statement and at entry
  computeStores();       // assignments and appends in each function, grad mode -> parameters it stores; accumulator classes
  computeEvents();       // kinds, grad mode, call targets -> events per function, reach per statement, training paths
  collectDevices();      // device assignments, .cuda()/.to() receivers -> GPU names and modules
  computeValues();       // all of the above -> history and device per expression, summaries' returns
  computeEvalContexts(); // .eval()/.train(), call sites, events -> evaluation forwards and functions
  computeLoopRoles();    // events, kinds, evaluation forwards -> loop roles
  findFlagEvaluations();  // eval switches and updates under a parameter's tests, call sites -> flag evaluation forwards
  findDiscardedForwards();  // grad mode, events, def-use -> forwards whose output only drops history
  computeProgramFacts(); // everything -> gradients cleared in the file, version-gated branches
}

Facts::~Facts() = default;

const Sizes& Facts::sizes() const {
  if (!sizes_) sizes_ = std::make_unique<Sizes>(*this);
  return *sizes_;
}

Facts::Facts(const Module& m, const ProjectView* project) : m_(m), project_(project) {
  FactsBuilder b(*this);
  b.build();
}

uint8_t Facts::callClass(NodeId call) const {
  // Every pass and rule asks these of the same calls: once the kinds are settled, each call is
  // classified once.
  if (call >= m_.exprs.size() || m_.expr(call).kind != ExprKind::Call) return kClassified;
  if (!cacheAll_) {
    return kClassified | (computeForwardCall(call) ? kForwardCall : 0) | (computeLossCall(call) ? kLossCall : 0) |
           (computeOptimizerStep(call) ? kStepCall : 0);
  }
  if (callClass_.empty()) callClass_.assign(m_.exprs.size(), 0);
  uint8_t& c = callClass_[call];
  if (!c)
    c = kClassified | (computeForwardCall(call) ? kForwardCall : 0) | (computeLossCall(call) ? kLossCall : 0) |
        (computeOptimizerStep(call) ? kStepCall : 0);
  return c;
}

bool Facts::isForwardCall(NodeId call) const { return (callClass(call) & kForwardCall) != 0; }
bool Facts::isLossCall(NodeId call) const { return (callClass(call) & kLossCall) != 0; }
bool Facts::isOptimizerStep(NodeId call) const { return (callClass(call) & kStepCall) != 0; }

bool Facts::computeForwardCall(NodeId call) const {
  const Expr& c = m_.expr(call);
  if (c.kind != ExprKind::Call || c.lhs == kNone) return false;
  const Expr& callee = m_.expr(c.lhs);
  if (callee.kind == ExprKind::Attribute && (callee.text == "forward" || runsModuleForward(callee.text)))
    return kindOf(callee.lhs) == Kind::Module;
  return kindOf(c.lhs) == Kind::Module;
}

bool Facts::computeLossCall(NodeId call) const {
  const Expr& c = m_.expr(call);
  if (c.kind != ExprKind::Call || c.lhs == kNone) return false;
  const std::string& canon = m_.canonical(call);
  if (startsWith(canon, "torch.")) return isLossFunctionName(names::lastComponent(canon));
  return kindOf(c.lhs) == Kind::LossFn;
}

bool Facts::isBackwardCall(NodeId call) const {
  std::string_view meth = methodName(m_, call);
  if (meth == "backward" || meth == "manual_backward") return true;
  return m_.canonical(call) == "torch.autograd.backward";
}

bool Facts::isAutogradGradCall(NodeId call) const { return m_.canonical(call) == "torch.autograd.grad"; }

bool Facts::computeOptimizerStep(NodeId call) const {
  if (methodName(m_, call) != "step") return false;
  NodeId recv = receiverOf(m_, call);
  if (recv == kNone) return false;
  const Expr& r = m_.expr(recv);
  NodeId base = r.kind == ExprKind::Subscript ? r.lhs : recv;
  Kind k = kindOf(base);
  if (r.kind == ExprKind::Subscript && k != Kind::Optimizer) return false;
  // A module with a step() is an engine that owns its optimizer (DeepSpeed).
  return k == Kind::Optimizer || k == Kind::Scaler || (k == Kind::Module && kindEvidence(base) >= Evidence::Used);
}

bool Facts::isZeroGradCall(NodeId call) const {
  std::string_view meth = methodName(m_, call);
  if (meth == "zero_grad") return true;
  return meth.empty() && calleeName(m_, call).find("zero_grad") != std::string_view::npos && callTargets(call).empty();
}

NodeId Facts::backwardSubject(NodeId call) const {
  if (isAutogradGradCall(call) || m_.canonical(call) == "torch.autograd.backward") {
    NodeId a = positionalArg(m_, call, 0);
    if (a == kNone) a = keywordArg(m_, call, isAutogradGradCall(call) ? "outputs" : "tensors");
    return a;
  }
  if (!isBackwardCall(call)) return kNone;
  NodeId recv = receiverOf(m_, call);
  NodeId first = positionalArg(m_, call, 0);
  if (methodName(m_, call) == "manual_backward") return first;
  if (recv != kNone && m_.expr(recv).kind == ExprKind::Call && methodName(m_, recv) == "scale") return positionalArg(m_, recv, 0);
  // `accelerator.backward(loss)`, `engine.backward(loss)`: the loss is the argument when the
  // receiver is an object, not a tensor.
  if (first != kNone && m_.canonical(call).empty() && recv != kNone && !pathKey(recv).empty() && value(recv).history != Tri::Yes &&
      m_.lang == Lang::Python) {
    Kind k = kindOf(recv);
    if (k != Kind::Tensor && (k != Kind::Unknown || value(first).history == Tri::Yes || m_.expr(first).kind != ExprKind::Number))
      return first;
  }
  return recv;
}

Tri Facts::flagArg(NodeId call, std::string_view keyword) const {
  NodeId a = keywordArg(m_, call, keyword);
  if (a == kNone && keyword == "retain_graph") a = keywordArg(m_, call, "keep_graph");
  if (a == kNone) return Tri::No;
  if (isTrueLiteral(m_, a)) return Tri::Yes;
  if (isFalseLiteral(m_, a)) return Tri::No;
  const Expr& x = m_.expr(a);
  if (x.kind == ExprKind::NoneLit) return Tri::No;
  return Tri::Unknown;
}

uint8_t Facts::namedAs(std::string_view name) const {
  auto [it, added] = namedAs_.try_emplace(name, 0);
  if (added) {
    it->second = (names::looksLikeModule(name) ? kNamedModule : 0) | (names::looksLikeLossFn(name) ? kNamedLoss : 0) |
                 (names::looksLikeOptimizer(name) ? kNamedOptimizer : 0) | (names::looksLikeLoader(name) ? kNamedLoader : 0) |
                 (names::looksLikeDevice(name) ? kNamedDevice : 0) | (names::looksLikeScheduler(name) ? kNamedScheduler : 0);
  }
  return it->second;
}

bool Facts::looksLike(std::string_view name, uint8_t convention) const { return (namedAs(name) & convention) != 0; }

bool Facts::isGpuDeviceExpr(NodeId e) const {
  if (e == kNone) return false;
  const Expr& x = m_.expr(e);
  if (x.kind == ExprKind::String) return x.text.find("cuda") != std::string_view::npos;
  if (m_.canonical(e) == "torch.kCUDA") return true;  // C++ torch::kCUDA
  if (x.kind == ExprKind::Call) {
    const std::string& canon = m_.canonical(e);
    if (canon == "torch.device") {
      if (isGpuDeviceExpr(positionalArg(m_, e, 0))) return true;
      for (const Arg& a : argsOf(m_, x))
        if (m_.expr(a.value).kind == ExprKind::String && m_.expr(a.value).text.find("cuda") != std::string_view::npos) return true;
      return false;
    }
    return canon == "torch.cuda.current_device" || startsWith(canon, "torch.accelerator.current_");
  }
  // `accelerator.device`, `fabric.device`: the device the launcher gave this process.
  if (x.kind == ExprKind::Attribute && x.text == "device" && launcherPlaces(x.lhs)) return true;
  std::string_view key = pathKey(e);
  if (key.empty()) return false;
  if (gpuNames_.count(key)) return true;
  if (cpuNames_.count(key)) return false;
  if (fileMentionsCuda_) return looksLike(key, kNamedDevice);
  // Another file's CUDA says what the program's device variables hold (`device`, `self.device`),
  // not where one tensor lives: `x.device` follows `x`, which may be on the CPU or a TPU.
  bool variable = x.kind == ExprKind::Name || (x.kind == ExprKind::Attribute && isSelfName(m_, x.lhs));
  return variable && programMentionsCuda() && looksLike(key, kNamedDevice);
}

bool Facts::versionGated(NodeId stmt) const { return stmt < versionGated_.size() && versionGated_[stmt]; }

bool Facts::versionGatedExpr(NodeId expr) const {
  if (expr == kNone) return false;
  return versionGated(m_.expr(expr).stmt) || versionGatedExprs_.count(expr) != 0;
}

}  // namespace oomlint
