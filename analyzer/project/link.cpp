// Linking the project's exports: functions by symbol, class hierarchies across modules, the
// callers of each function joined over every other module, and each program's facts over the
// import graph. Then the answers a file's view gives, each recorded for its fingerprint.
#include <algorithm>

#include "project/hash.h"
#include "project/order.h"
#include "project/project.h"

namespace oomlint::project {

namespace {

std::string keyOf(size_t file, std::string_view name) { return std::to_string(file) + "\n" + std::string(name); }

uint64_t summaryHash(const ImportedFunction& f) { return project::summaryHash(*f.summary, f.params, f.bound); }

uint64_t callersHash(const CallerContext& c) {
  uint64_t h = mix(0, static_cast<uint64_t>(c.grad) | static_cast<uint64_t>(c.onTrainingPath) << 8 |
                          static_cast<uint64_t>(c.evalPositional) << 16);
  for (const std::string& k : c.evalKeywords) h = mix(h, k);
  return h;
}

const ExportedClass* classNamed(const FileExports& e, std::string_view name) {
  for (const ExportedClass& c : e.classes)
    if (c.name == name) return &c;
  return nullptr;
}

}  // namespace

/// A base class as module `file` spells it: a class of that module by bare name, else a dotted name.
static Symbol resolveBase(const Project& p, size_t file, const std::string& base) {
  if (base.find('.') == std::string::npos && classNamed(p.exports(file), base)) return {file, base};
  return p.resolve(file, base);
}

const ImportedFunction* Project::findFunction(const Symbol& s, int depth) const {
  if (!s.found() || s.name.empty() || depth > 8) return nullptr;
  auto it = functions_.find(keyOf(s.file, s.name));
  if (it != functions_.end()) return &it->second;
  size_t dot = s.name.find('.');
  if (dot == std::string::npos) return nullptr;
  // A method the class inherits: the class defines it (with nothing to say) or a base does.
  const ExportedClass* cls = classNamed(exports_[s.file], std::string_view(s.name).substr(0, dot));
  if (!cls) return nullptr;
  std::string method = s.name.substr(dot + 1);
  if (std::find(cls->methods.begin(), cls->methods.end(), method) != cls->methods.end()) return nullptr;
  for (const std::string& b : cls->bases) {
    Symbol base = resolveBase(*this, s.file, b);
    if (!base.found() || base.name.empty()) continue;
    if (const ImportedFunction* f = findFunction({base.file, base.name + "." + method}, depth + 1)) return f;
  }
  return nullptr;
}

const Project::ClassState* Project::findClass(const Symbol& s) const {
  if (!s.found() || s.name.empty()) return nullptr;
  auto it = classes_.find(keyOf(s.file, s.name));
  return it == classes_.end() ? nullptr : &it->second;
}

void Project::addFunctions(size_t j) {
  for (const ExportedFunction& f : exports_[j].functions) {
    ImportedFunction fn;
    fn.summary = &summaries_.emplace_back(f.summary);
    fn.params = f.params;
    fn.bound = f.method;
    std::string key = keyOf(j, f.name);
    summarisedOnce_.insert(key);
    functions_.insert_or_assign(std::move(key), std::move(fn));
  }
}

void Project::addClasses(size_t j) {
  const std::vector<ExportedClass>& classes = exports_[j].classes;
  for (const ExportedClass& c : classes) {
    ClassState st;
    st.info.module = c.module;
    st.info.accumulator = c.accumulator;
    st.info.batches = c.batches;
    st.info.framework = c.framework;
    st.tensor = c.tensor;
    for (const std::string& m : c.methods)
      if (functions_.count(keyOf(j, c.name + "." + m))) st.informative = true;
    classes_.insert_or_assign(keyOf(j, c.name), st);
  }
  // What the bases known so far say (a base later in the same file needs the second pass).
  for (int pass = 0; pass < 2; ++pass)
    for (const ExportedClass& c : classes) {
      ClassState& st = classes_[keyOf(j, c.name)];
      for (const std::string& b : c.bases) {
        const ClassState* base = findClass(resolveBase(*this, j, b));
        if (!base || base == &st) continue;
        st.info.module = st.info.module || base->info.module;
        st.info.batches = st.info.batches || base->info.batches;
        if (!st.info.framework) st.info.framework = base->info.framework;
        st.informative = st.informative || base->informative;
        st.tensor = st.tensor || base->tensor;
      }
    }
}

void Project::publish(size_t i, FileExports e) {
  std::unique_lock guard(lock_);
  exports_[i] = std::move(e);
  hasExports_[i] = 1;
  addFunctions(i);
  addClasses(i);
  for (const ExportedClass& c : exports_[i].classes) {
    ClassState& st = classes_[keyOf(i, c.name)];
    st.informative = !st.tensor && (st.informative || st.info.module || st.info.accumulator || st.info.batches || st.info.framework);
  }
}

/// Adds one more call site to what a function's callers say: each call's answer when it is the
/// first, else what every call agrees on (grad modes that differ are unknown).
static void joinCaller(CallerContext& ctx, const ExportedCall& call, bool first) {
  if (first) {
    ctx.grad = call.grad;
    ctx.evalPositional = call.evalPositional;
    ctx.evalKeywords = call.evalKeywords;
    ctx.onTrainingPath = call.onTrainingPath;
    return;
  }
  if (ctx.grad != call.grad) ctx.grad = static_cast<uint8_t>(GradMode::Unknown);
  ctx.evalPositional &= call.evalPositional;
  std::erase_if(ctx.evalKeywords, [&](const std::string& k) {
    return std::find(call.evalKeywords.begin(), call.evalKeywords.end(), k) == call.evalKeywords.end();
  });
  ctx.onTrainingPath = ctx.onTrainingPath || call.onTrainingPath;
}

std::vector<Project::ResolvedCall> Project::resolveCalls(size_t i, std::vector<size_t>& edges) const {
  std::vector<ResolvedCall> out;
  for (const ExportedCall& call : exports_[i].calls) {
    Symbol s = resolve(i, call.callee);
    if (!s.found()) continue;
    if (s.file != i) edges.push_back(s.file);
    if (s.name.empty() || s.file == i || classNamed(exports_[s.file], s.name)) continue;
    // The module that defines an inherited method is where its callers count.
    for (int depth = 0; depth < 8; ++depth) {
      size_t dot = s.name.find('.');
      if (dot == std::string::npos) break;
      const ExportedClass* cls = classNamed(exports_[s.file], std::string_view(s.name).substr(0, dot));
      std::string method = s.name.substr(dot + 1);
      if (!cls || std::find(cls->methods.begin(), cls->methods.end(), method) != cls->methods.end()) break;
      Symbol next;
      for (const std::string& b : cls->bases) {
        Symbol base = resolveBase(*this, s.file, b);
        if (base.found() && !base.name.empty() && classNamed(exports_[base.file], base.name)) {
          next = {base.file, base.name + "." + method};
          break;
        }
      }
      if (!next.found()) break;
      s = next;
    }
    // A function whose body does nothing grad mode or eval mode changes exports no summary: its
    // callers tell it nothing. (A module not analysed yet has told nothing: callers kept for it;
    // so are they for a function whose summary emptied this run, perhaps because of them.)
    std::string key = keyOf(s.file, s.name);
    if (hasExports_[s.file] && !functions_.count(key) && !summarisedOnce_.count(key)) continue;
    out.push_back({std::move(key), &call});
  }
  for (const auto& [local, dotted] : exports_[i].imports) {
    size_t j = importedModule(i, dotted);
    if (j != SIZE_MAX && j != i) edges.push_back(j);
  }
  return out;
}

void Project::link(unsigned threads) {
  functions_.clear();
  classes_.clear();
  callers_.clear();
  summaries_.clear();
  size_t n = files_.size();
  for (size_t j = 0; j < n; ++j) addFunctions(j);
  for (size_t j = 0; j < n; ++j) addClasses(j);
  // Classes: module-ness and what they say, through bases in any module, to a fixed point (each
  // base resolved once).
  std::vector<std::pair<ClassState*, const ClassState*>> inherits;
  for (size_t j = 0; j < n; ++j)
    for (const ExportedClass& c : exports_[j].classes) {
      ClassState* st = &classes_[keyOf(j, c.name)];
      for (const std::string& b : c.bases)
        if (const ClassState* base = findClass(resolveBase(*this, j, b)); base && base != st) inherits.emplace_back(st, base);
    }
  for (int round = 0; round < 8; ++round) {
    bool changed = false;
    for (auto [derived, base] : inherits) {
        ClassState& st = *derived;
        {
          bool module = st.info.module || base->info.module;
          bool batches = st.info.batches || base->info.batches;
          bool informative = st.informative || base->informative;
          bool tensor = st.tensor || base->tensor;
          uint8_t framework = st.info.framework ? st.info.framework : base->info.framework;
          if (module != st.info.module || batches != st.info.batches || informative != st.informative || tensor != st.tensor || framework != st.info.framework)
            changed = true;
          st.info.framework = framework;
          st.info.module = module;
          st.info.batches = batches;
          st.informative = informative;
          st.tensor = tensor;
        }
    }
    if (!changed) break;
  }
  // A class tells a module that constructs or subclasses it something when it is a module, a
  // meter or recorder, or a framework's class. (One whose methods merely have summaries is asked
  // about through those methods; answering for the class too re-analysed every user of torch.fx
  // and torch.distributions for nothing.)
  for (auto& [key, st] : classes_) st.informative = !st.tensor && (st.informative || st.info.module || st.info.accumulator || st.info.batches || st.info.framework);

  // Callers: every other module's calls, joined per function they run. Resolving the calls is
  // most of a link and reads only the exports, so each file's are resolved on a thread of their
  // own; the join then runs in file order, as one thread would.
  std::vector<std::vector<size_t>> edges(n);
  std::vector<std::vector<ResolvedCall>> calls(n);
  std::vector<size_t> all(n);
  for (size_t i = 0; i < n; ++i) all[i] = i;
  parallelFor(all, threads, [&](size_t i) { calls[i] = resolveCalls(i, edges[i]); });
  for (size_t i = 0; i < n; ++i)
    for (ResolvedCall& rc : calls[i]) {
      auto [it, fresh] = callers_.try_emplace(std::move(rc.key));
      joinCaller(it->second, *rc.call, fresh);
    }

  std::vector<ProgramFacts> own(n);
  std::vector<char> torch(n);
  for (size_t i = 0; i < n; ++i) {
    own[i] = ownProgramFacts(i);
    torch[i] = exports_[i].importsTorch;
  }
  computePrograms(edges, std::move(own), torch);
  // A function every other module calls as a plain function would be called (grad on, nothing in
  // eval mode, off any training path) learns nothing from them.
  std::erase_if(callers_, [](const auto& kv) {
    const CallerContext& c = kv.second;
    return c.grad == static_cast<uint8_t>(GradMode::Enabled) && !c.evalPositional && c.evalKeywords.empty() && !c.onTrainingPath;
  });
}

// ------------------------------------------------------------------ the view of one file

void FileView::noteTooEarly(const Symbol& s) const {
  if (!tooEarly_ && s.found() && s.file != file_ && !s.name.empty()) tooEarly_ = p_.unanalysedMayDefine(s.file, s.name);
}

FileView::Answer FileView::functionAnswer(std::string_view dotted, bool asking) const {
  Symbol s = p_.resolve(file_, dotted);
  if (asking) noteTooEarly(s);
  const ImportedFunction* f = s.found() && s.file != file_ ? p_.findFunction(s) : nullptr;
  if (!f) return {};
  return {f, mix(mix(1, dotted), summaryHash(*f)) | 1};
}

FileView::Answer FileView::classAnswer(std::string_view dotted, bool asking) const {
  Symbol s = p_.resolve(file_, dotted);
  if (asking) noteTooEarly(s);
  const Project::ClassState* st = s.found() && s.file != file_ ? p_.findClass(s) : nullptr;
  if (!st || !st->informative) return {};
  return {&st->info, mix(mix(2, dotted), static_cast<uint64_t>(st->info.module) | static_cast<uint64_t>(st->info.accumulator) << 1 |
                                             static_cast<uint64_t>(st->info.framework) << 2 | static_cast<uint64_t>(st->info.batches) << 12) |
                         1};
}

FileView::Answer FileView::callersAnswer(std::string_view qualified) const {
  auto c = p_.callers_.find(keyOf(file_, qualified));
  if (c == p_.callers_.end()) return {};
  return {&c->second, mix(mix(3, qualified), callersHash(c->second)) | 1};
}

uint8_t FileView::programBits() const {
  const ProgramFacts& pf = p_.programs_[file_];
  return static_cast<uint8_t>((pf.bindsDevice ? 1 : 0) | (pf.usesGradScaler ? 2 : 0) | (pf.mentionsCuda ? 4 : 0) | (pf.usesTorch ? 8 : 0));
}

const ImportedFunction* FileView::function(std::string_view dotted) const {
  auto it = functions_.find(dotted);
  if (it == functions_.end()) {
    std::shared_lock guard(p_.lock_);
    it = functions_.emplace(std::string(dotted), functionAnswer(dotted, true)).first;
  }
  return static_cast<const ImportedFunction*>(it->second.value);
}

const ImportedClass* FileView::cls(std::string_view dotted) const {
  auto it = classes_.find(dotted);
  if (it == classes_.end()) {
    std::shared_lock guard(p_.lock_);
    it = classes_.emplace(std::string(dotted), classAnswer(dotted, true)).first;
  }
  return static_cast<const ImportedClass*>(it->second.value);
}

const CallerContext* FileView::callers(std::string_view qualified) const {
  auto it = callers_.find(qualified);
  if (it == callers_.end()) {
    std::shared_lock guard(p_.lock_);
    it = callers_.emplace(std::string(qualified), callersAnswer(qualified)).first;
  }
  return static_cast<const CallerContext*>(it->second.value);
}

bool FileView::programFact(ProgramFact which) const {
  auto bit = static_cast<uint8_t>(which);
  std::shared_lock guard(p_.lock_);
  bool value = programBits() & bit;
  if (!(askedProgram_ & bit)) {
    askedProgram_ |= bit;
    programAnswer_ = static_cast<uint8_t>(programAnswer_ | (value ? bit : 0));
  }
  return value;
}

uint64_t FileView::combine(bool fresh) const {
  std::vector<uint64_t> parts;
  for (const auto& [dotted, a] : functions_)
    if (uint64_t h = fresh ? functionAnswer(dotted).hash : a.hash) parts.push_back(h);
  for (const auto& [dotted, a] : classes_)
    if (uint64_t h = fresh ? classAnswer(dotted).hash : a.hash) parts.push_back(h);
  for (const auto& [name, a] : callers_)
    if (uint64_t h = fresh ? callersAnswer(name).hash : a.hash) parts.push_back(h);
  // Only the facts read: the answer is their values (a fact read as false says nothing).
  if (uint8_t bits = fresh ? programBits() & askedProgram_ : programAnswer_) parts.push_back(mix(4, bits) | 1);
  if (parts.empty()) return 0;
  std::sort(parts.begin(), parts.end());
  uint64_t h = 0x6f6f6d6c696e74ULL;
  for (uint64_t x : parts) h = mix(h, x);
  return h;
}

uint64_t FileView::fingerprint() const {
  std::shared_lock guard(p_.lock_);
  return combine(true);
}

uint64_t FileView::answered() const { return combine(false); }

Questions FileView::questions() const {
  Questions q;
  for (const auto& [k, a] : functions_) q.functions.push_back(k);
  for (const auto& [k, a] : classes_) q.classes.push_back(k);
  for (const auto& [k, a] : callers_) q.callers.push_back(k);
  std::sort(q.functions.begin(), q.functions.end());
  std::sort(q.classes.begin(), q.classes.end());
  std::sort(q.callers.begin(), q.callers.end());
  q.program = askedProgram_;
  return q;
}

void FileView::restore(const Questions& q) {
  for (const std::string& k : q.functions) functions_.try_emplace(k);
  for (const std::string& k : q.classes) classes_.try_emplace(k);
  for (const std::string& k : q.callers) callers_.try_emplace(k);
  askedProgram_ = q.program;
}

std::string FileView::changedAnswers() const {
  std::shared_lock guard(p_.lock_);
  std::string out;
  for (const auto& [dotted, a] : functions_)
    if (functionAnswer(dotted).hash != a.hash) out += " F:" + dotted;
  for (const auto& [dotted, a] : classes_)
    if (classAnswer(dotted).hash != a.hash) out += " C:" + dotted;
  for (const auto& [name, a] : callers_)
    if (callersAnswer(name).hash != a.hash) out += " K:" + name;
  if ((programBits() & askedProgram_) != programAnswer_) out += " P";
  return out;
}

}  // namespace oomlint::project
