#include "cpp/lower.h"

#include <clang/AST/DeclCXX.h>
#include <clang/AST/DeclTemplate.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/StmtCXX.h>
#include <clang/AST/TypeLoc.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Lex/Lexer.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <algorithm>
#include <cctype>
#include <array>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace oomlint::cpp {

using namespace clang;

namespace {

bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

constexpr int kMaxDepth = 200;

}  // namespace

std::string canonicalName(const std::string& qualified) {
  std::string_view q(qualified);
  std::string rest;
  if (startsWith(q, "at::")) rest = q.substr(4);
  else if (startsWith(q, "c10::")) rest = q.substr(5);
  else if (startsWith(q, "torch::")) rest = q.substr(7);
  else return {};
  std::string dotted = "torch";
  for (size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == ':' && i + 1 < rest.size() && rest[i + 1] == ':') {
      dotted += '.';
      ++i;
    } else {
      if (i == 0) dotted += '.';
      dotted += rest[i];
    }
  }
  static const std::unordered_map<std::string_view, std::string_view> kTwins = {
      {"torch.NoGradGuard", "torch.no_grad"},
      {"torch.InferenceMode", "torch.inference_mode"},
      {"torch.AutoGradMode", "torch.set_grad_enabled"},
      {"torch.cuda.CUDACachingAllocator.emptyCache", "torch.cuda.empty_cache"},
      {"torch.cuda.emptyCache", "torch.cuda.empty_cache"},
      {"torch.Device", "torch.device"},
      {"torch.data.make_data_loader", "torch.utils.data.DataLoader"},
      {"torch.data.datasets.Dataset", "torch.utils.data.Dataset"},
      {"torch.nll_loss", "torch.nn.functional.nll_loss"},
      {"torch.cross_entropy_loss", "torch.nn.functional.cross_entropy"},
      {"torch.mse_loss", "torch.nn.functional.mse_loss"},
      {"torch.l1_loss", "torch.nn.functional.l1_loss"},
      {"torch.binary_cross_entropy", "torch.nn.functional.binary_cross_entropy"},
      {"torch.binary_cross_entropy_with_logits", "torch.nn.functional.binary_cross_entropy_with_logits"},
      {"torch.autocast.set_enabled", "torch.autocast.set_enabled"},
  };
  auto it = kTwins.find(dotted);
  return it == kTwins.end() ? dotted : std::string(it->second);
}

namespace {

class Lowerer {
 public:
  Lowerer(ASTContext& ctx, Module& m, std::string projectRoot)
      : ctx_(ctx), sm_(ctx.getSourceManager()), m_(m), projectRoot_(std::move(projectRoot)), text_(m.source) {}

  void lowerTranslationUnit(const std::vector<const Decl*>& topLevel) {
    Function top;
    top.name = "<module>";
    top.span.begin = 0;
    top.span.end = static_cast<uint32_t>(m_.source.size());
    top.span.line = 1;
    m_.functions.push_back(top);
    size_t start = listBuf_.size();
    for (const Decl* d : topLevel) lowerDecl(d, kNone);
    m_.functions[0].body = pushList(start);
    lowerProjectHeaders();
    resolveOutOfLineMethods();
  }

 private:
  ASTContext& ctx_;
  SourceManager& sm_;
  Module& m_;
  std::string projectRoot_;  // headers below it are the project's own; "" = none are
  // The file being lowered: the main file, or (external_) a project header whose code the main
  // file calls. Offsets are into text_; spans add base_ (Module::kExternalBase + where text_
  // starts in Module::externalText) and have line 0 for a header.
  bool external_ = false;
  FileID file_;
  std::string_view text_;
  uint32_t base_ = 0;
  std::vector<NodeId> listBuf_;
  uint32_t fn_ = 0;
  int32_t cls_ = -1;
  NodeId stmt_ = kNone;  // statement whose expressions are being lowered
  int depth_ = 0;
  std::unordered_map<const CXXRecordDecl*, int32_t> classOf_;
  std::unordered_map<std::string, uint32_t> interned_;

  // ---------------------------------------------------------------- the project's headers
  // What the main file's code calls or constructs from the project's own headers is lowered
  // after it (Module::firstExternalFunction): helpers, meters, trainers and module classes then
  // have summaries as if they were defined in the file. Library code (LibTorch, the standard
  // library, system headers) is never lowered: its meaning comes from canonical names.
  static constexpr size_t kMaxHeaderDecls = 256;
  struct HeaderDecl {
    const FunctionDecl* function = nullptr;  // a free function, or a method defined after its class
    const CXXRecordDecl* record = nullptr;   // a class, with the methods defined in it
  };
  std::vector<HeaderDecl> headerQueue_;
  std::unordered_set<const Decl*> headerQueued_;
  std::unordered_map<unsigned, bool> projectFile_;        // FileID -> a header below the project root
  std::unordered_map<unsigned, uint32_t> headerBase_;     // FileID -> span offset of its first byte
  std::unordered_map<unsigned, std::string_view> headerText_;

  struct DepthGuard {
    int& d;
    explicit DepthGuard(int& depth) : d(depth) { ++d; }
    ~DepthGuard() { --d; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
  };

  // ---------------------------------------------------------------- positions

  /// Written in the file being lowered (the main file, or the header of external code).
  bool inMainFile(SourceLocation loc) const {
    if (!loc.isValid()) return false;
    SourceLocation f = sm_.getFileLoc(loc);
    return external_ ? sm_.getFileID(f) == file_ : sm_.isWrittenInMainFile(f);
  }

  uint32_t offsetOf(SourceLocation loc) const {
    SourceLocation f = sm_.getFileLoc(loc);
    if (external_ ? sm_.getFileID(f) != file_ : !sm_.isWrittenInMainFile(f)) return UINT32_MAX;
    return sm_.getFileOffset(f);
  }

  uint32_t endOffsetOf(SourceLocation loc) const {
    uint32_t b = offsetOf(loc);
    if (b == UINT32_MAX) return b;
    return b + Lexer::MeasureTokenLength(sm_.getFileLoc(loc), sm_, ctx_.getLangOpts());
  }

  /// Offsets into text_ (as offsetOf gives them) to a span of the model.
  Span spanFromOffsets(uint32_t b, uint32_t e) const {
    Span s;
    uint32_t size = static_cast<uint32_t>(text_.size());
    if (b == UINT32_MAX || b > size) b = 0;
    if (e == UINT32_MAX || e > size || e < b) e = b;
    if (external_) {
      s.begin = base_ + b;
      s.end = base_ + e;
      return s;
    }
    s.begin = b;
    s.end = e;
    s.line = m_.lineOf(b);
    s.col = b - m_.lineStarts[s.line - 1];
    s.endLine = m_.lineOf(e > b ? e - 1 : e);
    s.endCol = e - m_.lineStarts[s.endLine - 1];
    return s;
  }

  Span spanOf(SourceRange r) const { return spanFromOffsets(offsetOf(r.getBegin()), endOffsetOf(r.getEnd())); }

  /// Statements that end in `;` in the source: the span takes the `;` in, so removing the
  /// statement removes all of it.
  Span statementSpan(SourceRange r) const {
    Span s = spanOf(r);
    uint32_t b = s.begin - (external_ ? base_ : 0), i = s.end - (external_ ? base_ : 0);
    while (i < text_.size() && (text_[i] == ' ' || text_[i] == '\t')) ++i;
    if (i < text_.size() && text_[i] == ';' && s.end > s.begin) return spanFromOffsets(b, i + 1);
    return s;
  }

  /// The text a span covers, as a view into the file's text (the model's own or a header's).
  std::string_view spanText(const Span& sp) const {
    uint32_t b = sp.begin - (external_ ? base_ : 0), e = sp.end - (external_ ? base_ : 0);
    if (e <= b || e > text_.size()) return {};
    return text_.substr(b, e - b);
  }

  NodeId literal(ExprKind kind, const clang::Expr* e) {
    NodeId id = newExpr(kind, spanOf(e->getSourceRange()));
    m_.exprs[id].text = spanText(m_.exprs[id].span);
    return id;
  }

  /// The identifier spelled at `loc`, as a view into the source when it is there.
  std::string_view identifierAt(SourceLocation loc, const std::string& name) {
    uint32_t b = offsetOf(loc);
    if (b != UINT32_MAX && b + name.size() <= text_.size() && text_.compare(b, name.size(), name) == 0)
      return text_.substr(b, name.size());
    return m_.own(name);
  }

