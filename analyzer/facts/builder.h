#pragma once
/// Internal to facts/: the builder that runs the passes over one module and fills Facts. Each
/// pass is a group of member functions in its own file; facts.cpp lists the order.

#include <set>
#include <unordered_set>
#include <string_view>
#include <vector>

#include "facts/facts.h"

namespace oomlint {

/// The names a backward's subject is made of (`loss` in `loss.mean()`, both terms of `rec + kl`),
/// not the scale factors; `values` tells a plain number from a tensor.
void subjectRoots(const Module& m, const std::vector<ValueFact>& values, NodeId e, std::vector<NodeId>& out, int depth = 0);

/// A test (`test_*`, or a method of a `TestCase`): it runs models to compare what they compute,
/// not to train or serve them, so its forwards are no evaluation path of the program.
bool isTestFunction(const Module& m, uint32_t fn);

class FactsBuilder {
 public:
  explicit FactsBuilder(Facts& f) : f_(f), m_(f.m_) {}
  void build();

 private:
  friend class Facts;
  friend class ValueWalker;
  // structure.cpp: statements, loops, calls per statement, functions by name, class families.
  void buildStructure();
  // structure.cpp (after kinds): the functions each call may run, and each function's call sites.
  void resolveCallTargets();
  // closures.cpp: nested functions a loop's iteration runs (called or handed to a call there).
  void findInlineClosures();
  // kinds.cpp: module and accumulator classes, kinds of paths, freezes of requires_grad.
  void classifyClasses();
  // frameworks.cpp: classes deriving from a framework's base, and the step methods it runs.
  void findFrameworkSteps();
  void findKeptStepOutputs();
  void collectKinds();
  // batch_classes.cpp (each kinds round): classes whose `__iter__` walks a loader. True when
  // something new was learnt.
  bool findBatchClasses();
  bool walksLoader(uint32_t fn) const;
  // eval_context.cpp: function `fn` loops over a data loader (a module's method that does is a driver).
  bool iteratesLoader(uint32_t fn) const;
  /// `self`, a copy of it, or a name only ever bound to those: the method returns its instance.
  bool returnsOwnInstance(uint32_t fn, NodeId e, int depth) const;
  void collectFreezes();
  // grad_mode.cpp: grad mode at every statement, entry modes joined over call sites.
  void computeGradModes();
  // events.cpp: training-step events per function (direct and through callees), subtree reach,
  // which functions are called on a training path.
  void computeEvents();
  // values.cpp: history and device of every expression, with function summaries bottom-up and
  // a second round for history known from backward calls.
  void computeValues();
  // backward_evidence.cpp (between the values rounds): what backward calls prove. Fills `proofs`
  // (per expression: the call whose evidence gives it history); false when nothing is proven.
  bool collectHistoryEvidence(std::vector<NodeId>& proofs);
  void branchDefinitions(NodeId nameExpr, std::vector<NodeId>& out) const;
  /// Of a loss call a backward proves (`criterion(pred, y)`), the argument its history comes
  /// through: the input, first by every loss's signature, when no argument is known to carry
  /// history already and it is not known to lack it. kNone otherwise.
  NodeId provenLossInput(NodeId call) const;
  /// (proof, subject) pairs for what a training framework backpropagates: a training step's return.
  void frameworkBackwardSubjects(std::vector<std::pair<NodeId, NodeId>>& subjects) const;
  /// Other calls of a callee a backward proved a loss (same spelling, same function or class),
  /// with autograd on and an argument that carries history: proven too. True when any is.
  bool sameCalleeEvidence(std::vector<NodeId>& proofs);
  /// Parameters of each function that a backward runs on (Summary::backwardParams), and the
  /// arguments of calls of such functions, added to `subjects` as (call, argument).
  void computeBackwardParams(std::vector<std::pair<NodeId, NodeId>>& subjects);
  // summaries.cpp: what each function stores or sums from its parameters (syntactic part).
  void computeStores();
  /// computeStores through calls: a function that hands a parameter to a method storing it (and
  /// storeIntoThrough for one that appends a parameter to another).
  void storeThroughCalls();
  /// Summary::storesParamInto for an append of `value` to `receiver` at statement `s` of `fn`.
  void storeIntoParam(uint32_t fn, NodeId s, NodeId receiver, NodeId value);
  /// The same through a call at statement `s` of `fn` (storeThroughCalls runs it): a function
  /// that hands two of its parameters to one that appends. True when `fn` learned a pair.
  bool storeIntoThrough(uint32_t fn, NodeId s, const Facts::Callee& callee);
  // eval_context.cpp: which modules are in eval mode where, and evaluation functions.
  void computeEvalContexts();
  /// wrapper_eval.cpp: a module an inference wrapper's `__init__` leaves in eval mode for good.
  struct KeptInEval {
    std::string_view path;  // `self.model`
    NodeId opener;          // the statement that switches it
  };
  /// Per class of this file: the `self.*` modules each method runs in eval mode (a plain class
  /// that puts them in eval mode in `__init__`, or in a method `__init__` calls, and never
  /// trains, replaces or unfreezes them).
  std::vector<std::vector<KeptInEval>> inferenceWrapperModules() const;
  /// The modules function `fn` (`__init__`, or a method it calls at its top) puts in eval mode at
  /// its top and keeps on `self`, never trained, replaced elsewhere or unfrozen.
  void keptInEvalBy(uint32_t fn, std::vector<KeptInEval>& out) const;
  /// `fn` runs `torch.set_grad_enabled(False)` as a statement: autograd is off after it, for good.
  bool disablesGradForGood(uint32_t fn) const;
  // loop_roles.cpp: training / evaluation / data loops.
  void computeLoopRoles();
  // flag_eval.cpp: forwards on the evaluation path of code that trains or evaluates by a flag.
  void findFlagEvaluations();
  /// The forwards of function `fn` (of `loop`'s body, when not kNone) on the path where `var`
  /// holds literal `value`, as `site` (a call, or the loop) gives it.
  void markFlagEvaluation(uint32_t fn, NodeId loop, std::string_view var, NodeId value, NodeId site);
  int testUnder(NodeId test, std::string_view var, NodeId value) const;
  int runsUnder(NodeId stmt, std::string_view var, NodeId value) const;
  NodeId evalUnder(std::span<const NodeId> scope, std::string_view var, NodeId value, std::string_view& path) const;
  // discarded_forwards.cpp: forwards whose output only reaches history-dropping uses.
  void findDiscardedForwards();
  void findStepsCalledFromLoops();
  /// `stmt` runs on every pass through `iteration` (a loop or a step's def): no `if` or `except`
  /// between them.
  bool runsEveryIteration(NodeId stmt, NodeId iteration) const;
  /// A call of functions of this file that run a forward and never an update: an evaluation
  /// function's loop around it evaluates.
  bool runsForwardOnly(NodeId call) const;
  // program.cpp (before values): names that hold a GPU device, modules moved to the GPU.
  void collectDevices();
  // launchers.cpp (end of collectDevices): modules and loaders a launcher places on the device.
  void collectLauncherPlacements();
  // program.cpp: file-level facts (gradients cleared somewhere, version-gated branches).
  void computeProgramFacts();

