// OOM601 python-objects-in-worker-dataset
#include "rules/data_common.h"
#include "rules/registry.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM601", "python-objects-in-worker-dataset", Severity::Warning, true, false, FixKind::DisplayOnly, false, true,
    "A Dataset keeps Python lists/dicts of samples and is read by DataLoader workers",
    R"doc(## What it does
Flags a `DataLoader(..., num_workers=N)` (N > 0) over a `Dataset` class of this file whose
`__init__` keeps samples as Python lists or dicts (read from JSON, `readlines()`, `os.listdir`,
`glob`, a comprehension, or appended in a loop).

## Why is this bad?
Workers are forked from the main process and share its memory copy-on-write. But merely reading a
Python object writes to it (its reference count), so every page of the list that a worker touches
is copied into that worker. Host memory grows towards `workers × dataset size` over the epoch, which
looks exactly like a leak and ends with the OOM killer.

## Example
```python
class Captions(Dataset):
    def __init__(self, path):
        self.samples = json.load(open(path))   # a list of dicts
loader = DataLoader(Captions("train.json"), batch_size=64, num_workers=8)
```

## Use instead
Keep samples in numpy arrays, pyarrow tables or tensors (one object, no per-sample refcounts), or
encode strings into a numpy byte array plus offsets.

## Fix safety
Display only.

## Measured cost
The growth is per worker and per dataset, not per epoch. The DataLoader seed probe
(runtime_check/results/h200-seed-dataloader.json; 4 workers over a 2048-record Python list) reads
the workers' private pages during every epoch: they stay at 105–140 MiB in total with no trend over
24 epochs (at most 7.6 MiB between first and last), with persistent workers or without: a worker
copies the pages it touches once, so what it costs is bounded by the size of the lists it reads.

## References
- DataLoader, "CUDA in multi-process data loading" / memory: https://pytorch.org/docs/stable/data.html#multi-process-data-loading
- pytorch/pytorch issue 13246 ("DataLoader num_workers > 0 causes CPU memory from parent process to be replicated")
)doc",
};

bool isDatasetClass(const Module& m, int32_t cls) {
  for (NodeId b : items(m, m.classes[static_cast<size_t>(cls)].bases)) {
    const std::string& c = m.canonical(b);
    std::string_view t = m.expr(b).text;  // the base's name (`Dataset`, `data.Dataset`)
    if (c == "torch.utils.data.Dataset" || c == "torch.utils.data.dataset.Dataset" ||
        (t.size() >= 7 && t.substr(t.size() - 7) == "Dataset"))
      return true;
  }
  return false;
}

bool readsManyObjects(const Module& m, NodeId value) {
  const Expr& v = m.expr(value);
  if (v.kind == ExprKind::Container && shape::isComprehension(v.shape)) return true;
  if (v.kind != ExprKind::Call) return false;
  const std::string& c = m.canonical(value);
  std::string_view callee = calleeName(m, value);
  if (c == "json.load" || c == "json.loads" || c == "os.listdir" || c == "glob.glob" || c == "pickle.load") return true;
  if (callee == "readlines" || callee == "read_json_lines") return true;
  if ((callee == "list" || callee == "sorted" || callee == "dict") && v.argCount > 0) return true;
  return false;
}

class Oom601 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void onCall(Context& ctx, NodeId call) const override {
    const Module& m = ctx.module();
    const Facts& f = ctx.facts();
    if (!isDataLoaderCall(m, call)) return;
    NodeId workers = keywordArg(m, call, "num_workers");
    if (workers == kNone || m.expr(workers).kind != ExprKind::Number) return;
    if (std::strtol(std::string(m.textOf(workers)).c_str(), nullptr, 0) <= 0) return;
    NodeId ds = positionalArg(m, call, 0);
    if (ds == kNone) ds = keywordArg(m, call, "dataset");
    int32_t cls = datasetClass(f, ds, call);
    if (cls < 0 || !isDatasetClass(m, cls)) return;
    std::string attr = pythonObjectAttribute(f, cls);
    if (attr.empty()) return;
    Finding& fd = ctx.report(kInfo, m.expr(call).span,
                             ticked(m.classes[static_cast<size_t>(cls)].name) + " keeps samples in Python objects (`" + attr +
                                 "`) read by " + std::string(m.textOf(workers)) +
                                 " worker processes: refcount writes turn copy-on-write into a copy per worker");
    fd.hasFix = true;
    fd.fix = Fix{Applicability::DisplayOnly, "Store samples in numpy/pyarrow arrays or tensors", {}};
  }

 private:
  /// The dataset argument's class: `Cls(...)` directly, or a name assigned from it.
  static int32_t datasetClass(const Facts& f, NodeId ds, NodeId call) {
    const Module& m = f.module();
    if (ds == kNone) return -1;
    if (m.expr(ds).kind == ExprKind::Call) return localClassCalled(m, ds);
    if (m.expr(ds).kind != ExprKind::Name) return -1;
    int32_t found = -1;
    uint32_t fn = m.stmt(m.expr(call).stmt).function;
    for (NodeId s : f.assignmentsOf(fn, m.expr(ds).text)) {
      const Stmt& st = m.stmt(s);
      if (st.span.begin >= m.expr(call).span.begin) break;
      if (st.target == kNone) continue;
      if (m.expr(st.target).kind == ExprKind::Name && m.expr(st.target).text == m.expr(ds).text)
        found = localClassCalled(m, st.value);
    }
    return found;
  }

  /// `self.x` in `__init__` holding many Python objects, or "".
  static std::string pythonObjectAttribute(const Facts& f, int32_t cls) {
    const Module& m = f.module();
    for (uint32_t fn = 1; fn < m.functions.size(); ++fn) {
      if (m.functions[fn].cls != cls || m.functions[fn].name != "__init__") continue;
      for (NodeId s : f.statementsOf(fn)) {
        const Stmt& st = m.stmt(s);
        if (st.kind == StmtKind::Assign && st.target != kNone && m.expr(st.target).kind == ExprKind::Attribute &&
            readsManyObjects(m, st.value))
          return std::string(f.pathKey(st.target));
        // `self.samples.append(...)` in a loop.
        if (st.kind == StmtKind::Expr && methodName(m, st.value) == "append" && f.enclosingLoop(s) != kNone) {
          std::string_view key = f.pathKey(receiverOf(m, st.value));
          if (key.substr(0, 5) == "self.") return std::string(key);
        }
      }
    }
    return {};
  }
};

}  // namespace

const Rule& oom601() {
  static const Oom601 rule;
  return rule;
}

}  // namespace oomlint::rules
