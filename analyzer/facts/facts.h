#pragma once
/// Facts: analyses computed once per file over the program model and shared by every rule.
///
/// Every fact is three-valued where it can be unknown, and facts come from evidence: a value is a
/// module because it was built from an nn.Module class or used as one, it carries autograd history
/// because it is a forward's output or because `.backward()` is called on it. Names are only the
/// weakest evidence. Rules act only on known facts: a finding that rests on a guess teaches users
/// to ignore the tool.
///
/// The passes and their order are listed in facts.cpp (Facts::Facts); each lives in its own file.

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <span>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "facts/project_view.h"
#include "model/model.h"

namespace oomlint {

class Sizes;

enum class Tri : uint8_t { Unknown, No, Yes };

enum class GradMode : uint8_t { Unknown, Enabled, Disabled };

/// Bit flags: a loop can be a data loop and a training loop at once.
namespace loop_role {
inline constexpr uint8_t kTraining = 1;  // reaches backward() or optimizer.step() each iteration
inline constexpr uint8_t kEval = 2;      // runs an evaluation forward (or a data loop of an evaluation function), no backward
inline constexpr uint8_t kData = 4;      // iterates a data loader / batches
}  // namespace loop_role

/// What a value is, from the strongest evidence found for it.
enum class Kind : uint8_t {
  Unknown,
  Module,            // an nn.Module (or a wrapper: DDP, torch.compile, a DeepSpeed engine)
  ModuleCollection,  // nn.ModuleList / nn.ModuleDict / a dict or list of modules: items are modules
  LossFn,            // a loss module or function (nn.CrossEntropyLoss())
  Optimizer,
  Scheduler,         // an LR scheduler: its step() is not an optimizer step
  Scaler,            // a GradScaler
  Tokenizer,         // a tokenizer / processor / feature extractor: calling it is not a forward
  Loader,            // a DataLoader (iterating it yields batches)
  Instance,          // an instance of a class of this file (see classOf)
  Class,             // the name denotes a class: calling it constructs, it is not a forward
  Function,          // the name denotes a function or method
  Tensor,
  Device,
  Value,             // a Python value that is not a tensor (number, string, path ...)
};

/// How a kind was established; stronger evidence wins.
enum class Evidence : uint8_t { None, Named, Used, Constructed, Declared };

/// Events of a training step, in the order a function runs them.
namespace event {
inline constexpr uint8_t kForward = 1;
inline constexpr uint8_t kLoss = 2;
inline constexpr uint8_t kBackward = 4;
inline constexpr uint8_t kAutogradGrad = 8;
inline constexpr uint8_t kStep = 16;
inline constexpr uint8_t kZeroGrad = 32;
inline constexpr uint8_t kUpdate = kBackward | kAutogradGrad | kStep;
}  // namespace event

/// What is known about the value an expression evaluates to, at the point it is evaluated.
struct ValueFact {
  Tri history = Tri::Unknown;  // carries autograd history (grad_fn)
  Tri device = Tri::Unknown;   // lives on the GPU
  bool scalarLoss = false;     // the output of a loss function (a 0-dim tensor)
  NodeId origin = kNone;       // the expression the history came from (a forward, a loss, a backward's subject)
  /// The history came through an accumulator (`total += loss` in a loop): OOM101's fix there
  /// (`.item()`) turns this value into a number, so a fix here that treats it as a tensor waits.
  bool accumulated = false;
  /// A leaf that requires grad (`torch.randn(..., requires_grad=True)`, `nn.Parameter(...)`,
  /// `w.requires_grad_()`): no history of its own, but what is computed from it has history.
  bool leaf = false;
  /// May be a list, tuple or dict (a literal or comprehension, on some path): a tensor method
  /// such as `.cpu()` would not apply to it, so a fix that adds one is not offered.
  bool collection = false;
  /// A collection whose every element is a loss (`[ce, kl]`, `{k: crit(o[k], y[k]) for k in heads}`,
  /// a list appended only losses): what its iteration, `.values()` or indexing gives is a loss.
  bool lossElems = false;
  /// Bit i: computed from parameter i of the function walked (`self` included in the count),
  /// history and all, with no call on the way that strips it: `return loss * k` has the bit of
  /// `loss`. Where the history is known to be absent the bits are cleared. A caller whose
  /// argument there carries history gets a result with history (a placeholder summary).
  uint32_t params = 0;
  /// Bit i: on the GPU whenever parameter i is: what a forward, a tensor method or arithmetic
  /// makes of a tensor stays on its device (`return model(xs[0])`). Kept whatever the history,
  /// unlike `params`; only the first 24 parameters travel to other files.
  uint32_t devParams = 0;
};

/// One event of a function's training step: a forward, loss, backward, step or zero_grad, either
/// made here or made by a function of this file called here (`call` is then that call).
struct StepEvent {
  uint8_t kind = 0;  // one event:: bit
  NodeId call = kNone;
  NodeId stmt = kNone;
};

/// What a function of this file does, seen from its callers. Plain data: computed once per file
/// and meant to be carried to other files (the whole-project analysis).
struct Summary {
  ValueFact returns;                    // joined over every `return` (No when it returns nothing)
  std::vector<ValueFact> returnElems;   // a tuple return of the same arity on every path
  bool returnsModule = false;
  bool returnsLoader = false;           // every return is a data loader (or its own batch-iterating instance)
  uint8_t events = 0;                   // event:: bits it runs, directly or through callees
  std::vector<uint8_t> eventOrder;      // the same, in the order they run (consecutive repeats merged)
  uint32_t accumulatesParam = 0;        // bit i: parameter i is summed into state that outlives the call
  uint32_t storesParam = 0;             // bit i: parameter i is stored where stores pile up (appended, `d[k] = v`)
  uint32_t assignsParam = 0;            // bit i: parameter i replaces an attribute (`self.val = v`): kept, bounded
  NodeId accumulateAt = kNone;          // the statement that does it (evidence for the caller's finding)
  /// The function appends a parameter to another (`def collect(out, outputs): outputs.append(out)`),
  /// so a caller's `collect(y, ys)` grows the caller's own `ys` as `ys.append(y)` would.
  struct StoreInto {
    uint8_t value = 0;     // the parameter stored
    uint8_t into = 0;      // the parameter whose container keeps it
    bool element = false;  // what is stored is an element of `value` (`for v in outs.values()`), not itself
    bool operator==(const StoreInto&) const = default;
  };
  std::vector<StoreInto> storesParamInto;
  NodeId storeIntoAt = kNone;           // the statement that appends (evidence for the caller's finding)
  int softmaxOfParam = -1;              // it returns the softmax of this parameter (a softmax wrapper)
  uint32_t backwardParams = 0;          // bit i: parameter i is what a backward runs on: the argument has history
  GradMode entryGrad = GradMode::Enabled;
  bool calledOnTrainingPath = false;    // a call site is in a training step, before its update
  /// Every path raises (`raise NotImplementedError`): an abstract method says nothing of what
  /// the override its call runs returns, so a call's targets are joined without it.
  bool raisesOnly = false;
};

class Facts {
 public:
  /// `project` answers for the names the file imports from other modules of its project (null:
  /// the file alone). It must outlive the facts only while they are built.
  explicit Facts(const Module& m, const ProjectView* project = nullptr);
  ~Facts();