  // Shared helpers.
  uint32_t functionOf(NodeId stmt) const { return m_.stmt(stmt).function; }
  /// Statement ids of a block and everything nested in it (same function).
  template <typename Fn>
  void forEachNested(List body, Fn&& fn) const;
  /// Expressions of the subtree of `e` (children are stored before their parents).
  template <typename Fn>
  void forSubtree(NodeId e, Fn&& fn) const;
  void putKind(uint32_t fn, std::string_view path, Kind kind, Evidence ev, int32_t cls = -1, NodeId ctor = kNone);
  Facts::KindFact kindOfValue(NodeId value) const;
  void bindKinds(uint32_t fn, NodeId target, NodeId value, const Facts::KindFact* given);
  /// Calls of every function, as (call, caller function).
  std::vector<std::vector<NodeId>> callSites_;
  /// Per class: its methods (lambdas aside), in definition order. A call looks for its target
  /// among its receiver's class family's, not among every function of the name (a notebook of
  /// many model classes has as many `forward`s).
  std::vector<std::vector<uint32_t>> methodsOf_;
  /// Functions with callees first (recursive groups in any order).
  std::vector<uint32_t> bottomUp_;
  /// Per statement: its grad mode were its function entered with autograd on. What a helper that
  /// callers run in both modes returns to a caller that trains (values.cpp).
  std::vector<GradMode> gradIfEntered_;
  /// Per call expression: the history evidence a backward gave it (second values round).
  std::vector<NodeId> historyEvidence_;
  /// (assignment, name) pairs a backward's evidence reached: of `loss, n = helper(...)` with
  /// `loss.backward()`, only `loss` is proven.
  std::set<std::pair<NodeId, std::string_view>> provenTargets_;
  /// Per assignment a backward's evidence reached: the one string key every proof came through
  /// (`out["loss"].backward()` proves `out = step(x)` through "loss"), or "*" when any came
  /// through the whole value.
  std::unordered_map<NodeId, std::string_view> entryProof_;
  /// entry_detach.cpp: a read of a name whose history is proven only through one entry, after
  /// that entry was replaced by a value without history (`out["loss"] = out["loss"].detach()`),
  /// no longer carries known history.
  void forgetDetachedEntries();
  /// Calls proven by sameCalleeEvidence: another call of the same callee was a loss, so this one
  /// is a loss's output too (summing it adds a loss).
  std::unordered_set<NodeId> lossByCallee_;
  bool kindsFinal_ = false;
  bool kindsChanged_ = false;  // a putKind of this round changed a path's kind

  Facts& f_;
  const Module& m_;
};

template <typename Fn>
void FactsBuilder::forEachNested(List body, Fn&& fn) const {
  for (NodeId s : items(m_, body)) {
    fn(s);
    const Stmt& st = m_.stmt(s);
    if (st.kind == StmtKind::FunctionDef) continue;
    forEachNested(st.body, fn);
    forEachNested(st.orelse, fn);
    forEachNested(st.finalbody, fn);
    for (uint32_t h = 0; h < st.handlerCount; ++h) forEachNested(m_.handlers[st.firstHandler + h].body, fn);
  }
}

template <typename Fn>
void FactsBuilder::forSubtree(NodeId e, Fn&& fn) const {
  if (e == kNone) return;
  const Span& sp = m_.expr(e).span;
  for (NodeId x = e + 1; x-- > 0;) {
    const Expr& ex = m_.expr(x);
    if (ex.span.begin < sp.begin || ex.span.end > sp.end) break;
    fn(x);
  }
}

}  // namespace oomlint
