#pragma once
/// Facts: analyses computed once per file over the program model and shared by every rule.
///
/// Every fact is three-valued where it can be unknown. Rules act only on known facts:
/// a finding that rests on a guess teaches users to ignore the tool.

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "model/model.h"

namespace oomlint {

enum class Tri : uint8_t { Unknown, No, Yes };

enum class GradMode : uint8_t { Unknown, Enabled, Disabled };

/// Bit flags: a loop can be a data loop and a training loop at once.
namespace loop_role {
inline constexpr uint8_t kTraining = 1;  // reaches backward() or optimizer.step() each iteration
inline constexpr uint8_t kEval = 2;      // runs in an evaluation context and reaches no backward
inline constexpr uint8_t kData = 4;      // iterates a data loader / batches
}  // namespace loop_role

/// What is known about the value an expression evaluates to, at the point it is evaluated.
struct ValueFact {
  Tri history = Tri::Unknown;  // carries autograd history (grad_fn)
  Tri device = Tri::Unknown;   // lives on the GPU
  bool scalarLoss = false;     // the output of a loss function (a 0-dim tensor)
};

class Facts {
 public:
  explicit Facts(const Module& m);

  const Module& module() const { return m_; }

  GradMode gradMode(NodeId stmt) const { return gradMode_[stmt]; }
  /// Innermost For/While strictly containing `stmt` in the same function, or kNone.
  NodeId enclosingLoop(NodeId stmt) const { return loopOf_[stmt]; }
  uint8_t loopRole(NodeId loop) const { return loop == kNone ? 0 : loopRole_[loop]; }
  /// True when `inner` is `outer` or nested inside it (statements of one function).
  bool within(NodeId inner, NodeId outer) const;

  const ValueFact& value(NodeId expr) const { return values_[expr]; }

  /// `model(x)`, `self.encoder(x)`, `net.forward(x)`: a call that runs a module's forward.
  bool isForwardCall(NodeId call) const;
  /// `criterion(out, y)`, `F.cross_entropy(...)`: a loss function call.
  bool isLossCall(NodeId call) const;
  /// `.backward()` on anything, `torch.autograd.backward(...)`, `accelerator.backward(loss)`.
  bool isBackwardCall(NodeId call) const;
  /// `torch.autograd.grad(...)`.
  bool isAutogradGradCall(NodeId call) const;
  /// `optimizer.step()`, `scaler.step(opt)`.
  bool isOptimizerStep(NodeId call) const;
  /// The expression names a module (model, self.net, a local nn.Module subclass instance).
  bool isModuleExpr(NodeId expr) const;

  /// Statement contains (in its subtree, same function) a backward, autograd.grad or optimizer
  /// step, directly or through a call to a function of this file that does.
  bool reachesBackwardOrStep(NodeId stmt) const { return (subtreeFlags_[stmt] & kReachesUpdate) != 0; }
  bool reachesBackward(NodeId stmt) const { return (subtreeFlags_[stmt] & kReachesBackward) != 0; }
  /// Same for a whole function.
  bool functionReachesUpdate(uint32_t fn) const { return (fnFlags_[fn] & kReachesUpdate) != 0; }

  /// The statement runs in an evaluation context (after `model.eval()` or in a function named for
  /// evaluation) on a path that reaches no backward. Returns the statement that opened the
  /// context (the `.eval()` call, or kNone for a function named for evaluation), via `opener`.
  bool inEvalContext(NodeId stmt) const;

  /// The target (Name / attribute / subscript) outlives one iteration of `loop`: bound before the
  /// loop, an attribute of an object, or an element of such a container.
  bool outlivesIteration(NodeId target, NodeId loop) const;
  /// For a Name expression: the loop its reaching binding was made in, kBoundOutsideLoops for
  /// bindings outside every loop (or unknown ones such as parameters), kBoundAmbiguous when paths differ.
  NodeId bindingLoop(NodeId nameExpr) const { return useBind_[nameExpr]; }

  /// Source names whose value is known to be a loss module (`criterion = nn.CrossEntropyLoss()`).
  bool isLossModuleName(std::string_view name) const;

  /// A dotted path ("self.total", "losses") for Name/Attribute chains, else "".
  std::string_view pathKey(NodeId expr) const;

  /// Statements of the function in source order (includes nested blocks, excludes nested defs).
  const std::vector<NodeId>& statementsOf(uint32_t fn) const { return fnStmts_[fn]; }

  /// All call expressions of a statement (not of nested statements).
  const std::vector<NodeId>& callsOf(NodeId stmt) const;

  /// Function-level facts.
  bool isEvalFunction(uint32_t fn) const { return evalFunction_[fn]; }
  GradMode entryGradMode(uint32_t fn) const { return entry_[fn]; }

  /// Is this a module class (inherits nn.Module directly or through classes of this file)?
  bool isModuleClass(int32_t cls) const { return cls >= 0 && moduleClass_[static_cast<size_t>(cls)]; }

  /// `x` is a value that is known to be on the GPU by name (device variables, `.cuda()` targets).
  bool isGpuDeviceExpr(NodeId expr) const;

  /// Naming conventions (names.h) a name follows, asked once per distinct name: the same few
  /// names (`model`, `criterion`, `optimizer`) are asked about at every call of every loop.
  static constexpr uint8_t kNamedModule = 1, kNamedLoss = 2, kNamedOptimizer = 4, kNamedLoader = 8, kNamedDevice = 16;
  bool looksLike(std::string_view name, uint8_t convention) const;

 private:
  static constexpr uint8_t kReachesBackward = 1;
  static constexpr uint8_t kReachesStep = 2;
  static constexpr uint8_t kReachesUpdate = 4;  // backward, autograd.grad or step

  const Module& m_;
  std::vector<GradMode> gradMode_;
  std::vector<NodeId> loopOf_;
  std::vector<uint8_t> loopRole_;
  std::vector<ValueFact> values_;
  std::vector<NodeId> useBind_;        // per Name expr: loop its binding was made in
  std::vector<uint8_t> subtreeFlags_;  // per stmt
  std::vector<uint8_t> fnFlags_;       // per function
  std::vector<GradMode> entry_;        // per function
  std::vector<bool> evalFunction_;
  std::vector<bool> moduleClass_;
  std::vector<NodeId> evalOpener_;     // per stmt: kNone or the `.eval()` stmt / a marker
  std::vector<std::vector<NodeId>> fnStmts_;
  std::vector<std::vector<NodeId>> stmtCalls_;
  std::unordered_set<std::string_view> moduleNames_;      // variables bound to modules
  std::unordered_set<std::string_view> lossModuleNames_;  // variables bound to loss modules
  std::unordered_set<std::string_view> optimizerNames_;
  std::unordered_set<std::string_view> loaderNames_;
  std::unordered_set<std::string_view> gpuNames_;         // device variables / tensors known on GPU
  std::unordered_set<std::string_view> modulesOnGpu_;
  std::unordered_map<std::string_view, std::vector<uint32_t>> functionsByName_;
  bool fileMentionsCuda_ = false;
  mutable std::unordered_map<std::string_view, uint8_t> namedAs_;  // looksLike's answers so far
  /// C++ spells paths `a->b` or a bare member: keys are the model's dotted paths, kept here.
  std::deque<std::string> cppKeyText_;
  std::vector<std::string_view> cppKeys_;

  friend class FactsBuilder;
};

/// Sentinel loop ids for bindings.
inline constexpr NodeId kBoundOutsideLoops = kNone;
inline constexpr NodeId kBoundAmbiguous = kNone - 1;

}  // namespace oomlint