  /// The sizes the file states (sizes.h), read on first use: only a finding's estimate asks.
  const Sizes& sizes() const;

  const Module& module() const { return m_; }

  /// The function a call runs, of this file (its first target) or of another module of the
  /// project, seen from the call: what it does and how the call's arguments map onto it.
  struct Callee {
    const Summary* summary = nullptr;
    std::vector<std::string_view> params;  // every parameter, `self` included for methods
    bool bound = false;                    // a method called on an instance: params[0] is the receiver
    explicit operator bool() const { return summary != nullptr; }
    /// The argument of `call` that parameter `i` receives, or kNone.
    NodeId argFor(const Module& m, NodeId call, uint32_t i) const;
  };
  Callee calleeOf(NodeId call) const;
  /// The same for function `fn` of this file (one of a call's callTargets).
  Callee calleeFunction(uint32_t fn) const;
  /// The project function (of another module) a call runs, or null: `evaluate(...)` imported from
  /// utils, `meter.update(...)` on an instance of an imported class, `self.fit()` inherited from
  /// a base class defined in another module.
  const ImportedFunction* importedCallee(NodeId call) const;
  /// The dotted names (as this file spells them) a call of no function of this file may run in
  /// another module, nearest first: what importedCallee asks the project, and what the file
  /// tells the project about its calls.
  void importKeys(NodeId call, std::vector<std::string>& out) const;
  /// The dotted name of function `fn` another module imports it by (`evaluate`, `Trainer.fit`),
  /// "" for nested functions and lambdas.
  std::string qualifiedName(uint32_t fn) const;

  // ------------------------------------------------------------ structure
  /// Statements of the function in source order (includes nested blocks, excludes nested defs).
  const std::vector<NodeId>& statementsOf(uint32_t fn) const { return fnStmts_[fn]; }
  /// All call expressions of a statement (not of nested statements).
  const std::vector<NodeId>& callsOf(NodeId stmt) const { return stmtCalls_[stmt]; }
  /// Innermost For/While strictly containing `stmt` in the same function, or kNone.
  NodeId enclosingLoop(NodeId stmt) const { return loopOf_[stmt]; }
  /// True when `inner` is `outer` or nested inside it (statements of one function).
  bool within(NodeId inner, NodeId outer) const;
  /// `stmt` and the statements nested in it, in source order: what a loop or block runs, without
  /// scanning the whole function (long generated functions stay linear).
  std::span<const NodeId> statementsWithin(NodeId stmt) const;
  /// The two statements sit in different branches of one `if`/`match` (never both run in one pass).
  bool exclusive(NodeId a, NodeId b) const;
  /// `a` runs before `b` on every path to `b` within one pass through their common block: `a` is
  /// earlier and not inside a branch, loop or handler that `b` is outside of.
  bool dominates(NodeId a, NodeId b) const;
  /// `a` can run before `b` in one pass (earlier in the source, not exclusive).
  bool mayPrecede(NodeId a, NodeId b) const;
  /// A dotted path ("self.total", "losses") for Name/Attribute chains, else "".
  std::string_view pathKey(NodeId expr) const;
  /// A running update of `key` by `value` (running_updates.cpp): `key + x`, `x + key`, `key - x`,
  /// more terms after it (`key + a + b`), or an exponential moving average, `a * key + b * x`
  /// (either order, either factor side), also as an arm of a conditional (`x if key is None else
  /// ...`). Returns the read of `key` in it and fills `terms` (optional) with what it adds, in
  /// order; kNone when `value` is none of these. `average` (optional) tells the moving average.
  /// The shape alone: it holds before values are known, so summaries read it too.
  NodeId runningUpdate(NodeId value, std::string_view key, std::vector<NodeId>* terms = nullptr, bool* average = nullptr) const;
  /// The same for an assignment's target that has no path: a dict or list entry
  /// (`sums["cls"] = sums["cls"] + loss`), read back at the same entry (sameEntry).
  NodeId runningUpdate(NodeId value, NodeId target, std::vector<NodeId>* terms = nullptr, bool* average = nullptr) const;
  /// `a` and `b` denote the same place: one path, or the same entry (`d["k"]`, `d[k]`) of one path.
  bool sameEntry(NodeId a, NodeId b) const;
  /// Functions of this file a call may run: `helper()`, `self.method()`, `obj.method()` on an
  /// instance of a class of this file, `super().method()`.
  std::span<const uint32_t> callTargets(NodeId call) const;
  /// The function a callable expression denotes (`self.on_hook`, `hook`, a lambda), or UINT32_MAX.
  uint32_t functionDenoted(NodeId expr) const;
  /// The methods named `name` of this file's classes that take exactly `params` parameters after
  /// `self`, and whose class is no nn.Module (its `forward` is the module's own, not a callback):
  /// what `obj.name` may denote when obj's class is unknown, narrowed by the signature it is
  /// called with (`register_forward_hook(hook.forward)`: module, input, output).
  std::vector<uint32_t> methodsTaking(std::string_view name, uint32_t params) const;
  /// Class of a method (following nested functions out to their method), or -1.
  int32_t classOfFunction(uint32_t fn) const;
  /// The statement is in an `except` handler (C++ `catch`) nested inside `outer` (or anywhere, for kNone).
  bool inHandler(NodeId stmt, NodeId outer) const;
  /// The loop body returns, breaks or raises at its top level: it runs at most once.
  bool runsOnce(NodeId loop) const { return runsOnce_[loop]; }
  /// `e` reads `path`: a Name or attribute path in its subtree equal to it or under it
  /// (`losses` in `torch.stack(losses).sum()`, `self.total` in `self.total.item()`).
  bool mentionsPath(NodeId e, std::string_view path) const;
  /// Where `e` reads what `path` holds, history and all, or kNone: a mention not under a call
  /// that leaves the history behind (`cell(x, h.detach())` reads no history of `h`), or a name
  /// that a statement within `scope` (a loop, a def) assigned from such a read (`hn =
  /// torch.clamp(cell(x) + h)`, then `h = hn`). What carried state feeds back into the graph.
  NodeId readWithHistory(NodeId e, std::string_view path, NodeId scope, int depth = 0) const;
  /// Calls `fn` on every expression of `e`'s subtree (itself included).
  template <typename Fn>
  void forSubtree(NodeId e, Fn&& fn) const;
  /// A backward or autograd.grad call of function `fn` differentiates something made from `path`.
  bool flowsToBackward(uint32_t fn, std::string_view path) const;
  /// A backward or autograd.grad call of function `fn` differentiates a value computed from the
  /// plain name `name`, following the function's assignments back from the names the call reads
  /// (`loss = out.pow(2).mean()` then `loss.backward()`: computed from `out`).
  bool backwardComputedFrom(uint32_t fn, std::string_view name) const;
  /// flowsToBackward for state a function keeps between calls: in the function, in the callers
  /// that run it per iteration (stepCallOf, up the chain) and, for `self.` paths, in any method of
  /// its class (`self.loss_g = ...` in `forward()`, `self.loss_g.backward()` in `backward_g()`).
  bool keptStateReachesBackward(uint32_t fn, std::string_view path) const;
  /// `path` is returned (alone or in a tuple) from function `fn`.
  bool isReturned(uint32_t fn, std::string_view path) const;
  /// The first call of function `fn` after source offset `offset` (the end of a loop) that copies
  /// what the local collection `name` holds to the host (`name.cpu()`, `torch.cat(name).cpu()`,
  /// or the `.cpu()` of a name bound from `torch.cat(name)`), or kNone. Who copies a collection
  /// to the host expects device tensors in it: evidence of where what a loop put there lives when
  /// nothing else says (host_copies.cpp).
  NodeId hostCopyAfter(uint32_t fn, uint32_t offset, std::string_view name) const;
  /// On some path through one iteration of `loop`, `path` is read before the body assigns it:
  /// what the previous iteration left in it is used (carried state).
  bool readBeforeWritten(NodeId loop, std::string_view path) const;
  /// The first line of a statement: what a note shows of a loop or a def.
  Span headerSpan(NodeId stmt) const { return firstLine(m_.stmt(stmt).span); }
  Span firstLine(Span s) const;
  /// The statement can never run: it is in the body of `if self.flag:` where the class only ever
  /// assigns `self.flag` a false literal (or in the else of its negation).
  bool unreachable(NodeId stmt) const { return stmt < unreachable_.size() && unreachable_[stmt]; }