  /// The identifier written at `loc` in the main file ("" elsewhere).
  std::string spelledIdentifier(SourceLocation loc) const {
    uint32_t b = offsetOf(loc), e = b;
    if (b == UINT32_MAX) return {};
    while (e < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[e])) || text_[e] == '_')) ++e;
    return std::string(text_.substr(b, e - b));
  }

  uint32_t intern(const std::string& name) {
    if (name.empty()) return 0;
    auto [it, inserted] = interned_.try_emplace(name, static_cast<uint32_t>(m_.names.size()));
    if (inserted) m_.names.push_back(name);
    return it->second;
  }

  /// A file of the project's own (below the project root, not a system header), not the main file.
  bool inProjectHeader(SourceLocation loc) {
    if (projectRoot_.empty() || loc.isInvalid()) return false;
    SourceLocation f = sm_.getFileLoc(loc);
    if (sm_.isWrittenInMainFile(f) || sm_.isInSystemHeader(f)) return false;
    FileID fid = sm_.getFileID(f);
    auto [it, fresh] = projectFile_.try_emplace(fid.getHashValue(), false);
    if (!fresh) return it->second;
    const FileEntry* entry = sm_.getFileEntryForID(fid);
    if (!entry) return false;
    llvm::SmallString<256> path(entry->getName());
    if (llvm::sys::fs::make_absolute(path)) return false;
    llvm::sys::path::remove_dots(path, true);
    llvm::StringRef p = path.str();
    it->second = p.size() > projectRoot_.size() && p.startswith(projectRoot_) && p[projectRoot_.size()] == '/';
    return it->second;
  }

  static bool isLibraryDecl(const NamedDecl* d) {
    std::string q = d->getQualifiedNameAsString();
    return !canonicalName(q).empty() || startsWith(q, "std::") || startsWith(q, "__");
  }

  void queueHeaderDecl(HeaderDecl h) {
    const Decl* d = h.function ? static_cast<const Decl*>(h.function) : h.record;
    if (headerQueue_.size() >= kMaxHeaderDecls || !headerQueued_.insert(d).second) return;
    headerQueue_.push_back(h);
  }

  /// A function the code calls: lowered when the project's headers define it.
  void noteCallee(const FunctionDecl* fd) {
    if (!fd || projectRoot_.empty()) return;
    if (const FunctionDecl* pattern = fd->getTemplateInstantiationPattern()) fd = pattern;
    const FunctionDecl* def = nullptr;
    if (!fd->hasBody(def) || !def || !inProjectHeader(def->getLocation()) || isLibraryDecl(def)) return;
    if (const auto* method = dyn_cast<CXXMethodDecl>(def)) {
      noteRecord(method->getParent());
      if (method->isOutOfLine()) queueHeaderDecl({def, nullptr});
      return;
    }
    queueHeaderDecl({def, nullptr});
  }

  /// A class the code constructs, derives from or calls a method of.
  void noteRecord(const CXXRecordDecl* r) {
    if (!r || projectRoot_.empty()) return;
    if (const auto* spec = dyn_cast<ClassTemplateSpecializationDecl>(r))
      if (const ClassTemplateDecl* t = spec->getSpecializedTemplate()) r = t->getTemplatedDecl();
    r = r->getDefinition();
    if (!r || r->isLambda() || classOf_.count(r->getCanonicalDecl()) || !inProjectHeader(r->getLocation()) || isLibraryDecl(r)) return;
    queueHeaderDecl({nullptr, r});
  }

  /// Makes the header holding `loc` the file being lowered. False when its text cannot be had.
  bool enterHeader(SourceLocation loc) {
    FileID fid = sm_.getFileID(sm_.getFileLoc(loc));
    auto known = headerBase_.find(fid.getHashValue());
    if (known == headerBase_.end()) {
      bool invalid = false;
      llvm::StringRef data = sm_.getBufferData(fid, &invalid);
      if (invalid) return false;
      uint32_t base = Module::kExternalBase;
      if (!m_.externalTexts.empty()) base = m_.externalTexts.back().base + static_cast<uint32_t>(m_.externalTexts.back().text.size()) + 1;
      if (static_cast<uint64_t>(base) + data.size() >= UINT32_MAX) return false;
      std::string_view text = m_.own(data.str());
      m_.externalTexts.push_back({base, text});
      if (const FileEntry* entry = sm_.getFileEntryForID(fid)) {
        llvm::SmallString<256> path(entry->getName());
        llvm::sys::fs::make_absolute(path);
        llvm::sys::path::remove_dots(path, true);
        m_.headerDependencies.push_back(path.str().str());
      }
      known = headerBase_.emplace(fid.getHashValue(), base).first;
      headerText_[fid.getHashValue()] = text;
    }
    external_ = true;
    file_ = fid;
    base_ = known->second;
    text_ = headerText_[fid.getHashValue()];
    return true;
  }

  /// Lowers what the main file's code uses from the project's headers, and what that uses.
  void lowerProjectHeaders() {
    if (headerQueue_.empty()) return;
    m_.firstExternalFunction = static_cast<uint32_t>(m_.functions.size());
    m_.firstExternalStmt = static_cast<NodeId>(m_.stmts.size());
    // One free function per name: the file's own wins, then the first called (the model resolves
    // calls by name, so an overload or a namesake in another namespace would be confused with it).
    std::unordered_set<std::string_view> freeNames;
    for (const Function& f : m_.functions)
      if (f.cls < 0 && f.parent == 0) freeNames.insert(f.name);
    for (size_t i = 0; i < headerQueue_.size(); ++i) {  // grows as header code calls more of it
      HeaderDecl h = headerQueue_[i];
      if (h.function && !isa<CXXMethodDecl>(h.function) && !freeNames.insert(m_.own(h.function->getNameAsString())).second) continue;
      if (!enterHeader(h.function ? h.function->getLocation() : h.record->getLocation())) continue;
      fn_ = 0;
      cls_ = -1;
      stmt_ = kNone;
      size_t start = listBuf_.size();
      if (h.function) lowerFunction(h.function, kNone);
      else lowerRecord(h.record, kNone);
      pushList(start);  // a header's definitions are no statements of this file's top level
    }
    external_ = false;
    text_ = m_.source;
    base_ = 0;
  }

  // ---------------------------------------------------------------- model building

  List pushList(size_t from) {
    List l{static_cast<uint32_t>(m_.lists.size()), static_cast<uint32_t>(listBuf_.size() - from)};
    m_.lists.insert(m_.lists.end(), listBuf_.begin() + static_cast<long>(from), listBuf_.end());
    listBuf_.resize(from);
    return l;
  }

  NodeId newExpr(ExprKind k, Span span) {
    Expr e;
    e.kind = k;
    e.span = span;
    e.owner = fn_;
    e.stmt = stmt_;
    m_.exprs.push_back(e);
    return static_cast<NodeId>(m_.exprs.size() - 1);
  }

  NodeId newStmt(StmtKind k, Span span, NodeId parent) {
    Stmt s;
    s.kind = k;
    s.span = span;
    s.parent = parent;
    s.function = fn_;
    s.firstExpr = static_cast<uint32_t>(m_.exprs.size());
    s.endExpr = s.firstExpr;
    m_.stmts.push_back(s);
    return static_cast<NodeId>(m_.stmts.size() - 1);
  }

  void finishStmt(NodeId id) {
    m_.stmts[id].endExpr = static_cast<uint32_t>(m_.exprs.size());
    listBuf_.push_back(id);
  }

  /// Runs `fn` with `stmt` as the statement new expressions belong to.
  template <class F> auto inStmt(NodeId stmt, F&& fn) {
    NodeId saved = stmt_;
    stmt_ = stmt;
    auto r = fn();
    stmt_ = saved;
    return r;
  }

  // ---------------------------------------------------------------- types

  static const CXXRecordDecl* recordOf(QualType t) {
    if (t.isNull()) return nullptr;
    t = t.getNonReferenceType();
    if (const auto* p = t->getAs<PointerType>()) t = p->getPointeeType();
    return t->getAsCXXRecordDecl();
  }

  /// A type that is (or holds, or points to) a torch::nn::Module.
  static bool isModuleRecord(const CXXRecordDecl* r, int depth = 0) {
    if (!r || depth > 16) return false;
    std::string q = r->getQualifiedNameAsString();
    if (q == "torch::nn::Module" || q == "torch::nn::ModuleHolder" || q == "torch::nn::AnyModule") return true;
    if (const auto* spec = dyn_cast<ClassTemplateSpecializationDecl>(r)) {
      if (q == "std::shared_ptr" || q == "std::unique_ptr") {
        const TemplateArgumentList& args = spec->getTemplateArgs();
        if (args.size() > 0 && args[0].getKind() == TemplateArgument::Type)
          return isModuleRecord(recordOf(args[0].getAsType()), depth + 1);
      }
    }
    if (!r->hasDefinition()) return false;
    for (const CXXBaseSpecifier& b : r->getDefinition()->bases())
      if (isModuleRecord(recordOf(b.getType()), depth + 1)) return true;
    return false;
  }

  /// Canonical name of a constructed type: LibTorch names as themselves, a user's module class as
  /// `torch.nn.Module` (so facts treat `Net net;` as a module as they treat `net = Net()`).
  std::string canonicalForType(QualType t) {
    const CXXRecordDecl* r = recordOf(t);
    if (!r) return {};
    std::string c = canonicalName(r->getQualifiedNameAsString());
    if (!c.empty()) return c;
    if (isModuleRecord(r)) return "torch.nn.Module";
    std::string q = r->getQualifiedNameAsString();
    if (q == "std::vector" || q == "std::deque" || q == "std::list") return "std.vector";
    return {};
  }

  static const char* guardMeaning(const VarDecl* v) {
    const CXXRecordDecl* r = recordOf(v->getType());
    if (!r || v->getType()->isReferenceType() || v->getType()->isPointerType()) return nullptr;
    std::string c = canonicalName(r->getQualifiedNameAsString());
    if (c == "torch.no_grad") return "torch.no_grad";
    if (c == "torch.inference_mode") return "torch.inference_mode";
    if (c == "torch.set_grad_enabled") return "torch.set_grad_enabled";
    return nullptr;
  }

  // ---------------------------------------------------------------- declarations

  void lowerDeclContext(const DeclContext* dc, NodeId parent) {
    for (const Decl* d : dc->decls()) lowerDecl(d, parent);
  }

  void lowerDecl(const Decl* d, NodeId parent) {
    if (d->isImplicit()) return;
    // A namespace or extern block opened in a header holds nothing spelled in this file (each
    // reopening in this file is its own declaration with its own location).
    if (isa<NamespaceDecl, LinkageSpecDecl>(d) && !inMainFile(d->getLocation())) return;
    if (const auto* ns = dyn_cast<NamespaceDecl>(d)) {
      lowerDeclContext(ns, parent);
      return;
    }
    if (const auto* ls = dyn_cast<LinkageSpecDecl>(d)) {
      lowerDeclContext(ls, parent);
      return;
    }
    if (!inMainFile(d->getLocation())) return;
    if (const auto* ft = dyn_cast<FunctionTemplateDecl>(d)) {
      lowerFunction(ft->getTemplatedDecl(), parent);
      return;
    }
    if (const auto* ct = dyn_cast<ClassTemplateDecl>(d)) {
      lowerRecord(ct->getTemplatedDecl(), parent);
      return;
    }
    if (const auto* f = dyn_cast<FunctionDecl>(d)) {
      lowerFunction(f, parent);
      return;
    }
    if (const auto* r = dyn_cast<CXXRecordDecl>(d)) {
      if (!isa<ClassTemplateSpecializationDecl>(r)) lowerRecord(r, parent);
      return;
    }
    if (const auto* v = dyn_cast<VarDecl>(d)) {
      lowerVarDecl(v, parent, SourceRange(v->getBeginLoc(), v->getEndLoc()));
      return;
    }
  }

  void lowerFunction(const FunctionDecl* f, NodeId parent) {
    if (!f->doesThisDeclarationHaveABody() || !f->getBody()) return;
    const clang::Stmt* body = f->getBody();
    NodeId id = newStmt(StmtKind::FunctionDef, spanOf(f->getSourceRange()), parent);
    Function fn;
    std::string name = f->getNameAsString();
    if (isa<CXXConstructorDecl>(f)) name = "__init__";
    fn.name = name.empty() ? std::string_view("<anonymous>") : identifierAt(f->getLocation(), name);
    if (name == "__init__") fn.name = "__init__";
    fn.span = spanOf(f->getSourceRange());
    fn.nameSpan = spanFromOffsets(offsetOf(f->getLocation()), endOffsetOf(f->getLocation()));
    fn.parent = fn_;
    const auto* method = dyn_cast<CXXMethodDecl>(f);
    fn.cls = -1;
    if (method) {
      auto it = classOf_.find(method->getParent()->getCanonicalDecl());
      if (it != classOf_.end()) fn.cls = it->second;
      else if (method->isOutOfLine()) pendingMethods_.push_back({static_cast<uint32_t>(m_.functions.size()), method->getParent()});
    }
    fn.defStmt = id;
    m_.functions.push_back(fn);
    uint32_t index = static_cast<uint32_t>(m_.functions.size() - 1);
    m_.stmts[id].def = index;
    // Parameters: methods get Python's `self` first, so rules see the same shape in both languages.
    m_.functions[index].firstParam = static_cast<uint32_t>(m_.params.size());
    if (method && !method->isStatic()) m_.params.push_back(Param{"self", kNone});
    for (const ParmVarDecl* p : f->parameters()) {
      Param param;
      std::string pname = p->getNameAsString();
      param.name = pname.empty() ? std::string_view("_") : identifierAt(p->getLocation(), pname);
      m_.params.push_back(param);
    }
    m_.functions[index].paramCount = static_cast<uint32_t>(m_.params.size() - m_.functions[index].firstParam);
    uint32_t savedFn = fn_;
    int32_t savedCls = cls_;
    fn_ = index;
    cls_ = -1;
    size_t start = listBuf_.size();
    if (const auto* ctor = dyn_cast<CXXConstructorDecl>(f)) lowerMemberInitializers(ctor);
    lowerBlockInto(body, kNone);
    m_.functions[index].body = pushList(start);
    fn_ = savedFn;
    cls_ = savedCls;
    finishStmt(id);
  }

  /// `: fc1(register_module("fc1", torch::nn::Linear(4, 4)))` reads as `self.fc1 = ...`.
  void lowerMemberInitializers(const CXXConstructorDecl* ctor) {
    for (const CXXCtorInitializer* init : ctor->inits()) {
      if (!init->isWritten() || !init->isMemberInitializer() || !init->getInit()) continue;
      const FieldDecl* field = init->getMember();
      SourceRange range(init->getSourceLocation(), init->getRParenLoc().isValid() ? init->getRParenLoc()
                                                                                 : init->getInit()->getEndLoc());
      NodeId id = newStmt(StmtKind::Assign, spanOf(range), kNone);
      inStmt(id, [&] {
        NodeId value = lowerExpr(init->getInit());
        NodeId self = newExpr(ExprKind::Name, spanFromOffsets(offsetOf(init->getSourceLocation()), offsetOf(init->getSourceLocation())));
        m_.exprs[self].text = "self";
        NodeId target = newExpr(ExprKind::Attribute, spanFromOffsets(offsetOf(init->getSourceLocation()), endOffsetOf(init->getSourceLocation())));
        m_.exprs[target].lhs = self;
        m_.exprs[target].text = identifierAt(init->getSourceLocation(), field->getNameAsString());
        m_.stmts[id].target = target;
        m_.stmts[id].value = value;
        size_t ls = listBuf_.size();
        listBuf_.push_back(target);
        m_.stmts[id].targets = pushList(ls);
        return 0;
      });
      finishStmt(id);
    }
  }

  struct PendingMethod {
    uint32_t function;
    const CXXRecordDecl* record;
  };
  std::vector<PendingMethod> pendingMethods_;

  void resolveOutOfLineMethods() {
    for (const PendingMethod& p : pendingMethods_) {
      auto it = classOf_.find(p.record->getCanonicalDecl());
      if (it != classOf_.end()) m_.functions[p.function].cls = it->second;
    }
  }

  /// Where a base specifier spells the base's own name: `Base` in `public ns::Base`, `Base` in
  /// `Base<T>`. Invalid when the type is not written as a name.
  static SourceLocation baseNameLoc(const CXXBaseSpecifier& b) {
    const TypeSourceInfo* info = b.getTypeSourceInfo();
    if (!info) return {};
    TypeLoc tl = info->getTypeLoc();
    if (auto e = tl.getAs<ElaboratedTypeLoc>()) tl = e.getNamedTypeLoc();
    if (auto t = tl.getAs<TemplateSpecializationTypeLoc>()) return t.getTemplateNameLoc();
    if (auto t = tl.getAs<RecordTypeLoc>()) return t.getNameLoc();
    if (auto t = tl.getAs<TypedefTypeLoc>()) return t.getNameLoc();
    if (auto t = tl.getAs<InjectedClassNameTypeLoc>()) return t.getNameLoc();
    return {};
  }

  void lowerRecord(const CXXRecordDecl* r, NodeId parent) {
    if (!r->isThisDeclarationADefinition() || r->isLambda()) return;
    NodeId id = newStmt(StmtKind::ClassDef, spanOf(r->getSourceRange()), parent);
    Class c;
    std::string name = r->getNameAsString();
    c.name = name.empty() ? std::string_view("<anonymous>") : identifierAt(r->getLocation(), name);
    c.span = spanOf(r->getSourceRange());
    c.function = fn_;
    c.defStmt = id;
    m_.classes.push_back(c);
    int32_t index = static_cast<int32_t>(m_.classes.size() - 1);
    classOf_[r->getCanonicalDecl()] = index;
    m_.stmts[id].def = static_cast<uint32_t>(index);
    size_t ls = listBuf_.size();
    inStmt(id, [&] {
      for (const CXXBaseSpecifier& b : r->bases()) {
        // The base's span is its name as written (`Base` of `public ns::Base`), which facts match
        // against the classes of the model.
        SourceLocation nameLoc = baseNameLoc(b);
        NodeId base = newExpr(ExprKind::Name, nameLoc.isValid() ? spanFromOffsets(offsetOf(nameLoc), endOffsetOf(nameLoc))
                                                                : spanOf(b.getSourceRange()));
        const CXXRecordDecl* br = recordOf(b.getType());
        noteRecord(br);
        std::string canon = br ? canonicalName(br->getQualifiedNameAsString()) : std::string();
        if (canon.empty() && br && isModuleRecord(br)) canon = "torch.nn.Module";
        m_.exprs[base].text = br ? identifierAt(nameLoc.isValid() ? nameLoc : b.getBaseTypeLoc(), br->getNameAsString())
                                 : m_.textOf(m_.exprs[base].span);
        m_.exprs[base].canonical = intern(canon);
        listBuf_.push_back(base);
      }
      return 0;
    });
    m_.classes[static_cast<size_t>(index)].bases = pushList(ls);
    int32_t savedCls = cls_;
    cls_ = index;
    size_t start = listBuf_.size();
    for (const Decl* d : r->decls()) {
      if (d->isImplicit()) continue;
      if (const auto* f = dyn_cast<FunctionDecl>(d)) lowerFunction(f, id);
      else if (const auto* ft = dyn_cast<FunctionTemplateDecl>(d)) lowerFunction(ft->getTemplatedDecl(), id);
      else if (const auto* nested = dyn_cast<CXXRecordDecl>(d)) lowerRecord(nested, id);
    }
    // A header class's methods defined after it, in a header: lowered with the class.
    if (external_)
      for (const CXXMethodDecl* method : r->methods()) {
        const FunctionDecl* def = nullptr;
        if (!method->isImplicit() && !method->doesThisDeclarationHaveABody() && method->hasBody(def) && def &&
            inProjectHeader(def->getLocation()))
          queueHeaderDecl({def, nullptr});
      }
    m_.classes[static_cast<size_t>(index)].body = pushList(start);
    cls_ = savedCls;
    finishStmt(id);
  }

  // ---------------------------------------------------------------- statements

  /// Lowers a statement that is a block (or a single statement) into the current list.
  void lowerBlockInto(const clang::Stmt* s, NodeId parent) {
    if (!s) return;
    if (const auto* cs = dyn_cast<CompoundStmt>(s)) {
      std::vector<const clang::Stmt*> items(cs->body_begin(), cs->body_end());
      lowerSequence(items, 0, parent, cs->getRBracLoc());
      return;
    }
    if (const auto* tryStmt = dyn_cast<CXXTryStmt>(s)) {
      lowerStmt(tryStmt, parent);
      return;
    }
    lowerStmt(s, parent);
  }

  List lowerBody(const clang::Stmt* s, NodeId parent) {
    size_t start = listBuf_.size();
    lowerBlockInto(s, parent);
    return pushList(start);
  }

  /// Lowers items[from..] into the current list. A RAII grad-mode guard becomes a `with` whose
  /// body is the rest of its block; `at::autocast::set_enabled(true)` one whose body runs to the
  /// matching `set_enabled(false)` (or the end of the block).
  void lowerSequence(const std::vector<const clang::Stmt*>& items, size_t from, NodeId parent, SourceLocation blockEnd) {
    for (size_t i = from; i < items.size(); ++i) {
      const clang::Stmt* s = items[i];
      if (const auto* ds = dyn_cast<DeclStmt>(s); ds && ds->isSingleDecl()) {
        if (const auto* v = dyn_cast<VarDecl>(ds->getSingleDecl())) {
          if (const char* ctx = guardMeaning(v)) {
            lowerGuard(v, ds, ctx, items, i + 1, items.size(), parent, blockEnd);
            return;
          }
        }
      }
      if (int on = autocastToggle(s); on == 1) {
        size_t end = i + 1;
        while (end < items.size() && autocastToggle(items[end]) != 0) ++end;
        lowerGuardRange(s, "torch.autocast", {}, items, i + 1, end, parent,
                        end < items.size() ? items[end]->getEndLoc() : blockEnd);
        i = end < items.size() ? end : items.size();
        if (end < items.size()) lowerStmt(items[end], parent);
        continue;
      }
      lowerStmt(s, parent);
    }
  }

  /// 1: `at::autocast::set_enabled(true)`, 0: `set_enabled(false)`, -1: anything else.
  int autocastToggle(const clang::Stmt* s) {
    const auto* call = dyn_cast<CallExpr>(s->IgnoreContainers());
    if (!call || !call->getDirectCallee() || call->getNumArgs() != 1) return -1;
    if (canonicalName(call->getDirectCallee()->getQualifiedNameAsString()) != "torch.autocast.set_enabled") return -1;
    bool value = false;
    const clang::Expr* arg = call->getArg(0);
    if (arg->isValueDependent() || arg->containsErrors() || !arg->EvaluateAsBooleanCondition(value, ctx_)) return -1;
    return value ? 1 : 0;
  }

  /// A RAII guard declaration: its constructor arguments become the context call's arguments.
  void lowerGuard(const VarDecl* v, const DeclStmt* ds, const char* canonical, const std::vector<const clang::Stmt*>& items,
                  size_t from, size_t to, NodeId parent, SourceLocation blockEnd) {
    std::vector<const clang::Expr*> args;
    const clang::Expr* init = v->getInit();
    if (const auto* ctor = dyn_cast_or_null<CXXConstructExpr>(init ? init->IgnoreImplicit() : nullptr))
      for (const clang::Expr* a : ctor->arguments())
        if (!isa<CXXDefaultArgExpr>(a)) args.push_back(a);
    SourceLocation end = blockEnd.isInvalid() && from < to ? items[to - 1]->getEndLoc() : blockEnd;
    lowerGuardRange(ds, canonical, args, items, from, to, parent, end);
  }

  /// A `with <canonical>(args):` statement opened by `opener` whose body is items[from, to).
  void lowerGuardRange(const clang::Stmt* opener, const char* canonical, const std::vector<const clang::Expr*>& args,
                       const std::vector<const clang::Stmt*>& items, size_t from, size_t to, NodeId parent, SourceLocation end) {
    NodeId id = newStmt(StmtKind::With, spanOf(SourceRange(opener->getBeginLoc(), end)), parent);
    size_t ls = listBuf_.size();
    NodeId ctx = inStmt(id, [&] {
      std::vector<NodeId> lowered;
      for (const clang::Expr* a : args) lowered.push_back(lowerExpr(a));
      NodeId callee = newExpr(ExprKind::Name, spanOf(opener->getSourceRange()));
      m_.exprs[callee].text = m_.own(canonical);
      m_.exprs[callee].canonical = intern(canonical);
      NodeId call = newExpr(ExprKind::Call, statementSpan(opener->getSourceRange()));
      m_.exprs[call].lhs = callee;
      m_.exprs[call].canonical = intern(canonical);
      setArgs(call, lowered, {});
      return call;
    });
    listBuf_.push_back(ctx);
    m_.stmts[id].targets = pushList(ls);
    size_t start = listBuf_.size();
    lowerSequence(std::vector<const clang::Stmt*>(items.begin() + static_cast<long>(from), items.begin() + static_cast<long>(to)), 0, id,
                  end);
    m_.stmts[id].body = pushList(start);
    finishStmt(id);
  }

  void lowerStmt(const clang::Stmt* s, NodeId parent) {
    if (!s) return;
    DepthGuard guard(depth_);
    if (depth_ > kMaxDepth) {
      m_.truncatedDepth = true;
      return;
    }
    if (!inMainFile(s->getBeginLoc())) return;
    if (const auto* cs = dyn_cast<CompoundStmt>(s)) {
      // A bare `{ ... }` scope: its statements join the enclosing list; guards end with it.
      std::vector<const clang::Stmt*> items(cs->body_begin(), cs->body_end());
      lowerSequence(items, 0, parent, cs->getRBracLoc());
      return;
    }
    if (const auto* ds = dyn_cast<DeclStmt>(s)) {
      for (const Decl* d : ds->decls()) {
        if (const auto* v = dyn_cast<VarDecl>(d)) lowerVarDecl(v, parent, ds->getSourceRange());
        else if (const auto* r = dyn_cast<CXXRecordDecl>(d)) lowerRecord(r, parent);
      }
      return;
    }
    if (const auto* e = dyn_cast<clang::Expr>(s)) {
      lowerExprStatement(e, parent);
      return;
    }
    if (const auto* rs = dyn_cast<ReturnStmt>(s)) {
      NodeId id = newStmt(StmtKind::Return, statementSpan(rs->getSourceRange()), parent);
      if (rs->getRetValue()) m_.stmts[id].value = inStmt(id, [&] { return lowerExpr(rs->getRetValue()); });
      finishStmt(id);
      return;
    }
    if (const auto* is = dyn_cast<IfStmt>(s)) {
      lowerIf(is, parent);
      return;
    }
    if (const auto* fs = dyn_cast<ForStmt>(s)) {
      lowerFor(fs, parent);
      return;
    }
    if (const auto* rf = dyn_cast<CXXForRangeStmt>(s)) {
      lowerRangeFor(rf, parent);
      return;
    }
    if (const auto* ws = dyn_cast<WhileStmt>(s)) {
      NodeId id = newStmt(StmtKind::While, spanOf(ws->getSourceRange()), parent);
      m_.stmts[id].value = inStmt(id, [&] { return ws->getCond() ? lowerExpr(ws->getCond()) : kNone; });
      m_.stmts[id].body = lowerBody(ws->getBody(), id);
      finishStmt(id);
      return;
    }
    if (const auto* dos = dyn_cast<DoStmt>(s)) {
      NodeId id = newStmt(StmtKind::While, statementSpan(dos->getSourceRange()), parent);
      m_.stmts[id].body = lowerBody(dos->getBody(), id);
      m_.stmts[id].value = inStmt(id, [&] { return dos->getCond() ? lowerExpr(dos->getCond()) : kNone; });
      finishStmt(id);
      return;
    }
    if (const auto* sw = dyn_cast<SwitchStmt>(s)) {
      NodeId id = newStmt(StmtKind::Other, spanOf(sw->getSourceRange()), parent);
      m_.stmts[id].value = inStmt(id, [&] { return sw->getCond() ? lowerExpr(sw->getCond()) : kNone; });
      m_.stmts[id].body = lowerBody(sw->getBody(), id);
      finishStmt(id);
      return;
    }
    if (const auto* cs = dyn_cast<SwitchCase>(s)) {
      lowerStmt(cs->getSubStmt(), parent);
      return;
    }
    if (const auto* ls = dyn_cast<LabelStmt>(s)) {
      lowerStmt(ls->getSubStmt(), parent);
      return;
    }
    if (const auto* as = dyn_cast<AttributedStmt>(s)) {
      lowerStmt(as->getSubStmt(), parent);
      return;
    }
    if (const auto* ts = dyn_cast<CXXTryStmt>(s)) {
      lowerTry(ts, parent);
      return;
    }
    if (isa<BreakStmt>(s)) {
      finishStmt(newStmt(StmtKind::Break, statementSpan(s->getSourceRange()), parent));
      return;
    }
    if (isa<ContinueStmt>(s)) {
      finishStmt(newStmt(StmtKind::Continue, statementSpan(s->getSourceRange()), parent));
      return;
    }
    if (isa<NullStmt>(s)) return;
    NodeId id = newStmt(StmtKind::Other, statementSpan(s->getSourceRange()), parent);
    finishStmt(id);
  }

  void lowerVarDecl(const VarDecl* v, NodeId parent, SourceRange stmtRange) {
    if (!inMainFile(v->getLocation())) return;
    NodeId id = newStmt(StmtKind::Assign, statementSpan(stmtRange), parent);
    inStmt(id, [&] {
      NodeId value = kNone;
      if (const clang::Expr* init = v->getInit()) value = lowerInitializer(v, init);
      if (value == kNone) {
        // `double total;` / `torch::Tensor h;`: still a binding at this point.
        value = newExpr(ExprKind::Other, spanFromOffsets(offsetOf(v->getLocation()), endOffsetOf(v->getLocation())));
      }
      NodeId target = bindingTarget(v);
      m_.stmts[id].target = target;
      m_.stmts[id].value = value;
      size_t ls = listBuf_.size();
      listBuf_.push_back(target);
      m_.stmts[id].targets = pushList(ls);
      return 0;
    });
    finishStmt(id);
  }

  /// The value a variable is initialised with. `torch::nn::Linear fc(4, 4)` reads as
  /// `fc = torch.nn.Linear(4, 4)`; `std::vector<torch::Tensor> v;` as `v = []`.
  NodeId lowerInitializer(const VarDecl* v, const clang::Expr* init) {
    const clang::Expr* inner = init->IgnoreImplicit();
    if (const auto* cleanups = dyn_cast<ExprWithCleanups>(inner)) inner = cleanups->getSubExpr()->IgnoreImplicit();
    const auto* ctor = dyn_cast<CXXConstructExpr>(inner);
    if (!ctor || isa<CXXTemporaryObjectExpr>(ctor)) return lowerExpr(init);
    // `auto y = f(x);` / `torch::Tensor t = a + b;`: a copy or move of the value.
    if (ctor->getNumArgs() == 1 && (ctor->isElidable() || ctor->getConstructor()->isCopyOrMoveConstructor()))
      return lowerExpr(ctor->getArg(0));
    // `torch::nn::Linear fc(4, 4);`, `Net net;`, `std::vector<torch::Tensor> v;`: a call of the type.
    return lowerConstruct(ctor, v->getType(), SourceRange(v->getLocation(), v->getEndLoc()));
  }

  /// `std::tie(out, hidden) = lstm->forward(x, hidden)`: the tuple of the names it assigns, as
  /// `out, hidden = ...` is in Python; kNone for any other target.
  NodeId tiedTarget(const clang::Expr* lhs) {
    const auto* call = dyn_cast<CallExpr>(lhs->IgnoreImplicit());
    const FunctionDecl* callee = call ? call->getDirectCallee() : nullptr;
    if (!callee || callee->getQualifiedNameAsString() != "std::tie" || call->getNumArgs() == 0) return kNone;
    std::vector<NodeId> parts;
    for (const clang::Expr* a : call->arguments()) parts.push_back(lowerExpr(a));
    NodeId target = newExpr(ExprKind::Container, spanOf(call->getSourceRange()));
    setArgs(target, parts, {});
    return target;
  }

  /// What a declaration binds: its name, or for `auto [a, b] = ...` the tuple of its names.
  NodeId bindingTarget(const VarDecl* v) {
    const auto* dd = dyn_cast<DecompositionDecl>(v);
    if (!dd) return nameExpr(v->getLocation(), v->getNameAsString());
    std::vector<NodeId> names;
    for (const BindingDecl* b : dd->bindings()) names.push_back(nameExpr(b->getLocation(), b->getNameAsString()));
    NodeId target = newExpr(ExprKind::Container, spanOf(dd->getSourceRange()));
    setArgs(target, names, {});
    return target;
  }

  NodeId nameExpr(SourceLocation loc, const std::string& name) {
    NodeId id = newExpr(ExprKind::Name, spanFromOffsets(offsetOf(loc), endOffsetOf(loc)));
    m_.exprs[id].text = identifierAt(loc, name);
    return id;
  }

  void lowerExprStatement(const clang::Expr* e, NodeId parent) {
    const clang::Expr* x = e->IgnoreImplicit();
    if (const auto* cleanups = dyn_cast<ExprWithCleanups>(x)) x = cleanups->getSubExpr()->IgnoreImplicit();
    // Assignments and compound assignments, builtin or overloaded (torch::Tensor::operator+=).
    const clang::Expr* lhs = nullptr;
    const clang::Expr* rhs = nullptr;
    std::string op;
    if (const auto* bo = dyn_cast<BinaryOperator>(x); bo && bo->isAssignmentOp()) {
      lhs = bo->getLHS();
      rhs = bo->getRHS();
      op = bo->getOpcodeStr().str();
    } else if (const auto* oc = dyn_cast<CXXOperatorCallExpr>(x); oc && oc->getNumArgs() == 2) {
      switch (oc->getOperator()) {
        case OO_Equal: case OO_PlusEqual: case OO_MinusEqual: case OO_StarEqual: case OO_SlashEqual:
          lhs = oc->getArg(0);
          rhs = oc->getArg(1);
          op = getOperatorSpelling(oc->getOperator());
          break;
        default: break;
      }
    }
    if (const auto* throwExpr = dyn_cast<CXXThrowExpr>(x)) {
      NodeId id = newStmt(StmtKind::Raise, statementSpan(e->getSourceRange()), parent);
      if (throwExpr->getSubExpr()) m_.stmts[id].value = inStmt(id, [&] { return lowerExpr(throwExpr->getSubExpr()); });
      finishStmt(id);
      return;
    }
    if (lhs) {
      bool plain = op == "=";
      NodeId id = newStmt(plain ? StmtKind::Assign : StmtKind::AugAssign, statementSpan(e->getSourceRange()), parent);
      inStmt(id, [&] {
        // Python evaluates the value first; keep that order (children before the target).
        NodeId value = lowerExpr(rhs);
        NodeId target = plain ? tiedTarget(lhs) : kNone;
        if (target == kNone) target = lowerExpr(lhs);
        m_.stmts[id].value = value;
        m_.stmts[id].target = target;
        if (!plain) m_.stmts[id].op = m_.own(op);
        size_t ls = listBuf_.size();
        listBuf_.push_back(target);
        m_.stmts[id].targets = pushList(ls);
        return 0;
      });
      finishStmt(id);
      return;
    }
    NodeId id = newStmt(StmtKind::Expr, statementSpan(e->getSourceRange()), parent);
    m_.stmts[id].value = inStmt(id, [&] { return lowerExpr(e); });
    finishStmt(id);
  }

  void lowerIf(const IfStmt* is, NodeId parent) {
    NodeId id = newStmt(StmtKind::If, spanOf(is->getSourceRange()), parent);
    m_.stmts[id].value = inStmt(id, [&] {
      if (is->getInit()) {
        if (const auto* e = dyn_cast<clang::Expr>(is->getInit())) lowerExpr(e);
      }
      if (const VarDecl* cv = is->getConditionVariable(); cv && cv->getInit()) return lowerExpr(cv->getInit());
      return is->getCond() ? lowerExpr(is->getCond()) : kNone;
    });
    m_.stmts[id].body = lowerBody(is->getThen(), id);
    if (is->getElse()) m_.stmts[id].orelse = lowerBody(is->getElse(), id);
    finishStmt(id);
  }

  /// `for (int i = 0; i < n; ++i)` reads as `for i in <range>`; the condition and increment
  /// are kept as the iterable's sub-expressions.
  void lowerFor(const ForStmt* fs, NodeId parent) {
    NodeId id = newStmt(StmtKind::For, spanOf(fs->getSourceRange()), parent);
    inStmt(id, [&] {
      NodeId target = kNone;
      std::vector<NodeId> parts;
      if (const auto* ds = dyn_cast_or_null<DeclStmt>(fs->getInit())) {
        for (const Decl* d : ds->decls())
          if (const auto* v = dyn_cast<VarDecl>(d)) {
            if (v->getInit()) parts.push_back(lowerExpr(v->getInit()));
            if (target == kNone) target = nameExpr(v->getLocation(), v->getNameAsString());
          }
      } else if (const auto* e = dyn_cast_or_null<clang::Expr>(fs->getInit())) {
        parts.push_back(lowerExpr(e));
      }
      if (fs->getCond()) parts.push_back(lowerExpr(fs->getCond()));
      if (fs->getInc()) parts.push_back(lowerExpr(fs->getInc()));
      NodeId iter = newExpr(ExprKind::Other, spanOf(SourceRange(fs->getLParenLoc(), fs->getRParenLoc())));
      setArgs(iter, parts, {});
      m_.stmts[id].target = target;
      m_.stmts[id].value = iter;
      return 0;
    });
    m_.stmts[id].body = lowerBody(fs->getBody(), id);
    finishStmt(id);
  }

  void lowerRangeFor(const CXXForRangeStmt* rf, NodeId parent) {
    NodeId id = newStmt(StmtKind::For, spanOf(rf->getSourceRange()), parent);
    inStmt(id, [&] {
      NodeId iter = rf->getRangeInit() ? lowerExpr(rf->getRangeInit()) : kNone;
      const VarDecl* v = rf->getLoopVariable();
      NodeId target = v ? bindingTarget(v) : kNone;
      m_.stmts[id].target = target;
      m_.stmts[id].value = iter;
      return 0;
    });
    m_.stmts[id].body = lowerBody(rf->getBody(), id);
    finishStmt(id);
  }

  void lowerTry(const CXXTryStmt* ts, NodeId parent) {
    NodeId id = newStmt(StmtKind::Try, spanOf(ts->getSourceRange()), parent);
    m_.stmts[id].body = lowerBody(ts->getTryBlock(), id);
    std::vector<Handler> handlers;
    for (unsigned i = 0; i < ts->getNumHandlers(); ++i) {
      const CXXCatchStmt* c = ts->getHandler(i);
      Handler h;
      h.span = spanOf(c->getSourceRange());
      if (const VarDecl* ex = c->getExceptionDecl()) {
        h.name = identifierAt(ex->getLocation(), ex->getNameAsString());
        const CXXRecordDecl* r = recordOf(ex->getType());
        if (r) {
          NodeId type = inStmt(id, [&] { return newExpr(ExprKind::Name, spanOf(ex->getTypeSourceInfo() ? ex->getTypeSourceInfo()->getTypeLoc().getSourceRange() : ex->getSourceRange())); });
          m_.exprs[type].text = m_.own(r->getNameAsString());
          m_.exprs[type].canonical = intern(canonicalName(r->getQualifiedNameAsString()));
          h.type = type;
        }
      }
      h.body = lowerBody(c->getHandlerBlock(), id);
      handlers.push_back(h);
    }
    m_.stmts[id].firstHandler = static_cast<uint32_t>(m_.handlers.size());
    m_.stmts[id].handlerCount = static_cast<uint32_t>(handlers.size());
    m_.handlers.insert(m_.handlers.end(), handlers.begin(), handlers.end());
    finishStmt(id);
  }

  // ---------------------------------------------------------------- expressions

  void setArgs(NodeId call, const std::vector<NodeId>& values, const std::vector<std::string_view>& keywords) {
    m_.exprs[call].firstArg = static_cast<uint32_t>(m_.args.size());
    m_.exprs[call].argCount = static_cast<uint32_t>(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      Arg a;
      a.value = values[i];
      if (i < keywords.size()) a.keyword = keywords[i];
      m_.args.push_back(a);
    }
  }

  struct LoweredArgs {
    std::vector<NodeId> values;
    std::vector<std::string_view> keywords;
  };

  /// Arguments as written (default arguments are not), each named after its parameter. Lowered
  /// before the call expression itself: the model stores children before their parents.
  LoweredArgs lowerCallArgs(const FunctionDecl* callee, const clang::Expr* const* args, unsigned count,
                            unsigned paramOffset) {
    LoweredArgs out;
    std::vector<NodeId>& values = out.values;
    std::vector<std::string_view>& keywords = out.keywords;
    for (unsigned i = 0; i < count; ++i) {
      if (isa<CXXDefaultArgExpr>(args[i])) break;
      values.push_back(lowerExpr(args[i]));
      std::string_view kw;
      unsigned p = i + paramOffset;
      if (callee && p < callee->getNumParams() && !callee->getParamDecl(p)->isParameterPack()) {
        std::string name = callee->getParamDecl(p)->getNameAsString();
        if (!name.empty()) kw = m_.own(name);
      }
      keywords.push_back(kw);
    }
    return out;
  }

  /// Strips what C++ writes but Python has no counterpart for: implicit conversions, temporaries,
  /// `*ptr` / `ptr->` through smart pointers and module holders, parentheses.
  const clang::Expr* strip(const clang::Expr* e) const {
    for (;;) {
      const clang::Expr* before = e;
      e = e->IgnoreImplicit()->IgnoreParens();
      if (const auto* c = dyn_cast<ExprWithCleanups>(e)) e = c->getSubExpr();
      // Copies, moves and implicit conversions (`true` passed as c10::optional<bool>).
      if (const auto* c = dyn_cast<CXXConstructExpr>(e); c && !isa<CXXTemporaryObjectExpr>(c) && c->getNumArgs() == 1 &&
                                                          (c->isElidable() || c->getConstructor()->isCopyOrMoveConstructor() ||
                                                           c->getParenOrBraceRange().isInvalid()))
        e = c->getArg(0);
      if (const auto* u = dyn_cast<UnaryOperator>(e); u && (u->getOpcode() == UO_Deref || u->getOpcode() == UO_AddrOf))
        e = u->getSubExpr();
      if (const auto* oc = dyn_cast<CXXOperatorCallExpr>(e);
          oc && ((oc->getOperator() == OO_Arrow) || (oc->getOperator() == OO_Star && oc->getNumArgs() == 1)))
        e = oc->getArg(0);
      if (const auto* cast = dyn_cast<CXXFunctionalCastExpr>(e); cast && !isa<CXXConstructExpr>(cast->getSubExpr()->IgnoreImplicit()))
        e = cast->getSubExpr();
      if (const auto* cast = dyn_cast<CXXNamedCastExpr>(e)) e = cast->getSubExpr();
      if (const auto* cast = dyn_cast<CStyleCastExpr>(e)) e = cast->getSubExpr();
      if (const auto* mv = dyn_cast<CallExpr>(e); mv && mv->getNumArgs() == 1 && mv->getDirectCallee() &&
                                                  (mv->getDirectCallee()->getQualifiedNameAsString() == "std::move" ||
                                                   mv->getDirectCallee()->getQualifiedNameAsString() == "std::forward"))
        e = mv->getArg(0);
      if (e == before) return e;
    }
  }

  NodeId lowerExpr(const clang::Expr* e) {
    if (!e) return kNone;
    DepthGuard guard(depth_);
    if (depth_ > kMaxDepth) {
      m_.truncatedDepth = true;
      return newExpr(ExprKind::Other, spanOf(e->getSourceRange()));
    }
    e = strip(e);
    if (!inMainFile(e->getBeginLoc()) && !inMainFile(e->getEndLoc())) return newExpr(ExprKind::Other, Span{});
    if (const auto* d = dyn_cast<DeclRefExpr>(e)) return lowerDeclRef(d);
    if (isa<CXXThisExpr>(e)) {
      NodeId id = newExpr(ExprKind::Name, spanOf(e->getSourceRange()));
      m_.exprs[id].text = "self";
      return id;
    }
    if (const auto* me = dyn_cast<MemberExpr>(e)) return lowerMember(me);
    if (const auto* mc = dyn_cast<CXXMemberCallExpr>(e)) return lowerMemberCall(mc);
    if (const auto* oc = dyn_cast<CXXOperatorCallExpr>(e)) return lowerOperatorCall(oc);
    if (const auto* ce = dyn_cast<CallExpr>(e)) return lowerCall(ce);
    if (const auto* tc = dyn_cast<CXXTemporaryObjectExpr>(e)) return lowerConstruct(tc, tc->getType(), tc->getSourceRange());
    if (const auto* fc = dyn_cast<CXXFunctionalCastExpr>(e)) {
      if (const auto* ctor = dyn_cast<CXXConstructExpr>(fc->getSubExpr()->IgnoreImplicit()))
        return lowerConstruct(ctor, fc->getType(), fc->getSourceRange());
    }
    if (const auto* ctor = dyn_cast<CXXConstructExpr>(e)) return lowerConstruct(ctor, ctor->getType(), ctor->getSourceRange());
    if (const auto* bo = dyn_cast<BinaryOperator>(e)) return lowerBinary(bo);
    if (const auto* uo = dyn_cast<UnaryOperator>(e)) {
      NodeId operand = lowerExpr(uo->getSubExpr());
      NodeId id = newExpr(ExprKind::UnaryOp, spanOf(e->getSourceRange()));
      m_.exprs[id].lhs = operand;
      m_.exprs[id].text = m_.own(UnaryOperator::getOpcodeStr(uo->getOpcode()).str());
      return id;
    }
    if (const auto* as = dyn_cast<ArraySubscriptExpr>(e)) {
      NodeId base = lowerExpr(as->getBase());
      NodeId index = lowerExpr(as->getIdx());
      NodeId id = newExpr(ExprKind::Subscript, spanOf(e->getSourceRange()));
      m_.exprs[id].lhs = base;
      m_.exprs[id].rhs = index;
      return id;
    }
    // Literals keep their spelling, as the Python front end's do (`2`, `"cuda:0"`, `true`).
    if (isa<IntegerLiteral>(e) || isa<FloatingLiteral>(e)) return literal(ExprKind::Number, e);
    if (isa<StringLiteral>(e)) return literal(ExprKind::String, e);
    if (isa<CXXBoolLiteralExpr>(e)) return literal(ExprKind::Bool, e);
    if (isa<CXXNullPtrLiteralExpr>(e)) return newExpr(ExprKind::NoneLit, spanOf(e->getSourceRange()));
    if (const auto* il = dyn_cast<InitListExpr>(e)) {
      const InitListExpr* syn = il->isSemanticForm() && il->getSyntacticForm() ? il->getSyntacticForm() : il;
      std::vector<NodeId> elems;
      for (const clang::Expr* x : syn->inits()) elems.push_back(lowerExpr(x));
      NodeId id = newExpr(ExprKind::Container, spanOf(e->getSourceRange()));
      setArgs(id, elems, {});
      return id;
    }
    if (const auto* sil = dyn_cast<CXXStdInitializerListExpr>(e)) return lowerExpr(sil->getSubExpr());
    if (const auto* co = dyn_cast<ConditionalOperator>(e)) {
      NodeId body = lowerExpr(co->getTrueExpr());
      NodeId cond = lowerExpr(co->getCond());
      NodeId orelse = lowerExpr(co->getFalseExpr());
      NodeId id = newExpr(ExprKind::Conditional, spanOf(e->getSourceRange()));
      setArgs(id, {body, cond, orelse}, {});
      return id;
    }
    if (const auto* le = dyn_cast<LambdaExpr>(e)) return lowerLambda(le);
    if (const auto* dm = dyn_cast<CXXDependentScopeMemberExpr>(e)) {
      NodeId base = dm->isImplicitAccess() ? selfName(dm->getMemberLoc()) : lowerExpr(dm->getBase());
      NodeId id = newExpr(ExprKind::Attribute, spanOf(e->getSourceRange()));
      m_.exprs[id].lhs = base;
      m_.exprs[id].text = memberText(dm->getMemberLoc(), dm->getMember().getAsString());
      return id;
    }
    if (const auto* ul = dyn_cast<UnresolvedLookupExpr>(e)) {
      NodeId id = newExpr(ExprKind::Name, spanOf(e->getSourceRange()));
      m_.exprs[id].text = identifierAt(ul->getNameLoc(), ul->getName().getAsString());
      if (ul->getNumDecls() > 0) m_.exprs[id].canonical = intern(canonicalName((*ul->decls_begin())->getQualifiedNameAsString()));
      return id;
    }
    if (const auto* um = dyn_cast<UnresolvedMemberExpr>(e)) {
      NodeId base = um->isImplicitAccess() ? selfName(um->getMemberLoc()) : lowerExpr(um->getBase());
      NodeId id = newExpr(ExprKind::Attribute, spanOf(e->getSourceRange()));
      m_.exprs[id].lhs = base;
      m_.exprs[id].text = memberText(um->getMemberLoc(), um->getMemberName().getAsString());
      return id;
    }
    if (const auto* uc = dyn_cast<CXXUnresolvedConstructExpr>(e)) {
      std::vector<NodeId> args;
      for (const clang::Expr* a : uc->arguments()) args.push_back(lowerExpr(a));
      NodeId callee = newExpr(ExprKind::Name, spanOf(uc->getTypeSourceInfo()->getTypeLoc().getSourceRange()));
      m_.exprs[callee].text = m_.textOf(m_.exprs[callee].span);
      NodeId id = newExpr(ExprKind::Call, spanOf(e->getSourceRange()));
      m_.exprs[id].lhs = callee;
      setArgs(id, args, {});
      return id;
    }
    // A call Clang could not resolve (`y.backward(c10::nullopt, true, true)`, the overload old
    // LibTorch had): its callee and arguments are the recovery expression's children. Read it as
    // the call it spells, with LibTorch's parameter names for the methods rules read by keyword.
    if (const auto* rec = dyn_cast<RecoveryExpr>(e); rec && !rec->subExpressions().empty()) {
      const clang::Expr* first = rec->subExpressions().front();
      if (first && (isa<MemberExpr>(first->IgnoreImplicit()) || isa<UnresolvedMemberExpr>(first->IgnoreImplicit()) ||
                    isa<UnresolvedLookupExpr>(first->IgnoreImplicit()) || isa<DeclRefExpr>(first->IgnoreImplicit()))) {
        NodeId callee = lowerExpr(first);
        std::vector<NodeId> args;
        for (size_t i = 1; i < rec->subExpressions().size(); ++i) args.push_back(lowerExpr(rec->subExpressions()[i]));
        NodeId id = newExpr(ExprKind::Call, spanOf(e->getSourceRange()));
        m_.exprs[id].lhs = callee;
        m_.exprs[id].canonical = m_.exprs[callee].canonical;
        setArgs(id, args, {});
        if (m_.exprs[callee].kind == ExprKind::Attribute) nameDependentArgs(id, m_.exprs[callee].text);
        return id;
      }
    }
    // Anything else (new, sizeof, recovery expressions of code Clang could not type): keep the
    // parts, so names used inside still count as uses.
    std::vector<NodeId> parts;
    for (const clang::Stmt* child : e->children())
      if (const auto* ce = dyn_cast_or_null<clang::Expr>(child)) parts.push_back(lowerExpr(ce));
    NodeId id = newExpr(ExprKind::Other, spanOf(e->getSourceRange()));
    setArgs(id, parts, {});
    return id;
  }

  NodeId selfName(SourceLocation at) {
    uint32_t o = offsetOf(at);
    NodeId id = newExpr(ExprKind::Name, spanFromOffsets(o, o));
    m_.exprs[id].text = "self";
    return id;
  }

  std::string_view memberText(SourceLocation loc, const std::string& name) {
    // C++ spells some Python names differently; the model speaks Python.
    if (name == "push_back" || name == "emplace_back") return "append";
    // A member the bundled declarations lack, renamed to their catch-all (cpp/standins.h): the
    // file's own spelling.
    if (name == "oomlint_missing_member") return identifierAt(loc, spelledIdentifier(loc));
    return identifierAt(loc, name);
  }

  /// Type hints for a value of type `t`: certain knowledge facts otherwise guess from names.
  static uint8_t hintFor(QualType t) {
    const CXXRecordDecl* r = recordOf(t);
    if (!r) return 0;
    if (isOptimizerRecord(r)) return type_hint::kOptimizer;
    if (!isModuleRecord(r)) return 0;
    std::string name = r->getNameAsString();
    if (const auto* spec = dyn_cast<ClassTemplateSpecializationDecl>(r); spec && spec->getTemplateArgs().size() > 0 &&
                                                                           spec->getTemplateArgs()[0].getKind() == TemplateArgument::Type)
      if (const CXXRecordDecl* inner = recordOf(spec->getTemplateArgs()[0].getAsType())) name = inner->getNameAsString();
    llvm::StringRef n(name);
    return n.endswith("Loss") || n.endswith("LossImpl") ? type_hint::kLossModule : type_hint::kModule;
  }

  static bool isOptimizerRecord(const CXXRecordDecl* r, int depth = 0) {
    if (!r || depth > 16) return false;
    if (r->getQualifiedNameAsString() == "torch::optim::Optimizer") return true;
    if (!r->hasDefinition()) return false;
    for (const CXXBaseSpecifier& b : r->getDefinition()->bases())
      if (isOptimizerRecord(recordOf(b.getType()), depth + 1)) return true;
    return false;
  }

  NodeId lowerDeclRef(const DeclRefExpr* d) {
    NodeId id = newExpr(ExprKind::Name, spanOf(d->getSourceRange()));
    if (isa<VarDecl>(d->getDecl())) m_.exprs[id].hint = hintFor(d->getType());
    const ValueDecl* decl = d->getDecl();
    std::string name = decl->getNameAsString();
    m_.exprs[id].text = identifierAt(d->getLocation(), name);
    if (isa<FunctionDecl>(decl) || isa<VarDecl>(decl) || isa<EnumConstantDecl>(decl)) {
      const auto* var = dyn_cast<VarDecl>(decl);
      if (!var || !var->isLocalVarDeclOrParm()) m_.exprs[id].canonical = intern(canonicalName(decl->getQualifiedNameAsString()));
    }
    // A data member used without `this->` inside a method: Python spells it `self.name`.
    return id;
  }

  NodeId lowerMember(const MemberExpr* me) {
    NodeId base = me->isImplicitAccess() ? selfName(me->getMemberLoc()) : lowerExpr(me->getBase());
    NodeId id = newExpr(ExprKind::Attribute, spanOf(me->getSourceRange()));
    if (me->isImplicitAccess()) m_.exprs[id].span = spanFromOffsets(offsetOf(me->getMemberLoc()), endOffsetOf(me->getEndLoc()));
    m_.exprs[id].lhs = base;
    m_.exprs[id].text = memberText(me->getMemberLoc(), me->getMemberDecl()->getNameAsString());
    if (isa<FieldDecl>(me->getMemberDecl())) m_.exprs[id].hint = hintFor(me->getType());
    return id;
  }

  NodeId lowerMemberCall(const CXXMemberCallExpr* mc) {
    const auto* callee = dyn_cast<MemberExpr>(mc->getCallee()->IgnoreParens());
    const CXXMethodDecl* method = mc->getMethodDecl();
    std::string name = method ? method->getNameAsString() : std::string();
    // Property-like accessors: C++ `p.grad()` / `p.mutable_grad()` / `x.data()` are Python's
    // `p.grad` / `x.data`.
    if (callee && mc->getNumArgs() == 0 && (name == "grad" || name == "mutable_grad" || name == "data") && method &&
        canonicalName(method->getParent()->getQualifiedNameAsString()) == "torch.Tensor")
      return lowerMember(callee);
    // `register_module("fc", torch::nn::Linear(...))` returns the module it registers: Python's
    // `self.fc = nn.Linear(...)`.
    if ((name == "register_module" || name == "register_parameter" || name == "register_buffer") && mc->getNumArgs() >= 2)
      return lowerExpr(mc->getArg(1));
    // A conversion operator call (`static_cast<bool>(x)` lowered implicitly) has no source form.
    if (method && isa<CXXConversionDecl>(method)) return lowerExpr(mc->getImplicitObjectArgument());
    noteCallee(method);
    NodeId fn = callee ? lowerMember(callee) : lowerExpr(mc->getCallee());
    LoweredArgs args = lowerCallArgs(method, mc->getArgs(), mc->getNumArgs(), 0);
    NodeId id = newExpr(ExprKind::Call, spanOf(mc->getSourceRange()));
    m_.exprs[id].lhs = fn;
    setArgs(id, args.values, args.keywords);
    return id;
  }

  NodeId lowerOperatorCall(const CXXOperatorCallExpr* oc) {
    OverloadedOperatorKind op = oc->getOperator();
    unsigned n = oc->getNumArgs();
    if (op == OO_Call && n >= 1) {
      // `model(x)` on a module holder, `criterion(out, y)`, a lambda called: Python's call.
      NodeId callee = lowerExpr(oc->getArg(0));
      const auto* method = dyn_cast_or_null<CXXMethodDecl>(oc->getDirectCallee());
      LoweredArgs args = lowerCallArgs(method, oc->getArgs() + 1, n - 1, 0);
      NodeId id = newExpr(ExprKind::Call, spanOf(oc->getSourceRange()));
      m_.exprs[id].lhs = callee;
      m_.exprs[id].canonical = m_.exprs[callee].canonical;
      setArgs(id, args.values, args.keywords);
      return id;
    }
    if (op == OO_Subscript && n == 2) {
      NodeId base = lowerExpr(oc->getArg(0));
      NodeId index = lowerExpr(oc->getArg(1));
      NodeId id = newExpr(ExprKind::Subscript, spanOf(oc->getSourceRange()));
      m_.exprs[id].lhs = base;
      m_.exprs[id].rhs = index;
      return id;
    }
    if (op == OO_LessLess && n == 2 && isOstream(oc->getArg(0)->getType())) return lowerStreamOutput(oc);
    if (n == 2) {
      NodeId a = lowerExpr(oc->getArg(0));
      NodeId b = lowerExpr(oc->getArg(1));
      std::string spelling = getOperatorSpelling(op);
      bool compare = op == OO_EqualEqual || op == OO_ExclaimEqual || op == OO_Less || op == OO_Greater ||
                     op == OO_LessEqual || op == OO_GreaterEqual;
      if (compare) {
        NodeId id = newExpr(ExprKind::Compare, spanOf(oc->getSourceRange()));
        setArgs(id, {a, b}, {});
        m_.exprs[id].text = m_.own(spelling);
        return id;
      }
      NodeId id = newExpr(ExprKind::BinOp, spanOf(oc->getSourceRange()));
      m_.exprs[id].lhs = a;
      m_.exprs[id].rhs = b;
      m_.exprs[id].text = m_.own(spelling);
      return id;
    }
    if (n == 1) {
      NodeId a = lowerExpr(oc->getArg(0));
      NodeId id = newExpr(ExprKind::UnaryOp, spanOf(oc->getSourceRange()));
      m_.exprs[id].lhs = a;
      m_.exprs[id].text = m_.own(getOperatorSpelling(op));
      return id;
    }
    return lowerGeneric(oc);
  }

  static bool isOstream(QualType t) {
    const CXXRecordDecl* r = recordOf(t);
    return r && r->getQualifiedNameAsString() == "std::basic_ostream";
  }

  /// `std::cout << "loss " << loss.item<double>() << std::endl` is Python's
  /// `print("loss", loss.item())`: a call of `print` with the streamed values.
  NodeId lowerStreamOutput(const CXXOperatorCallExpr* oc) {
    std::vector<const clang::Expr*> operands;
    const clang::Expr* cur = oc;
    for (int guard = 0; guard < 256; ++guard) {
      const auto* op = dyn_cast<CXXOperatorCallExpr>(strip(cur));
      if (!op || op->getOperator() != OO_LessLess || op->getNumArgs() != 2 || !isOstream(op->getArg(0)->getType())) break;
      operands.push_back(op->getArg(1));
      cur = op->getArg(0);
    }
    std::reverse(operands.begin(), operands.end());
    std::vector<NodeId> args;
    for (const clang::Expr* a : operands) args.push_back(lowerExpr(a));
    NodeId callee = newExpr(ExprKind::Name, spanOf(strip(cur)->getSourceRange()));
    m_.exprs[callee].text = "print";
    NodeId id = newExpr(ExprKind::Call, spanOf(oc->getSourceRange()));
    m_.exprs[id].lhs = callee;
    setArgs(id, args, {});
    return id;
  }

  NodeId lowerGeneric(const clang::Expr* e) {
    std::vector<NodeId> parts;
    for (const clang::Stmt* child : e->children())
      if (const auto* ce = dyn_cast_or_null<clang::Expr>(child)) parts.push_back(lowerExpr(ce));
    NodeId id = newExpr(ExprKind::Other, spanOf(e->getSourceRange()));
    setArgs(id, parts, {});
    return id;
  }

  NodeId lowerCall(const CallExpr* ce) {
    const FunctionDecl* fd = ce->getDirectCallee();
    // `std::get<1>(result)` is Python's `result[1]`.
    if (fd && ce->getNumArgs() == 1 && fd->getQualifiedNameAsString() == "std::get") {
      NodeId base = lowerExpr(ce->getArg(0));
      NodeId index = newExpr(ExprKind::Number, spanOf(ce->getCallee()->getSourceRange()));
      NodeId id = newExpr(ExprKind::Subscript, spanOf(ce->getSourceRange()));
      m_.exprs[id].lhs = base;
      m_.exprs[id].rhs = index;
      return id;
    }
    noteCallee(fd);
    NodeId callee = lowerExpr(ce->getCallee());
    LoweredArgs args = lowerCallArgs(fd, ce->getArgs(), ce->getNumArgs(), 0);
    NodeId id = newExpr(ExprKind::Call, spanOf(ce->getSourceRange()));
    m_.exprs[id].lhs = callee;
    if (fd) m_.exprs[id].canonical = intern(canonicalName(fd->getQualifiedNameAsString()));
    else m_.exprs[id].canonical = m_.exprs[callee].canonical;
    if (fd && m_.exprs[callee].canonical == 0) m_.exprs[callee].canonical = m_.exprs[id].canonical;
    setArgs(id, args.values, args.keywords);
    if (!fd && m_.exprs[callee].kind == ExprKind::Attribute) nameDependentArgs(id, m_.exprs[callee].text);
    return id;
  }

  /// In a template, `loss.backward({}, true)` on a dependent `loss` has no declaration to name its
  /// arguments; LibTorch's signatures for the methods rules read by keyword fill in.
  void nameDependentArgs(NodeId call, std::string_view method) {
    static const std::unordered_map<std::string_view, std::array<std::string_view, 4>> kParams = {
        {"backward", {"gradient", "retain_graph", "create_graph", "inputs"}},
        {"zero_grad", {"set_to_none", "", "", ""}},
    };
    auto it = kParams.find(method);
    if (it == kParams.end()) return;
    const Expr& c = m_.exprs[call];
    for (uint32_t i = 0; i < c.argCount && i < 4; ++i) m_.args[c.firstArg + i].keyword = it->second[i];
  }

  /// `torch::nn::Linear(4, 4)`, `Net()`, `torch::optim::SGD(params, opts)`: a call of the type.
  NodeId lowerConstruct(const CXXConstructExpr* ctor, QualType type, SourceRange range) {
    std::string canon = canonicalForType(type);
    std::vector<NodeId> args;
    std::vector<std::string_view> keywords;
    const CXXConstructorDecl* cd = ctor->getConstructor();
    for (unsigned i = 0; i < ctor->getNumArgs(); ++i) {
      const clang::Expr* a = ctor->getArg(i);
      if (isa<CXXDefaultArgExpr>(a)) break;
      args.push_back(lowerExpr(a));
      std::string_view kw;
      if (cd && i < cd->getNumParams() && !cd->getParamDecl(i)->isParameterPack()) {
        std::string name = cd->getParamDecl(i)->getNameAsString();
        if (!name.empty()) kw = m_.own(name);
      }
      keywords.push_back(kw);
    }
    // `torch::cat({acc, out}, 0)`: a list built from a braced list (a vector's, an ArrayRef's
    // initializer_list constructor) is that list, as Python's `[acc, out]`.
    if (args.size() == 1 && isa<CXXStdInitializerListExpr>(ctor->getArg(0)->IgnoreImplicit()) &&
        m_.exprs[args[0]].kind == ExprKind::Container)
      return args[0];
    if (canon == "std.vector" && args.empty()) {
      NodeId id = newExpr(ExprKind::Container, spanOf(range));
      return id;
    }
    const CXXRecordDecl* r = recordOf(type);
    noteRecord(r);
    Span calleeSpan = spanOf(range);
    NodeId callee = newExpr(ExprKind::Name, calleeSpan);
    m_.exprs[callee].text = r ? m_.own(r->getNameAsString()) : std::string_view("<type>");
    m_.exprs[callee].canonical = intern(canon);
    NodeId id = newExpr(ExprKind::Call, spanOf(range));
    m_.exprs[id].lhs = callee;
    m_.exprs[id].canonical = intern(canon);
    setArgs(id, args, keywords);
    return id;
  }

  NodeId lowerBinary(const BinaryOperator* bo) {
    NodeId a = lowerExpr(bo->getLHS());
    NodeId b = lowerExpr(bo->getRHS());
    std::string op = bo->getOpcodeStr().str();
    if (bo->isComparisonOp()) {
      NodeId id = newExpr(ExprKind::Compare, spanOf(bo->getSourceRange()));
      setArgs(id, {a, b}, {});
      m_.exprs[id].text = m_.own(op);
      return id;
    }
    if (bo->isLogicalOp()) {
      NodeId id = newExpr(ExprKind::BoolOp, spanOf(bo->getSourceRange()));
      setArgs(id, {a, b}, {});
      m_.exprs[id].text = bo->getOpcode() == BO_LAnd ? "and" : "or";
      return id;
    }
    NodeId id = newExpr(ExprKind::BinOp, spanOf(bo->getSourceRange()));
    m_.exprs[id].lhs = a;
    m_.exprs[id].rhs = b;
    m_.exprs[id].text = m_.own(op);
    return id;
  }

  NodeId lowerLambda(const LambdaExpr* le) {
    NodeId id = newExpr(ExprKind::Lambda, spanOf(le->getSourceRange()));
    Function fn;
    fn.name = "<lambda>";
    fn.isLambda = true;
    fn.span = spanOf(le->getSourceRange());
    fn.nameSpan = fn.span;
    fn.parent = fn_;
    fn.cls = -1;
    m_.functions.push_back(fn);
    uint32_t index = static_cast<uint32_t>(m_.functions.size() - 1);
    m_.exprs[id].function = index;
    const CXXMethodDecl* call = le->getCallOperator();
    m_.functions[index].firstParam = static_cast<uint32_t>(m_.params.size());
    if (call)
      for (const ParmVarDecl* p : call->parameters()) {
        std::string pname = p->getNameAsString();
        m_.params.push_back(Param{pname.empty() ? std::string_view("_") : identifierAt(p->getLocation(), pname), kNone});
      }
    m_.functions[index].paramCount = static_cast<uint32_t>(m_.params.size() - m_.functions[index].firstParam);
    uint32_t savedFn = fn_;
    NodeId savedStmt = stmt_;
    fn_ = index;
    stmt_ = kNone;
    size_t start = listBuf_.size();
    lowerBlockInto(le->getBody(), kNone);
    m_.functions[index].body = pushList(start);
    // A body that is one `return expr;` is Python's lambda expression.
    const List body = m_.functions[index].body;
    if (body.count == 1 && m_.stmt(m_.lists[body.first]).kind == StmtKind::Return)
      m_.functions[index].lambdaBody = m_.stmt(m_.lists[body.first]).value;
    fn_ = savedFn;
    stmt_ = savedStmt;
    return id;
  }
};

}  // namespace

void lowerTranslationUnit(ASTContext& ctx, const std::vector<const Decl*>& topLevel, Module& m, const std::string& projectRoot) {
  Lowerer lowerer(ctx, m, projectRoot);
  lowerer.lowerTranslationUnit(topLevel);
}

}  // namespace oomlint::cpp
