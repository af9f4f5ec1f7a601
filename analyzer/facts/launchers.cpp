// Part of the devices pass (before values): what a launcher puts on the device. Hugging Face
// Accelerate's `accelerator.prepare(model, optimizer, loader)` and Lightning Fabric's
// `fabric.setup(model, optimizer)` / `fabric.setup_dataloaders(loader)` move each module to the
// process's device and hand back loaders whose batches are moved there as they are yielded: the
// GPU, as `.to(accelerator.device)` is (Facts::isGpuDeviceExpr).
#include "facts/builder.h"
#include "facts/torch_api.h"

namespace oomlint {

bool Facts::isLauncher(NodeId e) const {
  if (e == kNone) return false;
  const std::string& ctor = m_.canonical(constructorOf(e));
  return ctor == "accelerate.Accelerator" || torch_api::endsWith(ctor, ".Fabric");
}

bool Facts::launcherPlaces(NodeId e) const {
  if (!isLauncher(e)) return false;
  // `Accelerator(cpu=True)`, `Accelerator(device_placement=False)`: nothing moves to a GPU.
  NodeId ctor = constructorOf(e);
  NodeId cpu = keywordArg(m_, ctor, "cpu"), placement = keywordArg(m_, ctor, "device_placement");
  return (cpu == kNone || isFalseLiteral(m_, cpu)) && (placement == kNone || isTrueLiteral(m_, placement));
}

namespace {

/// `e` names a path placed by a statement of one of `placedIn`: a name in the same function, an
/// attribute of `self` in a method of the same class.
bool placedWhereRead(const Facts& f, const Module& m, NodeId e,
                     const std::unordered_map<std::string_view, std::vector<uint32_t>>& placed) {
  std::string_view key = f.pathKey(e);
  auto it = placed.find(key);
  if (key.empty() || it == placed.end() || m.expr(e).stmt == kNone) return false;
  uint32_t fn = m.stmt(m.expr(e).stmt).function;
  bool onSelf = key.starts_with("self.");
  for (uint32_t placedIn : it->second)
    if (placedIn == fn || (onSelf && f.classOfFunction(placedIn) >= 0 && f.classOfFunction(placedIn) == f.classOfFunction(fn)))
      return true;
  return false;
}

}  // namespace

bool Facts::loaderOnGpu(NodeId iter) const { return placedWhereRead(*this, m_, iter, loadersOnGpu_); }

bool Facts::placedModule(NodeId module) const { return placedWhereRead(*this, m_, module, modulesPlaced_); }

bool Facts::gathersAcrossProcesses(NodeId call) const {
  if (call == kNone || m_.expr(call).kind != ExprKind::Call) return false;
  std::string_view meth = methodName(m_, call);
  return (meth == "gather" || meth == "gather_for_metrics" || meth == "pad_across_processes" || meth == "all_gather") &&
         isLauncher(receiverOf(m_, call));
}

void FactsBuilder::collectLauncherPlacements() {
  for (const Stmt& st : m_.stmts) {
    if (st.kind != StmtKind::Assign || st.value == kNone || st.targets.count != 1 || m_.expr(st.value).kind != ExprKind::Call) continue;
    std::string_view meth = methodName(m_, st.value);
    bool places = meth == "prepare" || meth == "prepare_model" || meth == "prepare_data_loader" || meth == "setup" ||
                  meth == "setup_module" || meth == "setup_dataloaders";
    if (!places || !f_.launcherPlaces(receiverOf(m_, st.value))) continue;
    // `model, opt, dl = accelerator.prepare(model, opt, dl)` or `model = accelerator.prepare(model)`:
    // each target is what it was given, placed.
    std::vector<NodeId> targets;
    const Expr& t = m_.expr(st.target);
    if (t.kind == ExprKind::Container)
      for (const Arg& a : argsOf(m_, t)) targets.push_back(a.value);
    else
      targets.push_back(st.target);
    for (NodeId target : targets) {
      std::string_view key = f_.pathKey(target);
      if (key.empty()) continue;
      Kind k = f_.kindOf(target);
      if (k == Kind::Module) f_.modulesPlaced_[key].push_back(st.function);
      else if (k == Kind::Loader || meth == "setup_dataloaders" || meth == "prepare_data_loader") f_.loadersOnGpu_[key].push_back(st.function);
    }
  }
}

}  // namespace oomlint