  // ------------------------------------------------------------ kinds
  /// What an expression denotes, from evidence (constructors, declared types, use), names last.
  Kind kindOf(NodeId expr) const;
  /// The strength of the evidence for kindOf.
  Evidence kindEvidence(NodeId expr) const;
  /// For Kind::Instance and Kind::Module of a class of this file: the class, else -1.
  int32_t classOf(NodeId expr) const;
  /// The call that constructed the value an expression names (`nn.Softmax(-1)` for `self.softmax`), or kNone.
  NodeId constructorOf(NodeId expr) const;
  /// The expression names a module (model, self.net, model[0], self.model["g"], model.module).
  bool isModuleExpr(NodeId expr) const { return kindOf(expr) == Kind::Module; }
  /// Is this a module class (inherits nn.Module, directly or through classes of this file)?
  bool isModuleClass(int32_t cls) const { return cls >= 0 && moduleClass_[static_cast<size_t>(cls)]; }
  /// A class of this file whose methods sum or store an argument into the instance (a meter, a recorder).
  bool isAccumulatorClass(int32_t cls) const { return cls >= 0 && accumulatorClass_[static_cast<size_t>(cls)]; }
  /// A class of this file whose `__iter__` walks a data loader: its instances are loaders.
  bool iteratesBatches(int32_t cls) const { return cls >= 0 && static_cast<size_t>(cls) < batchClass_.size() && batchClass_[static_cast<size_t>(cls)]; }
  /// Every parameter of the module this expression names is frozen (requires_grad False, last write wins).
  bool isFrozenModule(NodeId expr) const;
  /// The last write to requires_grad of `path` (or a prefix) before `offset` froze it.
  bool frozenBefore(std::string_view path, uint32_t offset) const;
  /// Some parameters of `owner` (it or a submodule) are frozen by a statement of function `fn`
  /// before `offset`, and no later write there undoes it: that statement, else kNone.
  NodeId frozenPartBefore(uint32_t fn, std::string_view owner, uint32_t offset) const;
  /// The modules `frozenPartBefore` finds frozen, each as the expression its freeze names, when
  /// each freeze covers every parameter of its module (`m.requires_grad_(False)`, or
  /// `p.requires_grad = False` directly in a loop over `m.parameters()`), none lies inside
  /// another and no write undoes part of one; empty otherwise: which parameters are frozen is
  /// then not known, only that some are.
  std::vector<NodeId> frozenModulesBefore(uint32_t fn, std::string_view owner, uint32_t offset) const;
  /// Some write after `offset` sets requires_grad back to True on `owner`, a prefix or a submodule.
  bool unfrozenAfter(std::string_view owner, uint32_t offset) const;

  /// `model(x)`, `self.encoder(x)`, `net.forward(x)`, `self.layers[0](x)`: runs a module's forward.
  bool isForwardCall(NodeId call) const;
  /// `criterion(out, y)`, `F.cross_entropy(...)`: a loss function call.
  bool isLossCall(NodeId call) const;
  /// `.backward()` on anything, `torch.autograd.backward(...)`, `accelerator.backward(loss)`.
  bool isBackwardCall(NodeId call) const;
  /// `torch.autograd.grad(...)`.
  bool isAutogradGradCall(NodeId call) const;
  /// `optimizer.step()`, `scaler.step(opt)`; never a scheduler's step.
  bool isOptimizerStep(NodeId call) const;
  /// `optimizer.zero_grad()`, `model.zero_grad()`.
  bool isZeroGradCall(NodeId call) const;
  /// The tensor a backward-like call differentiates: `loss` of `loss.backward()`,
  /// `accelerator.backward(loss)`, `scaler.scale(loss).backward()`, `torch.autograd.grad(loss, ...)`.
  NodeId backwardSubject(NodeId call) const;
  /// The value of a keyword (or, in C++, named positional) flag: literal True/False, else Unknown.
  Tri flagArg(NodeId call, std::string_view keyword) const;

