// Pass 6, evaluation contexts: which modules are in eval mode where.
//
// `eval()` belongs to its receiver: after `teacher.eval()` only forwards of `teacher` (and of its
// submodules) are evaluation forwards. Each function is walked with the set of module paths that
// are in eval mode on every path to the statement (`.eval()` / `.train(False)` add, `.train()`
// removes, branches intersect); a function starts with what all its call sites of this file agree
// on, mapped through the arguments (`evaluate(model, loader)` after `model.eval()`). A region
// whose eval-mode modules are then trained (test-time adaptation, MAML) is not evaluation.
// Functions named and shaped for evaluation (a data loop in `validate`, `evaluate_epoch` ...)
// count too, unless they are a module's own methods or a training path calls them.
#include <algorithm>
#include <unordered_set>

#include "facts/builder.h"
#include "facts/mode_switch.h"
#include "facts/names.h"
#include "facts/torch_api.h"

namespace oomlint {

namespace {

struct EvalEntry {
  std::string_view path;
  NodeId opener;
};
using EvalSet = std::vector<EvalEntry>;

/// `self.method(...)`: the callee shares the caller's `self`, so `self.*` entries carry over.
bool calledOnSelf(const Module& m, NodeId call) {
  const Expr& callee = m.expr(m.expr(call).lhs);
  return callee.kind == ExprKind::Attribute && isSelfName(m, callee.lhs);
}

bool isSelfPath(std::string_view path) { return path.substr(0, 5) == "self."; }

NodeId covers(const EvalSet& set, std::string_view path) {
  if (path.empty()) return kNone;
  for (const EvalEntry& e : set)
    if (names::extendsPath(path, e.path)) return e.opener;
  return kNone;
}

EvalSet intersect(const EvalSet& a, const EvalSet& b) {
  EvalSet out;
  if (a.size() * b.size() <= 64) {  // the usual few modules: no hashing
    for (const EvalEntry& e : a)
      for (const EvalEntry& o : b)
        if (o.path == e.path) {
          out.push_back(e);
          break;
        }
    return out;
  }
  std::unordered_set<std::string_view> inB;
  for (const EvalEntry& o : b) inB.insert(o.path);
  for (const EvalEntry& e : a)
    if (inB.count(e.path)) out.push_back(e);
  return out;
}

bool sameSet(const EvalSet& a, const EvalSet& b) {
  if (a.size() != b.size()) return false;
  if (a.size() <= 8) {
    for (const EvalEntry& e : a) {
      bool found = false;
      for (const EvalEntry& o : b)
        if (o.path == e.path && o.opener == e.opener) found = true;
      if (!found) return false;
    }
    return true;
  }
  std::unordered_map<std::string_view, std::vector<NodeId>> inB;
  for (const EvalEntry& o : b) inB[o.path].push_back(o.opener);
  for (const EvalEntry& e : a) {
    auto it = inB.find(e.path);
    if (it == inB.end() || std::find(it->second.begin(), it->second.end(), e.opener) == it->second.end()) return false;
  }
  return true;
}

}  // namespace

std::string_view Facts::forwardReceiverPath(NodeId call) const {
  NodeId callee = m_.expr(call).lhs;
  for (int guard = 0; guard < 4; ++guard) {
    const Expr& c = m_.expr(callee);
    if (c.kind == ExprKind::Attribute && c.text == "forward") callee = c.lhs;
    else if (c.kind == ExprKind::Subscript) callee = c.lhs;
    else break;
  }
  return pathKey(callee);
}

bool isTestFunction(const Module& m, uint32_t fn) {
  std::string_view name = m.functions[fn].name;
  // pytest's naming: a C++ program's `test_model(net, loader)` is its evaluation, and C++ unit
  // tests are written with a framework's macros instead.
  if (m.lang == Lang::Python && (name.substr(0, 5) == "test_" || name.substr(0, 6) == "_test_")) return true;
  int32_t cls = m.functions[fn].cls;
  if (cls >= 0)
    for (NodeId b : items(m, m.classes[static_cast<size_t>(cls)].bases))
      if (m.textOf(b).find("TestCase") != std::string_view::npos) return true;
  return false;
}

namespace {

class EvalWalker {
 public:
  EvalWalker(Facts& f, const Module& m, std::unordered_map<NodeId, EvalSet>& sites, std::unordered_set<NodeId>& training,
             std::unordered_map<NodeId, std::vector<NodeId>>& attributed, std::vector<bool>& evalStmt,
             std::unordered_map<NodeId, NodeId>& opener, std::unordered_map<NodeId, Facts::CallEval>& callEval)
      : f_(f), m_(m), sites_(sites), training_(training), attributed_(attributed), evalStmt_(evalStmt), opener_(opener),
        callEval_(callEval) {}

