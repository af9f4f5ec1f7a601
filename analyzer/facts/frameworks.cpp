// Pass 1b, framework steps: methods a training framework calls once per batch of a loop it runs
// itself. Lightning runs `training_step` with autograd on and `validation_step`, `test_step` and
// `predict_step` under no_grad; the Hugging Face Trainer (and trl's trainers, which subclass it)
// runs `compute_loss` and `training_step` and then the backward, and `prediction_step` and
// `evaluate` without a graph. What such a step keeps on `self` outlives the step as a store made
// in a loop's iteration outlives the iteration; its entry grad mode is the framework's.
#include "facts/builder.h"
#include "facts/torch_api.h"

namespace oomlint {

namespace {

constexpr uint8_t kNoFramework = 0, kLightning = 1, kHfTrainer = 2;

using torch_api::endsWith;

/// The framework a base class (its dotted canonical name) belongs to.
uint8_t frameworkOfBase(std::string_view canon) {
  std::string_view root = canon.substr(0, canon.find('.'));
  if ((root == "lightning" || root == "pytorch_lightning") && endsWith(canon, "LightningModule")) return kLightning;
  if (root == "transformers" && (endsWith(canon, ".Trainer") || endsWith(canon, ".Seq2SeqTrainer"))) return kHfTrainer;
  if (root == "trl" && endsWith(canon, "Trainer")) return kHfTrainer;
  return kNoFramework;
}

/// loop_role bits of a framework's step method, 0 for other methods.
uint8_t stepRole(uint8_t framework, std::string_view method) {
  if (framework == kLightning) {
    if (method == "training_step") return loop_role::kTraining;
    if (method == "validation_step" || method == "test_step" || method == "predict_step") return loop_role::kEval;
  }
  if (framework == kHfTrainer) {
    if (method == "compute_loss" || method == "training_step") return loop_role::kTraining;
    if (method == "prediction_step") return loop_role::kEval;
  }
  return 0;
}

}  // namespace

void FactsBuilder::findFrameworkSteps() {
  size_t nc = m_.classes.size();
  f_.classFramework_.assign(nc, kNoFramework);
  for (int round = 0; round < 8; ++round) {
    bool changed = false;
    for (size_t c = 0; c < nc; ++c) {
      if (f_.classFramework_[c]) continue;
      for (NodeId b : items(m_, m_.classes[c].bases)) {
        const std::string& canon = m_.canonical(b);
        uint8_t fw = frameworkOfBase(canon);
        if (!fw && f_.project_ && !canon.empty())
          if (const ImportedClass* base = f_.project_->cls(canon)) fw = base->framework;
        if (!fw && canon.empty())  // a base class of this file
          for (size_t o = 0; o < nc && !fw; ++o)
            if (o != c && m_.classes[o].name == m_.textOf(b)) fw = f_.classFramework_[o];
        if (fw) {
          f_.classFramework_[c] = fw;
          changed = true;
          break;
        }
      }
    }
    if (!changed) break;
  }
  f_.frameworkStep_.assign(m_.functions.size(), 0);
  for (uint32_t fn = 1; fn < m_.functions.size(); ++fn) {
    const Function& f = m_.functions[fn];
    if (f.cls < 0 || f.isLambda) continue;
    f_.frameworkStep_[fn] = stepRole(f_.classFramework_[static_cast<size_t>(f.cls)], f.name);
  }
  findKeptStepOutputs();
}

/// Lightning 1.x hands `training_epoch_end(outputs)` every `training_step` return value of the
/// epoch, and collects them only for a module that overrides that hook (2.0 removed it). From 1.6
/// on it detaches the `loss` entry (and `hiddens`) and keeps the other entries as returned.
void FactsBuilder::findKeptStepOutputs() {
  size_t nc = m_.classes.size();
  f_.keepsStepOutputs_.assign(nc, 0);
  std::vector<char> hook(nc, 0);
  for (uint32_t fn = 1; fn < m_.functions.size(); ++fn) {
    const Function& f = m_.functions[fn];
    if (f.cls >= 0 && !f.isLambda && f.name == "training_epoch_end") hook[static_cast<size_t>(f.cls)] = 1;
  }
  // The hook counts in the class, a base of this file (inherited) or a subclass of this file (whose
  // instances run the inherited training_step).
  auto localBase = [&](size_t c, size_t o) {
    for (NodeId b : items(m_, m_.classes[c].bases))
      if (m_.canonical(b).empty() && m_.classes[o].name == m_.textOf(b)) return true;
    return false;
  };
  for (size_t c = 0; c < nc; ++c) {
    if (f_.classFramework_[c] != kLightning) continue;
    bool kept = hook[c];
    for (size_t o = 0; o < nc && !kept; ++o) kept = o != c && hook[o] && (localBase(c, o) || localBase(o, c));
    f_.keepsStepOutputs_[c] = kept;
  }
}

std::vector<NodeId> Facts::keptStepOutputs(NodeId ret) const {
  std::vector<NodeId> out;
  const Stmt& st = m_.stmt(ret);
  if (st.kind != StmtKind::Return || st.value == kNone) return out;
  const Function& f = m_.functions[st.function];
  if (f.cls < 0 || f.name != "training_step" || !keepsStepOutputs_[static_cast<size_t>(f.cls)]) return out;
  // The returned dict: a literal, or a name the step binds once to one.
  NodeId dict = m_.expr(st.value).kind == ExprKind::Name ? onlyBindingValue(st.function, m_.expr(st.value).text) : st.value;
  if (dict == kNone || m_.expr(dict).kind != ExprKind::Container || m_.expr(dict).shape != shape::kDict) return out;
  for (const Arg& a : argsOf(m_, m_.expr(dict))) {
    std::string_view key;
    NodeId value;
    // A computed key may be `"loss"`: only entries written with their key count.
    if (!stringKeyedEntry(m_, a.value, key, value) || key == "loss" || key == "hiddens") continue;
    out.push_back(value);
  }
  return out;
}

uint8_t Facts::frameworkStep(uint32_t fn) const { return fn < frameworkStep_.size() ? frameworkStep_[fn] : 0; }

uint8_t Facts::classFramework(int32_t cls) const {
  return cls >= 0 && static_cast<size_t>(cls) < classFramework_.size() ? classFramework_[static_cast<size_t>(cls)] : 0;
}

std::string_view Facts::frameworkName(uint32_t fn) const {
  int32_t cls = fn < m_.functions.size() ? m_.functions[fn].cls : -1;
  switch (classFramework(cls)) {
    case kLightning: return "Lightning";
    case kHfTrainer: return "the Hugging Face Trainer";
    default: return {};
  }
}

NodeId Facts::iterationOf(NodeId stmt) const {
  NodeId loop = loopOf_[stmt];
  if (loop != kNone) return loop;
  uint32_t fn = m_.stmt(stmt).function;
  if (closureRun_[fn] != kNone) return loopOf_[m_.functions[fn].defStmt];
  bool repeated = frameworkStep(fn) || (fn < calledStepRole_.size() && calledStepRole_[fn]);
  return repeated ? m_.functions[fn].defStmt : kNone;
}

NodeId Facts::stepIterationOf(NodeId stmt) const {
  NodeId it = iterationOf(stmt);
  while (it != kNone && iterationRole(it) == 0 && m_.stmt(it).kind != StmtKind::FunctionDef) it = iterationOf(it);
  return iterationRole(it) ? it : kNone;
}

uint8_t Facts::iterationRole(NodeId it) const {
  if (it == kNone) return 0;
  if (m_.stmt(it).kind == StmtKind::FunctionDef) {
    uint32_t fn = m_.stmt(it).def;
    return frameworkStep(fn) | (fn < calledStepRole_.size() ? calledStepRole_[fn] : 0);
  }
  return loopRole(it);
}

}  // namespace oomlint