  // ------------------------------------------------------------ tensor layout (attention)
  /// A matmul or einsum that contracts the per-head feature axis of both operands into an L×S
  /// score map (`q @ k.transpose(-2, -1)`, `einsum("bhid,bhjd->bhij")`): Yes; one that contracts
  /// the sequence axis (channel attention, `q.transpose(-2, -1) @ k`): No; else Unknown.
  Tri contractsFeatureAxis(NodeId matmul) const;
  /// What a softmax call normalises: `F.softmax(x)`, `x.softmax(-1)`, an `nn.Softmax` module, a
  /// `partial(F.softmax)`, a function of this file returning a parameter's softmax. Else kNone.
  NodeId softmaxInput(NodeId call) const;
  /// The function can run a fused attention kernel (`scaled_dot_product_attention`, FlashAttention,
  /// xformers, `flex_attention`): a hand-written path beside it is its fallback.
  bool callsFusedAttention(uint32_t fn) const;
  /// The matmul that made a softmax's scores, in the expression or through the values of the
  /// names it reads (`scores = q @ k.mT; scores = scores + bias`), when it contracts the feature
  /// axis into an L×S map; kNone otherwise (channel attention, shapes not readable).
  NodeId attentionScores(NodeId softmaxInput) const;
  /// The matmul that multiplies a softmax call's probabilities with the values, directly or through
  /// names (dropout, renaming) until the name is rebound; kNone when there is none or the
  /// probabilities leave the function (returned, stored on an object, appended).
  NodeId probabilitiesConsumer(NodeId softmaxCall) const;

  // ------------------------------------------------------------ grad mode and evaluation
  GradMode gradMode(NodeId stmt) const { return gradMode_[stmt]; }
  GradMode entryGradMode(uint32_t fn) const { return summaries_[fn].entryGrad; }
  /// For a forward call on an evaluation path: the statement that put its module in eval mode
  /// (the `.eval()`), kEvalByName for a function named and shaped for evaluation, kEvalByCaller for a
  /// parameter every caller in another module passes in eval mode, else kNone.
  NodeId evalOpener(NodeId call) const;
  /// For a call of a helper of this file on an evaluation path (evalOpener gives its opener):
  /// the forward the helper runs on a module the path put in eval mode, when the helper's other
  /// callers (a training step) keep that forward itself off the path, or when two or more
  /// evaluation paths share the helper (sharedByEvalPaths); else kNone.
  NodeId helperForward(NodeId call) const {
    auto it = helperForward_.find(call);
    return it == helperForward_.end() ? kNone : it->second;
  }
  /// The helper call is one of several evaluation paths' calls of a helper only they call: each
  /// path's call stands for the forward, the helper's own forward does not.
  bool sharedByEvalPaths(NodeId call) const { return sharedHelperCalls_.count(call) > 0; }
  /// The statement runs in an evaluation context: some module is in eval mode there, or its
  /// function is an evaluation function.
  bool inEvalContext(NodeId stmt) const;
  bool isEvalFunction(uint32_t fn) const { return evalFunction_[fn]; }
  /// For a call of no function of this file: which arguments are modules in eval mode there.
  struct CallEval {
    uint32_t positional = 0;                 // bit i: positional argument i
    std::vector<std::string_view> keywords;  // keyword arguments
  };
  const CallEval* evalArgumentsAt(NodeId call) const {
    auto it = callEval_.find(call);
    return it == callEval_.end() ? nullptr : &it->second;
  }
  /// `torch.cuda.empty_cache()`, the same call of another accelerator's module (`torch.xpu`,
  /// `torch.mps`, `torch.npu`, `torch.accelerator`), or of a name bound once to one of them, or to
  /// `getattr(torch, device_type, torch.cuda)` (accelerators.cpp).
  bool emptiesAcceleratorCache(NodeId call) const;
  /// The expression denotes an accelerator module, directly or through a name as above.
  bool denotesAcceleratorModule(NodeId e) const;
  /// For a forward run with autograd on, in a function that runs no backward, whose output only
  /// reaches uses that drop its history (`out.detach()`, `.item()`, `argmax`, a comparison): the
  /// first such use. kNone otherwise, and for forwards that evalOpener already places.
  NodeId discardedAt(NodeId forward) const;
  /// The path of the module a forward call runs: `model` for `model(x)`, `model.forward(x)`,
  /// `models[k](x)`; empty when it has none.
  std::string_view forwardReceiverPath(NodeId call) const;
  /// A forward on the path where a variable holds a literal that puts its module in eval mode
  /// and leaves every update out (`def run_epoch(model, loader, train)` called with `False`, or
  /// `for phase in ["train", "val"]` at "val"), with autograd on.
  struct FlagEval {
    NodeId opener = kNone;  // the statement that puts the module in eval mode on that path
    NodeId site = kNone;    // the call that passes the literal (autograd on), or the loop over literals
    std::string_view var;   // the parameter or loop variable
    NodeId value = kNone;   // the literal it holds there
    bool byLoop = false;    // `site` is a loop statement, not a call expression
  };
  const FlagEval* flagEvaluation(NodeId call) const;
  static constexpr NodeId kEvalByName = kNone - 2;
  /// The opener for a module its callers in other modules put in eval mode before the call.
  static constexpr NodeId kEvalByCaller = kNone - 3;