  /// `M.eval()` / `M.train()` as a statement, M a module: 'e' / 't' / 0.
  char modeSwitch(NodeId s, std::string_view& path) const {
    const Stmt& st = m_.stmt(s);
    if (st.value == kNone || m_.expr(st.value).kind != ExprKind::Call) return 0;
    // `model.eval()`, `model.cuda().eval()`, `model.eval().to(device)`; and assignments that keep
    // the module: `model = Net().to(device).eval()`, `net = net.eval()`.
    NodeId base = kNone;
    char sw = moduleModeSwitch(m_, st.value, base);
    if (!sw) return 0;
    NodeId subject = base;
    if (st.kind == StmtKind::Assign) {
      if (st.targets.count != 1) return 0;
      subject = st.target;
    } else if (st.kind != StmtKind::Expr) {
      return 0;
    }
    if (subject == kNone) return 0;
    Kind k = f_.kindOf(subject);
    if (k != Kind::Module && k != Kind::ModuleCollection) return 0;
    path = f_.pathKey(subject);
    return path.empty() ? 0 : sw;
  }

  /// A call of no function of this file (perhaps of another module): which of its arguments
  /// are modules in eval mode, for the callee's file to read.
  void noteEvalArguments(NodeId call, const EvalSet& set) {
    Facts::CallEval out;
    uint32_t position = 0;
    for (const Arg& a : argsOf(m_, m_.expr(call))) {
      bool covered = covers(set, f_.pathKey(a.value)) != kNone;
      if (a.keyword.empty()) {
        if (covered && position < 32) out.positional |= 1u << position;
        ++position;
      } else if (covered && a.keyword != "*" && a.keyword != "**") {
        out.keywords.push_back(a.keyword);
      }
    }
    if (out.positional || !out.keywords.empty()) callEval_[call] = std::move(out);
  }

  /// What of `set` a call of a function of this file can pass on: the entries covering one of its
  /// arguments, and `self.*` ones for a method called on `self` (computeEvalContexts maps no
  /// others into the callee). A notebook puts a module in eval mode per cell: copying them all
  /// at every call made this pass quadratic in the cells.
  EvalSet relevantTo(NodeId call, const EvalSet& set) const {
    EvalSet out;
    if (set.empty()) return out;
    bool onSelf = calledOnSelf(m_, call);
    std::vector<std::string_view> args;
    for (const Arg& a : argsOf(m_, m_.expr(call))) {
      std::string_view p = f_.pathKey(a.value);
      if (!p.empty()) args.push_back(p);
    }
    // `model.encode_query(q)`: the receiver is the method's `self` (mapIntoCallee).
    if (NodeId recv = receiverOf(m_, call); recv != kNone && !onSelf && !f_.pathKey(recv).empty()) args.push_back(f_.pathKey(recv));
    // Module-level names reach the callee as its globals (mapIntoCallee keeps those it reads).
    bool atModuleLevel = m_.stmt(m_.expr(call).stmt).function == 0;
    for (const EvalEntry& e : set) {
      bool keep = (onSelf && isSelfPath(e.path)) || (atModuleLevel && e.path.find('.') == std::string_view::npos);
      for (size_t i = 0; !keep && i < args.size(); ++i) keep = names::extendsPath(args[i], e.path);
      if (keep) out.push_back(e);
    }
    return out;
  }