  // ------------------------------------------------------------ values
  const ValueFact& value(NodeId expr) const { return values_[expr]; }
  /// For a Name expression: the loop its reaching binding was made in, kBoundOutsideLoops for
  /// bindings outside every loop (or unknown ones such as parameters), kBoundAmbiguous when paths differ.
  NodeId bindingLoop(NodeId nameExpr) const { return useBind_[nameExpr]; }
  /// For a Name expression: the statement whose assignment reaches it (kNone for parameters,
  /// globals and joins of different assignments).
  NodeId reachingAssignment(NodeId nameExpr) const { return useSite_[nameExpr]; }
  /// For a Name expression: the assignments whose value it may read. The reaching one when a
  /// single one reaches it; after branches that assign it differently, every assignment of the
  /// name earlier in the function (`scores = q @ k.mT` and `scores = scores.masked_fill(...)`).
  void definitionsOf(NodeId nameExpr, std::vector<NodeId>& out) const;
  /// Assignments of function `fn` that rebind `name` (`name = ...`, `a, name = ...`; not
  /// `name[i] = ...`), in source order. An index, so def-use questions stay linear in a long function.
  const std::vector<NodeId>& assignmentsOf(uint32_t fn, std::string_view name) const;
  /// `name = value` when that is the one assignment of `name` in function `fn` (a plain name
  /// target, not a tuple): the value; else kNone.
  NodeId onlyBindingValue(uint32_t fn, std::string_view name) const;
  /// `state["net"]` where `state` is bound once, in this function or one it is nested in, to a
  /// dict literal with that key (`state = {"net": net, ...}`): the entry's value, else kNone.
  NodeId dictEntryOf(NodeId subscript) const;
  /// `name` in function `fn` is the module's own: assigned at the top level of the file, and
  /// neither a parameter of `fn` (or of a function it is nested in) nor assigned there.
  bool isModuleName(uint32_t fn, std::string_view name) const;
  /// Statements of function `fn` whose value reads `name` (`name`, `name.x`), in source order.
  const std::vector<NodeId>& readersOf(uint32_t fn, std::string_view name) const;
  /// For a Name expression: the statement that made the binding it reads, which updates in
  /// place (`total += x`, `total = total + x`) keep: `total = 0` before the loop.
  NodeId bindingSite(NodeId nameExpr) const { return useBound_[nameExpr]; }
  /// The target (Name / attribute / subscript) outlives one iteration of `loop`: bound before the
  /// loop, an attribute of an object, or an element of such a container. `loop` may be a framework
  /// step's def statement (iterationOf): then what lives on `self` outlives it.
  bool outlivesIteration(NodeId target, NodeId loop) const;
  /// `name`, read in nested function `reader`, is a variable of the function holding `loop`
  /// (captured, not the nested function's own) that the loop does not rebind each iteration.
  bool capturedOutlivesIteration(uint32_t reader, std::string_view name, NodeId loop) const;
  /// Targets `a` and `b` name the same slot: one attribute path, or one container's element
  /// under the same written key (`state["out"]`).
  bool sameSlot(NodeId a, NodeId b) const;
  /// Statement `s` empties `slot`: assigns it `None` or an empty list, deletes it, or empties the
  /// whole container (`saved.clear()`, `del saved[:]`).
  bool clearsSlot(NodeId s, NodeId slot) const;
  /// After `store` writes `slot`, a statement that every path through the rest of `iteration`
  /// runs empties it again (`state["out"] = None` at the end of the step): what was stored does
  /// not outlive the iteration.
  bool clearedLaterInIteration(NodeId store, NodeId slot, NodeId iteration) const;
  /// `x` is a value that is known to be on the GPU (device variables, `.cuda()` targets).
  bool isGpuDeviceExpr(NodeId expr) const;

  // ------------------------------------------------------------ summaries, events, loops
  const Summary& summary(uint32_t fn) const { return summaries_[fn]; }
  /// The events of one function's body in source order, calls of local functions expanded to the
  /// events their summaries list.
  const std::vector<StepEvent>& events(uint32_t fn) const { return events_[fn]; }
  /// The events of `stmt` and the statements nested in it: one loop's iteration, without the
  /// rest of the function. Where the function's statements are not listed in pre-order (never
  /// seen on real code) it is all the function's events: callers still test `within()`.
  std::span<const StepEvent> eventsWithin(NodeId stmt) const;
  /// Statement contains (in its subtree, same function) a backward, autograd.grad or optimizer
  /// step, directly or through a call to a function of this file that does.
  bool reachesBackwardOrStep(NodeId stmt) const { return (subtreeEvents_[stmt] & event::kUpdate) != 0; }
  bool reachesBackward(NodeId stmt) const { return (subtreeEvents_[stmt] & event::kBackward) != 0; }
  bool reachesEvent(NodeId stmt, uint8_t events) const { return (subtreeEvents_[stmt] & events) != 0; }
  /// An update (backward or optimizer step, made here or by a function this one calls) runs in the
  /// same iteration as `site`: the innermost loop around the update also holds `site`. After
  /// `for batch in loader: ... loss.backward()` inside an epoch loop, an `evaluate()` that follows
  /// the batch loop is no part of a training step.
  bool updateInIterationOf(NodeId site) const;
  /// An event's kinds, with those of the function of this project it calls (a `train_step()`
  /// call is a backward and a step).
  uint8_t eventKinds(const StepEvent& e) const;
  /// A call site of `fn` sits in a loop that updates (an epoch loop around its batch loop), though
  /// not in the update's iteration; carried down to callees. Such a function may be an evaluation,
  /// but what it computes could still reach the next step: its fixes are never safe.
  bool calledBetweenSteps(uint32_t fn) const { return calledBetweenSteps_[fn]; }
  bool functionReachesUpdate(uint32_t fn) const { return (summaries_[fn].events & event::kUpdate) != 0; }
  uint8_t loopRole(NodeId loop) const { return loop == kNone ? 0 : loopRole_[loop]; }
  /// Some loop of the function (not of a nested def) trains: it runs the steps itself.
  bool holdsTrainingLoop(uint32_t fn) const { return trainingLoopIn_[fn]; }
  /// loop_role bits of a method a training framework calls once per batch of its own loop
  /// (Lightning's training_step / validation_step, a Hugging Face Trainer's compute_loss), else 0.
  uint8_t frameworkStep(uint32_t fn) const;
  /// The framework of a class (0: none; see frameworks.cpp), through bases here or in other modules.
  uint8_t classFramework(int32_t cls) const;
  /// "Lightning", "the Hugging Face Trainer" for a framework step, else "".
  std::string_view frameworkName(uint32_t fn) const;
  /// At `return` statement `ret` of a step whose return values the framework keeps until the
  /// epoch ends (Lightning 1.x's `training_step` in a module overriding `training_epoch_end`):
  /// the returned dict's entries it keeps as they are, the detached `loss` aside. Empty otherwise.
  std::vector<NodeId> keptStepOutputs(NodeId ret) const;
  /// A call of this file that runs function `fn` on every iteration of a training, evaluation or
  /// data loop (`for batch in loader: self.train_step(batch)`), directly or through functions such
  /// a loop calls; kNone when no call does, when every call is guarded (`if step % 100 == 0:`)
  /// or when `fn` runs a loop of some role itself (an epoch or a whole run is not a step). What
  /// `fn` keeps on `self` outlives its step.
  NodeId stepCallOf(uint32_t fn) const { return fn < stepCall_.size() ? stepCall_[fn] : kNone; }
  /// `forward` of a module class of this file that no loop or framework of the file runs per
  /// iteration: whatever trains the module (a loop in another file, a Trainer) calls it once per
  /// step, so what it appends to `self` on every call grows by a step's worth each time. Its def
  /// statement, or kNone.
  NodeId forwardStepOf(uint32_t fn) const;
  /// A function of this file that runs a backward and that no code of the file calls or names
  /// (a loss object's `gen_loss`, a trainer's `optimize`): whatever trains with it, in another
  /// file, calls it once per step. Its def statement, or kNone (also for dunder methods and
  /// `forward`, which run without being named, and for steps a loop or framework of the file runs).
  NodeId externalStepOf(uint32_t fn) const;
  /// What the callers of method `fn` do with the graphs of its arguments, as another
  /// implementation shows: a method of the same name in another class of the file runs a backward
  /// that frees the graph (no `retain_graph`, no `create_graph`), on every path, over a value
  /// computed from its own parameter i. Code written for either object cannot run a second
  /// backward through that argument.
  struct LetGo {
    uint32_t params = 0;    // bit i: parameter i (never `self`)
    NodeId evidence = kNone;  // the first such backward call
  };
  LetGo graphsLetGoByCallers(uint32_t fn) const;
  /// The parameters of its function whose graphs the graph of value `e` may include, into
  /// `params` (bit i: parameter i, `self` included); false when part of it may come from elsewhere
  /// (an attribute of `self` or a global that may carry history, a loop's target, code too deep
  /// to follow). Followed through the function's assignments; literals, values without history,
  /// fresh leaves (`Variable(x, requires_grad=True)`) and the callable of a call (a module, a
  /// function: its result is made from its arguments) add nothing; an index never carries a
  /// gradient, so `x[i]` is made of `x` alone.
  bool graphInputs(NodeId e, uint32_t& params) const;
  /// Function `fn` may keep something with history past its return: it returns it, or assigns,
  /// appends or sums it into anything but a local name (an attribute, an item, a global).
  bool keepsHistoryPastCall(uint32_t fn) const;
  /// The statements of the file outside every `__init__` that rebind, empty, detach in place or
  /// delete an attribute named `attr` of some object (`self.feats = []`, `model.feats.clear()`,
  /// `self.state.detach_()`, `del m.feats[:]`), in source order. None: what a forward appends
  /// there or carries in it is never let go by this file.
  const std::vector<NodeId>& attributeWriters(std::string_view attr) const;
  /// Assignment `stmt` in a module's `forward` rebinds `target`, an attribute of `self`, from a
  /// value that reads it (`out, self.hidden = self.lstm(x, self.hidden)`): state carried from one
  /// call to the next, which no other statement of the file outside `__init__` rebinds, clears or
  /// detaches (an initialisation under a test of it, `if self.hidden is None:`, aside).
  bool carriedAcrossForwards(NodeId stmt, NodeId target) const;
  /// The iteration a statement belongs to: its innermost loop; outside every loop of a nested def
  /// that a loop's iteration defines and runs (`def closure(): ...; optimizer.step(closure)`),
  /// that loop; or, outside every loop of a framework step or of a function a loop calls per
  /// iteration (stepCallOf), the function's def statement (the framework's loop, or the caller's,
  /// runs it once per batch).
  NodeId iterationOf(NodeId stmt) const;
  /// The iteration that repeats `stmt` as a step of work: iterationOf, past plain loops that have
  /// no role of their own (`for k, v in losses.items(): total[k] += v` inside a training loop
  /// repeats with the training loop's iterations). kNone when no enclosing iteration has a role.
  NodeId stepIterationOf(NodeId stmt) const;
  /// loop_role bits of an iteration: a loop's role, or those of the framework's or callers' loops
  /// that run a function's body.
  uint8_t iterationRole(NodeId iteration) const;

  // ------------------------------------------------------------ program-level facts
  /// The file clears gradients somewhere (zero_grad, `p.grad = None`, a framework that does it).
  /// A helper of another module that zeroes them is an event of the call (importedCallee).
  bool clearsGradients() const { return clearsGradients_; }
  /// This file binds each process to its GPU (`set_device`, `init_process_group(device_id=)`,
  /// `os.environ["CUDA_VISIBLE_DEVICES"] = ...` set per process): what it tells the rest of its
  /// program.
  bool bindsDevice() const;
  /// This file makes a GradScaler.
  bool usesGradScaler() const;
  /// The file is written for a GPU: a "cuda" string, a torch.cuda or torch.accelerator call, a
  /// `.cuda()`, an identifier that names CUDA. What it tells the rest of its program.
  bool mentionsCuda() const { return fileMentionsCuda_; }
  /// It or another file of its program is (`device = torch.device("cuda")` in main.py makes the
  /// `device` parameter of engine.py's `evaluate(model, loader, device)` a GPU; a tensor's own
  /// `x.device` it does not: isGpuDeviceExpr).
  /// The object a Hugging Face `Accelerator()` or a Lightning `Fabric()` constructed (launchers.cpp).
  bool isLauncher(NodeId expr) const;
  /// `accelerator.gather(x)`, `gather_for_metrics`, `pad_across_processes`, `fabric.all_gather`:
  /// what it returns has no autograd history and sits on the launcher's device.
  bool gathersAcrossProcesses(NodeId call) const;
  /// A launcher that moves what it prepares to a GPU (not `Accelerator(cpu=True)` or
  /// `device_placement=False`).
  bool launcherPlaces(NodeId expr) const;
  /// `iter` names a loader such a launcher prepared in the same function (or, for `self.dl`, a
  /// method of the same class): its batches arrive on the GPU.
  bool loaderOnGpu(NodeId iter) const;
  /// The same for a module the launcher prepared: what it computes is on the GPU.
  bool placedModule(NodeId module) const;
  bool programMentionsCuda() const { return fileMentionsCuda_ || (project_ && project_->programFact(ProgramFact::MentionsCuda)); }
  /// Another file of the program binds each process to its GPU (`set_device` in main.py).
  bool programBindsDevice() const { return project_ && project_->programFact(ProgramFact::BindsDevice); }
  /// Another file of the program makes or uses a GradScaler (an AMP optimizer wrapper owning one).
  bool programUsesGradScaler() const { return project_ && project_->programFact(ProgramFact::UsesGradScaler); }
  /// The statement is in a branch that exists for another PyTorch version or a missing API: a
  /// torch-version or `hasattr` test, or an `except (AttributeError, ImportError, TypeError)`.
  bool versionGated(NodeId stmt) const;
  /// The same for an expression: its statement is gated, or it is an arm of a conditional
  /// expression that tests the version (`new() if TORCH_GE_2_4 else old()`).
  bool versionGatedExpr(NodeId expr) const;
  /// Where the file shows it runs distributed (starts a process group, reads LOCAL_RANK) without
  /// binding each process to its GPU (`set_device`, a `device_id` for the process group): kNone
  /// when it does not, or binds the device. Asked per DataLoader; worked out once.
  NodeId distributedWithoutDevice() const;