  /// The path a test asks "is this a module?" of: `hasattr(P, "eval")` (or "train"),
  /// `isinstance(P, nn.Module)`. Empty for any other test.
  std::string_view capabilityGuarded(NodeId test) const {
    if (test == kNone || m_.expr(test).kind != ExprKind::Call) return {};
    std::string_view fn = calleeName(m_, test);
    NodeId subject = positionalArg(m_, test, 0), what = positionalArg(m_, test, 1);
    if (subject == kNone || what == kNone || !m_.canonical(test).empty()) return {};
    const Expr& w = m_.expr(what);
    if (fn == "hasattr") {
      if (w.kind != ExprKind::String) return {};
      std::string_view name = stringContents(w.text);
      if (name != "eval" && name != "train") return {};
    } else if (fn == "isinstance") {
      std::string_view cls = m_.canonical(what);
      if (cls != "torch.nn.Module" && cls != "torch.nn.modules.module.Module") return {};
    } else {
      return {};
    }
    return f_.pathKey(subject);
  }

  std::string_view forwardReceiver(NodeId call) const { return f_.forwardReceiverPath(call); }

  void block(List body, EvalSet& set, bool record) {
    for (NodeId s : items(m_, body)) statement(s, set, record);
  }

  void statement(NodeId s, EvalSet& set, bool record) {
    const Stmt& st = m_.stmt(s);
    if (record) {
      evalStmt_[s] = !set.empty();
      for (NodeId c : f_.callsOf(s)) {
        if (f_.isForwardCall(c)) {
          NodeId op = covers(set, forwardReceiver(c));
          if (op != kNone) {
            opener_[c] = op;
            attributed_[op].push_back(c);
          }
        }
        if (!f_.callTargets(c).empty() && !f_.isForwardCall(c)) sites_[c] = relevantTo(c, set);
        bool updates = f_.isBackwardCall(c) || f_.isOptimizerStep(c) || f_.isAutogradGradCall(c);
        for (uint32_t t : f_.callTargets(c))
          if (f_.summary(t).events & event::kUpdate) updates = true;
        if (const ImportedFunction* imp = f_.importedCallee(c))
          if (imp->summary->events & event::kUpdate) updates = true;
        if (f_.callTargets(c).empty() && !set.empty()) noteEvalArguments(c, set);
        if (updates)
          for (const EvalEntry& e : set) training_.insert(e.opener);
      }
    }
    switch (st.kind) {
      case StmtKind::Assign:
      case StmtKind::Expr: {
        std::string_view path;
        apply(modeSwitch(s, path), path, s, set);
        break;
      }
      case StmtKind::If: {
        EvalSet a = set, b = set;
        const uint64_t before = switches_;
        block(st.body, a, record);
        block(st.orelse, b, record);
        if (switches_ != before) {  // else both are `set` still
          // `if hasattr(model, "eval"): model.eval()`, or under `isinstance(model, nn.Module)`:
          // where the test fails, `model` is no module and runs no module's forward, so it is in
          // eval mode wherever it is one.
          std::string_view guarded = items(m_, st.orelse).size() == 0 ? capabilityGuarded(st.value) : std::string_view();
          for (const EvalEntry& e : a)
            if (!guarded.empty() && e.path == guarded &&
                std::none_of(b.begin(), b.end(), [&](const EvalEntry& o) { return o.path == e.path; }))
              b.push_back(e);
          set = intersect(a, b);
        }
        break;
      }
      case StmtKind::For:
      case StmtKind::While: {
        // `for key in models.keys(): models[key].eval()`: the whole collection.
        NodeId collection = kNone;
        if (char sw = collectionModeSwitch(m_, s, collection); sw && !f_.pathKey(collection).empty()) {
          EvalSet scratch = set;
          block(st.body, scratch, record);
          apply(sw, f_.pathKey(collection), s, set);
          break;
        }
        EvalSet a = set;
        const uint64_t before = switches_;
        block(st.body, a, record);
        if (switches_ != before) {  // else the body left `set` as it was: one pass is the fixed point
          EvalSet second = intersect(set, a);
          if (second.size() != set.size()) {  // `second` keeps entries of `set`: equal sizes, same set
            EvalSet b = second;
            block(st.body, b, record);
          }
          set = std::move(second);
        }
        block(st.orelse, set, record);
        break;
      }
      case StmtKind::Try: {
        EvalSet a = set;
        const uint64_t before = switches_;
        block(st.body, a, record);
        EvalSet joined = a;
        for (uint32_t h = 0; h < st.handlerCount; ++h) {
          EvalSet c = set;
          block(m_.handlers[st.firstHandler + h].body, c, record);
          if (switches_ != before) joined = intersect(joined, c);
        }
        block(st.orelse, a, record);
        if (switches_ != before) set = intersect(joined, a);  // else every path left `set` as it was
        block(st.finalbody, set, record);
        break;
      }
      case StmtKind::FunctionDef: break;
      case StmtKind::ClassDef: {
        EvalSet inner = set;
        block(st.body, inner, record);
        break;
      }
      default: block(st.body, set, record); break;
    }
  }