  /// Naming conventions (names.h) a name follows, asked once per distinct name: the same few
  /// names (`model`, `criterion`, `optimizer`) are asked about at every call of every loop.
  static constexpr uint8_t kNamedModule = 1, kNamedLoss = 2, kNamedOptimizer = 4, kNamedLoader = 8, kNamedDevice = 16,
                           kNamedScheduler = 32;
  bool looksLike(std::string_view name, uint8_t convention) const;
  /// Every convention `name` follows, as kNamed* bits: one lookup for a question about several.
  uint8_t namedAs(std::string_view name) const;

 /// A kind with its evidence: the class (Instance / Module of this file) and constructing call.
  struct KindFact {
    Kind kind = Kind::Unknown;
    Evidence evidence = Evidence::None;
    int32_t cls = -1;
    NodeId ctor = kNone;
  };

 private:
  struct FreezeWrite {
    uint32_t offset;
    bool frozen;
    NodeId stmt;
    NodeId module;  // the module expression whose parameters it writes, kNone when not all of them
  };
  KindFact kindFactOf(NodeId expr) const;
  Kind computeKind(NodeId expr, Evidence* evidence) const;
  /// computeKind given kindFactOf(expr): the fact when it has evidence, else the naming convention.
  Kind kindFrom(NodeId expr, const KindFact& fact, Evidence* evidence) const;
  static constexpr uint8_t kClassified = 1, kForwardCall = 2, kLossCall = 4, kStepCall = 8;
  uint8_t callClass(NodeId call) const;
  bool computeForwardCall(NodeId call) const;
  bool computeLossCall(NodeId call) const;
  bool computeOptimizerStep(NodeId call) const;
  Kind namedKind(NodeId expr) const;
  KindFact lookupPath(uint32_t fn, std::string_view path) const;
  static uint64_t scopeKey(uint32_t scope, bool selfPath) { return (static_cast<uint64_t>(selfPath) << 32) | scope; }

  const Module& m_;
  const ProjectView* project_ = nullptr;
  mutable std::unordered_map<NodeId, const ImportedFunction*> importedCallee_;  // once kinds are final
  // structure
  std::vector<std::vector<NodeId>> fnStmts_;
  std::vector<std::vector<NodeId>> stmtCalls_;
  std::vector<NodeId> loopOf_;
  std::vector<NodeId> closureRun_;  // per function: the call of a loop's iteration that runs this nested def, or kNone
  std::unordered_map<NodeId, std::vector<uint32_t>> closuresHandedTo_;  // per call: closures it runs (`optimizer.step(closure)`)
  std::vector<std::vector<NodeId>> updateLoops_;  // per function: innermost loops of its backward/step events, sorted
  std::vector<bool> calledBetweenSteps_;            // per function: see calledBetweenSteps
  std::vector<uint32_t> depth_;                     // per stmt: nesting depth within its function
  std::vector<uint32_t> posInFn_, endInFn_;         // per stmt: its nested run in fnStmts_ of its function
  std::vector<int32_t> branch_;                     // per stmt: the list of its parent holding it (-1: none)
  std::vector<bool> preorder_;                      // per function: fnStmts_ lists its tree in pre-order
  std::vector<bool> runsOnce_;                      // per loop
  mutable std::unordered_map<NodeId, std::vector<NodeId>> nestedLists_;  // statementsWithin where not
  std::unordered_map<std::string_view, std::vector<uint32_t>> functionsByName_;
  /// The first class of this file with each name (a name is looked up for every unresolved call).
  std::unordered_map<std::string_view, int32_t> classesByName_;
  int32_t classNamed(std::string_view name) const {
    auto it = classesByName_.find(name);
    return it == classesByName_.end() ? -1 : it->second;
  }
  std::vector<std::vector<int32_t>> classFamily_;   // per class: itself, its in-file bases and subclasses
  std::vector<int32_t> familyRoot_;                 // per class: representative of its family
  // The functions each call may run, by call id: call e's are callTargetIds_[callTargetStart_[e] ..
  // callTargetStart_[e + 1]). Every pass asks this of every call, so it is an array, not a map.
  std::vector<uint32_t> callTargetStart_;
  std::vector<uint32_t> callTargetIds_;
  /// C++ spells paths `a->b` or a bare member: keys are the model's dotted paths, kept here.
  std::deque<std::string> cppKeyText_;
  std::vector<std::string_view> cppKeys_;
  mutable std::vector<std::string_view> pathKeys_;  // Python attribute chains' keys, once asked
  /// Per function, once asked: each collection name -> the host copies of it, in source order.
  const std::unordered_map<std::string_view, std::vector<NodeId>>& hostCopiesIn(uint32_t fn) const;
  mutable std::unordered_map<uint32_t, std::unordered_map<std::string_view, std::vector<NodeId>>> hostCopies_;
  mutable std::vector<bool> pathDone_;
  // kinds
  std::vector<bool> moduleClass_;
  std::vector<bool> accumulatorClass_;
  std::vector<bool> batchClass_;  // batch_classes.cpp
  std::unordered_map<uint64_t, std::unordered_map<std::string_view, KindFact>> kinds_;  // scope -> path -> kind
  std::unordered_map<std::string_view, std::vector<FreezeWrite>> freezes_;             // path -> writes in source order
  std::unordered_map<std::string_view, std::vector<uint32_t>> modulesPlaced_;  // module path -> functions where a launcher prepared it
  std::unordered_map<std::string_view, std::vector<uint32_t>> loadersOnGpu_;  // loader path -> functions where a launcher prepared it
  std::unordered_set<std::string_view> gpuNames_;      // device variables / tensors known on GPU
  std::unordered_set<std::string_view> modulesOnGpu_;  // modules moved with `.cuda()` / `.to(gpu)`
  std::unordered_set<std::string_view> cpuNames_;      // names only ever given the CPU device
  bool fileMentionsCuda_ = false;                      // a "cuda" string, a torch.cuda call or a `.cuda()`
  // grad mode, evaluation
  std::vector<GradMode> gradMode_;
  std::unordered_map<NodeId, NodeId> evalOpener_;  // forward call -> opener
  std::unordered_map<NodeId, CallEval> callEval_;  // calls of other modules -> arguments in eval mode
  std::unordered_map<NodeId, FlagEval> flagEval_;     // forward on a flag's evaluation path -> why
  std::unordered_map<NodeId, NodeId> discardedAt_;   // forward whose graph nobody uses -> first value sink
  std::unordered_map<NodeId, NodeId> helperForward_;  // helper call on an evaluation path -> the forward it runs
  std::unordered_set<NodeId> sharedHelperCalls_;       // those of them that split a shared helper per path
  std::vector<bool> evalStmt_;                     // per stmt: some module is in eval mode here
  std::vector<bool> evalFunction_;
  // values
  std::vector<ValueFact> values_;
  std::vector<NodeId> useBind_;
  std::vector<NodeId> useSite_;
  std::vector<NodeId> useBound_;
  // summaries, events, loops
  std::vector<Summary> summaries_;
  std::vector<std::vector<StepEvent>> events_;
  std::vector<uint8_t> subtreeEvents_;
  std::vector<uint8_t> loopRole_;
  std::vector<bool> trainingLoopIn_;  // per function
  std::vector<uint8_t> classFramework_;  // per class: frameworks.cpp's framework id
  std::vector<uint8_t> frameworkStep_;   // per function: loop_role bits of a framework step
  std::vector<char> keepsStepOutputs_;   // per class: Lightning collects its training_step outputs
  std::vector<uint8_t> calledStepRole_;  // per function: loop_role bits of the loops that call it per iteration
  std::vector<NodeId> stepCall_;         // per function: a call that runs it per iteration, or kNone
  std::vector<bool> versionGated_;
  std::unordered_set<NodeId> versionGatedExprs_;
  std::vector<bool> unreachable_;
  bool clearsGradients_ = false;
  mutable std::unordered_map<std::string_view, uint8_t> namedAs_;  // looksLike's answers so far
  /// kindOf / kindEvidence / classOf / constructorOf per expression, filled on first use once the
  /// kinds pass is done: one slot holds the whole answer, so asking all four costs one lookup.
  struct KindAnswer {
    KindFact fact;           // kindFactOf
    Kind kind = Kind::Unknown;  // computeKind: the fact, else the naming convention
    Evidence evidence = Evidence::None;
    bool known = false;
  };
  const KindAnswer* kindAnswer(NodeId e) const;
  /// kindFactOf, from the cache once it is settled.
  KindFact settledFact(NodeId e) const;
  mutable std::vector<KindAnswer> kindCache_;
  bool cacheAll_ = false;  // calls' kinds may be remembered too (call targets are known)
  mutable std::vector<uint8_t> callClass_;  // per call: forward / loss / optimizer step, once asked
  struct NameIndex {
    std::unordered_map<std::string_view, std::vector<NodeId>> assigns, reads;
  };
  const NameIndex& nameIndex(uint32_t fn) const;
  mutable std::unordered_map<uint32_t, NameIndex> nameIndex_;  // per function, once asked
  mutable std::unique_ptr<std::unordered_map<std::string_view, std::vector<NodeId>>> attributeWriters_;  // once asked
  mutable std::unique_ptr<std::unordered_set<std::string_view>> namedInCode_;  // externalStepOf, once asked
  mutable int64_t distributedEvidence_ = -1;  // distributedWithoutDevice, once asked (-1: not yet)
  // Per loop, once asked: for each path its body mentions (attribute chains' prefixes too), the
  // first top-level statement of the body that does. readBeforeWritten starts its walk there, so
  // asking it for each of a long loop's assignments stays linear.
  mutable std::unordered_map<NodeId, std::unordered_map<std::string_view, uint32_t>> firstMentions_;
  mutable std::vector<uint8_t> fusedAttention_;  // per function: 0 unknown, 1 no, 2 yes
  /// The paths, and their dotted prefixes, that function `fn`'s backward calls mention (cached).
  const std::unordered_set<std::string_view>& backwardPaths(uint32_t fn) const;
  mutable std::unordered_map<uint32_t, std::unordered_set<std::string_view>> backwardPaths_;  // backwardPaths, per function

  mutable std::unique_ptr<Sizes> sizes_;

  friend class FactsBuilder;
  friend class ValueWalker;
};

template <typename Fn>
void Facts::forSubtree(NodeId e, Fn&& fn) const {
  if (e == kNone || e >= m_.exprs.size()) return;
  const Span& sp = m_.expr(e).span;
  if (m_.lang == Lang::Python) {
    // Python expressions are stored children first: the subtree is the run of ids ending at `e`.
    for (NodeId x = e + 1; x-- > 0;) {
      const Expr& ex = m_.expr(x);
      if (ex.span.begin < sp.begin || ex.span.end > sp.end) break;
      fn(x);
    }
    return;
  }
  // C++ lowering may interleave: look at the statement's expressions up to `e`.
  NodeId first = m_.expr(e).stmt != kNone ? m_.stmt(m_.expr(e).stmt).firstExpr : 0;
  for (NodeId x = first; x <= e; ++x) {
    const Expr& ex = m_.expr(x);
    if (ex.span.begin >= sp.begin && ex.span.end <= sp.end) fn(x);
  }
}

/// Sentinel loop ids for bindings.
inline constexpr NodeId kBoundOutsideLoops = kNone;
inline constexpr NodeId kBoundAmbiguous = kNone - 1;

}  // namespace oomlint