 private:
  /// A mode switch of `path` at statement `s`: 'e' adds it, 't' removes it and what is under it.
  void apply(char sw, std::string_view path, NodeId s, EvalSet& set) {
    if (sw) ++switches_;  // a set changed: the joins below must intersect again
    if (sw == 'e') {
      set.erase(std::remove_if(set.begin(), set.end(), [&](const EvalEntry& e) { return e.path == path; }), set.end());
      set.push_back({path, s});
    } else if (sw == 't') {
      set.erase(std::remove_if(set.begin(), set.end(), [&](const EvalEntry& e) { return names::extendsPath(e.path, path); }), set.end());
    }
  }

  Facts& f_;
  const Module& m_;
  std::unordered_map<NodeId, EvalSet>& sites_;
  std::unordered_set<NodeId>& training_;
  std::unordered_map<NodeId, std::vector<NodeId>>& attributed_;
  std::vector<bool>& evalStmt_;
  std::unordered_map<NodeId, NodeId>& opener_;
  std::unordered_map<NodeId, Facts::CallEval>& callEval_;
  uint64_t switches_ = 0;  // eval()/train() statements walked so far: a set can change only at one
};

/// Methods of a module class (or of a class with a `forward`): their callers choose the grad mode.
std::vector<bool> moduleMethods(const Facts& f, const Module& m) {
  std::vector<bool> hasForward(m.classes.size(), false);
  for (const Function& o : m.functions)
    if (o.cls >= 0 && o.name == "forward") hasForward[static_cast<size_t>(o.cls)] = true;
  std::vector<bool> out(m.functions.size(), false);
  for (uint32_t fn = 0; fn < m.functions.size(); ++fn) {
    int32_t cls = m.functions[fn].cls;
    out[fn] = cls >= 0 && (f.isModuleClass(cls) || hasForward[static_cast<size_t>(cls)]);
  }
  return out;
}

/// What of the eval set at a call of `fn` holds in `fn`: entries covering an argument, as the
/// parameter it binds, and `self.*` entries for a method called on `self`.
/// The entries of `at` on module-level names that function `fn` reads as globals (`model` put in
/// eval mode at the top of a script, read by `predict(image)`).
EvalSet globalsSeenBy(const Facts& f, uint32_t fn, const EvalSet& at) {
  EvalSet out;
  for (const EvalEntry& e : at) {
    std::string_view root = e.path.substr(0, e.path.find('.'));
    if (root != "self" && f.isModuleName(fn, root)) out.push_back(e);
  }
  return out;
}

EvalSet mapIntoCallee(const Facts& f, const Module& m, uint32_t fn, NodeId call, const EvalSet& at) {
  EvalSet mapped = globalsSeenBy(f, fn, at);
  const Function& fun = m.functions[fn];
  if (calledOnSelf(m, call))
    for (const EvalEntry& e : at)
      if (isSelfPath(e.path)) mapped.push_back(e);
  bool bound = fun.cls >= 0 && m.expr(m.expr(call).lhs).kind == ExprKind::Attribute;
  // `model.encode_query(q)` with `model` in eval mode: the method's `self` is.
  if (bound && fun.paramCount > 0 && !calledOnSelf(m, call))
    if (NodeId op = covers(at, f.pathKey(m.expr(m.expr(call).lhs).lhs)); op != kNone)
      mapped.push_back({m.params[fun.firstParam].name, op});
  for (uint32_t i = 0; i < fun.paramCount; ++i) {
    std::string_view pname = m.params[fun.firstParam + i].name;
    if (bound && i == 0) continue;
    NodeId arg = keywordArg(m, call, pname);
    if (arg == kNone) arg = positionalArg(m, call, bound ? i - 1 : i);
    NodeId op = covers(at, f.pathKey(arg));
    if (op != kNone) mapped.push_back({pname, op});
  }
  return mapped;
}

}  // namespace

bool FactsBuilder::iteratesLoader(uint32_t fn) const {
  // A method that walks a data loader itself (`def validate(self, loader)`) drives batches, as an
  // evaluation function does: it is no layer API whose callers pick the grad mode.
  for (NodeId s : f_.fnStmts_[fn]) {
    const Stmt& st = m_.stmt(s);
    if (st.kind == StmtKind::For && st.value != kNone && f_.kindOf(torch_api::unwrapIterable(m_, st.value)) == Kind::Loader)
      return true;
  }
  return false;
}

void FactsBuilder::computeEvalContexts() {
  size_t nf = m_.functions.size();
  f_.evalFunction_.assign(nf, false);
  const std::vector<bool> moduleMethod = moduleMethods(f_, m_);
  // A module class that trains itself (a method of it steps or runs a backward) is a driver, not
  // a layer: its evaluation methods are evaluations like any other, not forwards whose grad mode
  // the caller chooses.
  std::vector<bool> trainsItself(m_.classes.size(), false);
  for (uint32_t fn = 1; fn < nf; ++fn)
    if (m_.functions[fn].cls >= 0 && (f_.summaries_[fn].events & event::kUpdate))
      trainsItself[static_cast<size_t>(m_.functions[fn].cls)] = true;
  std::vector<bool> layerMethod(nf, false);
  for (uint32_t fn = 1; fn < nf; ++fn)
    layerMethod[fn] = moduleMethod[fn] && !trainsItself[static_cast<size_t>(m_.functions[fn].cls)] && !iteratesLoader(fn);
  for (uint32_t fn = 1; fn < nf; ++fn) {
    const Function& f = m_.functions[fn];
    if (f.isLambda || isTestFunction(m_, fn) || layerMethod[fn]) continue;
    if (!names::looksLikeEvalFunction(f.name, m_.lang != Lang::Python)) continue;
    const Summary& sum = f_.summaries_[fn];
    if ((sum.events & event::kUpdate) || sum.calledOnTrainingPath) continue;
    // Shaped for evaluation: it iterates batches, returns what a forward computed, or is named
    // with an evaluation verb first. A shape probe (`infer_output_dim` returns a size) is not.
    bool data = names::hasEvalVerbFirst(f.name) || (sum.returns.history == Tri::Yes && sum.returns.origin != kNone &&
                                                    f_.isForwardCall(sum.returns.origin));
    bool batches = false;  // it iterates a DataLoader, or runs a forward in a loop of its own
    for (NodeId s : f_.fnStmts_[fn]) {
      const Stmt& st = m_.stmt(s);
      if (st.kind != StmtKind::For || st.value == kNone) continue;
      NodeId it = torch_api::unwrapIterable(m_, st.value);
      if (f_.kindOf(it) == Kind::Loader) data = batches = true;
      for (NodeId inner : f_.statementsWithin(s))
        for (NodeId c : f_.callsOf(inner))
          if (!batches && (f_.isForwardCall(c) || runsForwardOnly(c))) batches = true;
    }
    // Called between training steps (after the batch loop, inside the epoch loop): an evaluation
    // when it runs its own batches (`evaluate(model, val_loader)`); a helper without a data loop
    // there (a sampling pipeline that may disable grad itself) is left to its callers.
    if (f_.calledBetweenSteps_[fn] && !batches) continue;
    f_.evalFunction_[fn] = data;
  }

  std::vector<EvalSet> entry(nf);
  // Callers in other modules that pass a module in eval mode (`run_batches(model)` after `model.eval()`).
  std::vector<EvalSet> external(nf);
  std::vector<bool> calledElsewhere(nf, false);
  if (f_.project_)
    for (uint32_t fn = 1; fn < nf; ++fn) {
      std::string q = f_.qualifiedName(fn);
      const CallerContext* callers = q.empty() ? nullptr : f_.project_->callers(q);
      if (!callers) continue;
      calledElsewhere[fn] = true;
      const Function& f = m_.functions[fn];
      bool bound = f.cls >= 0;
      for (uint32_t i = bound ? 1 : 0; i < f.paramCount; ++i) {
        std::string_view pname = m_.params[f.firstParam + i].name;
        uint32_t position = bound ? i - 1 : i;
        bool byPosition = position < 32 && (callers->evalPositional & (1u << position));
        bool byKeyword = std::find(callers->evalKeywords.begin(), callers->evalKeywords.end(), pname) != callers->evalKeywords.end();
        if (byPosition || byKeyword) external[fn].push_back({pname, Facts::kEvalByCaller});
      }
      entry[fn] = external[fn];
    }
  // The methods of an inference wrapper run the modules its `__init__` left in eval mode (a method
  // this file calls starts with what its call sites agree on, as any other).
  std::vector<std::vector<KeptInEval>> wrappers = inferenceWrapperModules();
  for (uint32_t fn = 1; fn < nf; ++fn) {
    const Function& f = m_.functions[fn];
    if (f.cls < 0 || f.isLambda || f.name == "__init__") continue;
    for (const KeptInEval& k : wrappers[static_cast<size_t>(f.cls)]) entry[fn].push_back({k.path, k.opener});
  }
  std::unordered_map<NodeId, EvalSet> sites;
  EvalSet moduleLevel;  // what the module's own code leaves in eval mode
  std::unordered_set<NodeId> training;
  std::unordered_map<NodeId, std::vector<NodeId>> attributed;
  f_.evalStmt_.assign(m_.stmts.size(), false);
  for (int round = 0; round < 4; ++round) {
    sites.clear();
    training.clear();
    attributed.clear();
    f_.evalOpener_.clear();
    f_.callEval_.clear();
    std::fill(f_.evalStmt_.begin(), f_.evalStmt_.end(), false);
    EvalWalker walker(f_, m_, sites, training, attributed, f_.evalStmt_, f_.evalOpener_, f_.callEval_);
    for (uint32_t fn = 0; fn < nf; ++fn) {
      // A layer's own methods are its API: their callers choose the grad mode, so they are no
      // evaluation entry points (`def inference(self, x): self.eval(); return self(x)`). A driver's
      // (a class with a `forward` whose `train_step` backpropagates) are.
      if (m_.functions[fn].isLambda || isTestFunction(m_, fn) || layerMethod[fn]) continue;
      EvalSet set = entry[fn];
      walker.block(m_.functions[fn].body, set, true);
      if (fn == 0) moduleLevel = set;
    }
    // What every call site agrees on, mapped into the callee: arguments to parameters, and
    // `self.*` paths for methods called on `self`.
    bool changed = false;
    for (uint32_t fn = 1; fn < nf; ++fn) {
      const Function& f = m_.functions[fn];
      // A top-level function nothing in the file calls (a callback handed to a UI or server, an
      // entry point): it runs after the module's code, with its globals as that code left them.
      if (!f.isLambda && callSites_[fn].empty() && !calledElsewhere[fn] && f.parent == 0 && f.cls < 0) {
        EvalSet globals = globalsSeenBy(f_, fn, moduleLevel);
        if (!sameSet(globals, entry[fn])) {
          entry[fn] = globals;
          changed = true;
        }
        continue;
      }
      if (f.isLambda || callSites_[fn].empty()) continue;
      EvalSet agreed = external[fn];
      bool first = !calledElsewhere[fn];
      for (NodeId call : callSites_[fn]) {
        auto it = sites.find(call);
        EvalSet mapped;
        if (it != sites.end() && !f_.isForwardCall(call)) mapped = mapIntoCallee(f_, m_, fn, call, it->second);
        agreed = first ? mapped : intersect(agreed, mapped);
        first = false;
      }
      if (!sameSet(agreed, entry[fn])) {
        entry[fn] = agreed;
        changed = true;
      }
    }
    if (!changed) break;
  }
  // A helper that two or more evaluation paths of this file call, and nothing else: each path is
  // its own finding, at its own call (`batch_predict` and `predict_single` both call
  // `self._predict(batch)` after `.eval()`), and the fix goes where each path evaluates.
  std::unordered_map<uint32_t, uint32_t> evalCalls;
  for (const auto& [call, at] : sites) {
    std::span<const uint32_t> targets = f_.callTargets(call);
    if (at.empty() || f_.isForwardCall(call) || targets.size() != 1) continue;
    if (f_.gradMode_[m_.expr(call).stmt] != GradMode::Enabled) continue;
    if (!mapIntoCallee(f_, m_, targets[0], call, at).empty()) ++evalCalls[targets[0]];
  }
  auto splitPerPath = [&](uint32_t helper, NodeId opener) {
    if (opener == Facts::kEvalByName || opener == Facts::kEvalByCaller || m_.stmt(opener).function == helper) return false;
    auto n = evalCalls.find(helper);
    return !calledElsewhere[helper] && n != evalCalls.end() && n->second >= 2 && n->second == callSites_[helper].size();
  };
  // A helper whose callers disagree on grad mode (some run it under `no_grad`): its forward has no
  // grad mode of its own, and the calls made with autograd on are where it runs with it.
  auto splitByGrad = [&](uint32_t helper, NodeId opener, NodeId stmt) {
    if (opener == Facts::kEvalByName || opener == Facts::kEvalByCaller || m_.stmt(opener).function == helper) return false;
    return f_.gradMode_[stmt] == GradMode::Unknown;
  };
  // A helper that runs the forward, called on an evaluation path while a training step calls it
  // too: its callers disagree, so its own forward is on no evaluation path, and the call is the
  // forward of this one (`_validate` puts `self.model` in eval and calls `self._step(batch)`,
  // which `fit` also calls before its backward).
  std::vector<NodeId> moved;  // helper forwards now reported at each path's call
  f_.helperForward_.clear();
  f_.sharedHelperCalls_.clear();
  for (const auto& [call, at] : sites) {
    std::span<const uint32_t> targets = f_.callTargets(call);
    if (at.empty() || f_.isForwardCall(call) || targets.size() != 1) continue;
    if (f_.gradMode_[m_.expr(call).stmt] != GradMode::Enabled) continue;
    uint32_t helper = targets[0];
    if (m_.functions[helper].isLambda || (f_.summaries_[helper].events & event::kUpdate)) continue;  // a training helper
    EvalSet mapped = mapIntoCallee(f_, m_, helper, call, at);
    for (NodeId s : f_.fnStmts_[helper]) {
      if (f_.gradMode_[s] == GradMode::Disabled || f_.helperForward_.count(call)) continue;
      for (NodeId c : f_.stmtCalls_[s]) {
        if (!f_.isForwardCall(c)) continue;
        auto known = f_.evalOpener_.find(c);
        bool split = known != f_.evalOpener_.end() && (splitPerPath(helper, known->second) || splitByGrad(helper, known->second, s));
        if (known != f_.evalOpener_.end() && !split) continue;
        NodeId op = covers(mapped, f_.forwardReceiverPath(c));
        if (op == kNone) continue;
        f_.evalOpener_[call] = op;
        f_.helperForward_[call] = c;
        attributed[op].push_back(call);
        if (split) {
          moved.push_back(c);
          f_.sharedHelperCalls_.insert(call);
        }
        break;
      }
    }
  }
  // Regions that train what they put in eval mode are not evaluation.
  for (NodeId op : training) {
    auto it = attributed.find(op);
    if (it == attributed.end()) continue;
    for (NodeId c : it->second) {
      f_.evalOpener_.erase(c);
      f_.helperForward_.erase(c);
      f_.sharedHelperCalls_.erase(c);
    }
  }
  // Forwards of evaluation functions not already tied to an `.eval()`.
  for (uint32_t fn = 1; fn < nf; ++fn) {
    if (!f_.evalFunction_[fn]) continue;
    for (NodeId s : f_.fnStmts_[fn])
      for (NodeId c : f_.stmtCalls_[s])
        if (f_.isForwardCall(c) && !f_.evalOpener_.count(c)) f_.evalOpener_[c] = Facts::kEvalByName;
  }
  // A shared helper's forward is reported at its callers' calls, even when its name is one of evaluation.
  for (NodeId c : moved) f_.evalOpener_.erase(c);
}

NodeId Facts::evalOpener(NodeId call) const {
  auto it = evalOpener_.find(call);
  return it == evalOpener_.end() ? kNone : it->second;
}

bool Facts::inEvalContext(NodeId stmt) const { return evalStmt_[stmt] || evalFunction_[m_.stmt(stmt).function]; }

}  // namespace oomlint
