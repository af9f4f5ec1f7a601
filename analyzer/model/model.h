#pragma once
/// The language-neutral program model. Front ends (Python via tree-sitter, C++ via Clang)
/// lower their syntax trees into this; facts and rules only ever look at this, so a rule
/// written once applies to both languages.
///
/// Everything lives in flat arrays owned by Module and is addressed by 32-bit ids: lowering
/// a 10k-line file costs a handful of allocations, and ids stay valid while the model grows.

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace oomlint {

using NodeId = uint32_t;
inline constexpr NodeId kNone = UINT32_MAX;

enum class Lang : uint8_t { Python, Cpp };

/// A source range: byte offsets, plus 1-based line and 0-based byte column of both ends.
struct Span {
  uint32_t begin = 0, end = 0;
  uint32_t line = 0, col = 0;
  uint32_t endLine = 0, endCol = 0;
};

/// A slice of Module::lists (ids of statements, expressions, decorators ...).
struct List {
  uint32_t first = 0, count = 0;
};

enum class ExprKind : uint8_t {
  Name,         // text = identifier
  Attribute,    // lhs = object, text = member
  Call,         // lhs = callee, args = arguments
  Subscript,    // lhs = value, rhs = index
  BinOp,        // lhs op rhs, text = operator
  UnaryOp,      // lhs = operand, text = operator (`not`, `-`, `~`; C++ `!`, `-` ...)
  Compare,      // args = operands
  BoolOp,       // args = operands
  Number,
  String,
  Bool,
  NoneLit,
  Container,    // list / tuple / set / dict literal, comprehension; args = elements; shape says which
  Lambda,       // function = the lambda's Function
  Conditional,  // args = {body, cond, else}
  Other,        // anything the rules need not see into; args = sub-expressions
};

/// What a front end knows for certain about the value a name denotes. Python leaves these 0 and
/// facts fall back on conventions; C++ front ends read them off declared types.
namespace type_hint {
inline constexpr uint8_t kModule = 1;      // a torch::nn::Module (or holder, or pointer to one)
inline constexpr uint8_t kLossModule = 2;  // a loss module (CrossEntropyLoss ...)
inline constexpr uint8_t kOptimizer = 4;   // a torch::optim::Optimizer
}  // namespace type_hint

/// What a Container (or a comprehension's parts) is: a literal of which type, or a comprehension.
/// Facts bind a comprehension's loop variables from its iterable instead of guessing from text.
namespace shape {
inline constexpr uint8_t kNone = 0;
inline constexpr uint8_t kList = 1, kTuple = 2, kSet = 3, kDict = 4;
inline constexpr uint8_t kListComp = 5, kSetComp = 6, kDictComp = 7, kGenerator = 8;
inline constexpr uint8_t kForClause = 9;  // Other: args = {target, iterable} of `for target in iterable`
inline constexpr uint8_t kPair = 10;      // Other: args = {key, value} of a dict entry
/// Other: args = {value} of `yield value` / `yield from values`: what iterating a call of the
/// generator function gives.
inline constexpr uint8_t kYield = 11, kYieldFrom = 12;
inline bool isComprehension(uint8_t s) { return s >= kListComp && s <= kGenerator; }
}  // namespace shape

struct Arg {
  std::string_view keyword;  // empty for positional, "*" / "**" for splats
  NodeId value = kNone;
};

struct Expr {
  ExprKind kind = ExprKind::Other;
  Span span;
  std::string_view text;
  NodeId lhs = kNone;
  NodeId rhs = kNone;
  uint32_t firstArg = 0, argCount = 0;  // into Module::args
  uint32_t canonical = 0;                // into Module::names; 0 = not resolved to an import
  uint32_t function = 0;                 // Lambda: its Function
  uint32_t owner = 0;                    // Function whose code evaluates this (a lambda for its body)
  NodeId stmt = kNone;                   // the statement this expression belongs to
  uint8_t hint = 0;                      // type_hint bits (C++: from the declared type)
  uint8_t shape = 0;                     // shape:: of a Container (or its parts), else 0
};

enum class StmtKind : uint8_t {
  Expr, Assign, AugAssign, For, While, If, With, Try, Return, Delete,
  FunctionDef, ClassDef, Import, Break, Continue, Raise, Pass, Other,
};

struct Handler {
  NodeId type = kNone;  // the exception type expression, kNone for a bare except
  std::string_view name;
  Span span;
  List body;
};

struct Stmt {
  StmtKind kind = StmtKind::Other;
  Span span;
  NodeId parent = kNone;  // enclosing compound statement; kNone at the top of a function
  uint32_t function = 0;  // owning Function (0 = module level)
  NodeId target = kNone;  // Assign / AugAssign / For: the (first) target
  NodeId value = kNone;   // Assign / AugAssign / Expr / Return: value; For: iterable; While / If: condition
  std::string_view op;    // AugAssign: "+=" ...
  List targets;           // Assign: every target; With: context expressions; Delete: targets
  List body, orelse, finalbody;
  uint32_t firstHandler = 0, handlerCount = 0;
  uint32_t def = 0;       // FunctionDef: Function index; ClassDef: Class index
  uint32_t firstExpr = 0, endExpr = 0;  // ids of every expression in this statement's subtree
};

struct Param {
  std::string_view name;
  NodeId defaultValue = kNone;
};

struct Function {
  std::string_view name;  // "<module>" for the top level, "<lambda>" for lambdas
  Span span, nameSpan;
  uint32_t parent = 0;    // enclosing Function
  int32_t cls = -1;       // Class this is a method of, or -1
  bool isLambda = false;
  NodeId defStmt = kNone;
  NodeId lambdaBody = kNone;  // lambda: its body expression
  List decorators;        // expressions
  List body;              // statements
  uint32_t firstParam = 0, paramCount = 0;
};

struct Class {
  std::string_view name;
  Span span;
  uint32_t function = 0;  // Function the class is defined in
  NodeId defStmt = kNone;
  List bases;             // expressions
  List body;              // statements
};

struct Comment {
  uint32_t line = 0;
  uint32_t begin = 0, end = 0;  // byte range of the comment text, marker included
};

/// The first syntax error a front end met. Rules still run over what the parser recovered.
struct SyntaxIssue {
  Span span;
  std::string message;
};

struct Module {
  Lang lang = Lang::Python;
  std::string path;
  std::string source;

  std::vector<Expr> exprs;
  std::vector<Stmt> stmts;
  std::vector<Arg> args;
  std::vector<NodeId> lists;
  std::vector<Handler> handlers;
  std::vector<Param> params;
  std::vector<Function> functions;  // [0] is the module top level
  std::vector<Class> classes;
  std::vector<Comment> comments;
  std::vector<uint32_t> lineStarts;  // byte offset of each line's start
  std::vector<std::string> names{std::string()};  // canonical dotted names; [0] = unresolved
  /// Text a front end made up (C++ `self` for `this`, names spelled in a macro): deque keeps
  /// each string where it is, so string_views into it stay valid.
  std::deque<std::string> ownedText;
  /// Models whose text this one's string_views point into: the LSP server builds a document's
  /// model from per-statement pieces it keeps across edits (python/incremental.h).
  std::vector<std::shared_ptr<const Module>> parts;

  /// Local name -> dotted module path it was imported as (`F` -> `torch.nn.functional`).
  std::unordered_map<std::string_view, std::string> imports;
  bool importsTorch = false;      // any torch-family import: rules stay silent otherwise
  bool importsOtherFramework = false;  // TensorFlow, JAX, MXNet...: never PyTorch code by its program alone
  bool truncatedDepth = false;    // nesting beyond the lowering limit was left opaque
  std::vector<SyntaxIssue> syntaxIssues;

  /// C++: code of the project's own headers that this file's code calls (helpers, meter and
  /// trainer classes), lowered after the file's own so its functions get summaries as a helper
  /// of the same file would. Rules never run on it: its functions and statements are those from
  /// `firstExternalFunction` and `firstExternalStmt` on. Its spans have line 0 and offsets from
  /// kExternalBase into `externalTexts` (the headers' text), so they order and nest as in their
  /// header, name their text through textOf, and can never be mistaken for a place in `source`.
  static constexpr uint32_t kExternalBase = 0x80000000u;
  struct ExternalText {
    uint32_t base = 0;      // the span offset of the header's first byte
    std::string_view text;  // the header's text, kept in ownedText
  };
  std::vector<ExternalText> externalTexts;  // ascending bases
  uint32_t firstExternalFunction = UINT32_MAX;
  NodeId firstExternalStmt = kNone;
  /// Absolute paths of the headers `externalText` was taken from: a change to one of them
  /// changes this file's findings (the results cache checks them).
  std::vector<std::string> headerDependencies;
  static bool isExternal(const Span& s) { return s.begin >= kExternalBase; }

  // Accessors that keep call sites short. An absent node (kNone) reads as an empty expression,
  // so a query on a missing argument answers "nothing" instead of reading out of bounds.
  const Expr& expr(NodeId id) const { return id < exprs.size() ? exprs[id] : emptyExpr(); }
  const Stmt& stmt(NodeId id) const { return stmts[id]; }
  std::string_view textOf(const Span& s) const {
    if (s.end < s.begin) return {};
    if (isExternal(s)) return externalTextOf(s);
    if (s.begin > source.size()) return {};
    return std::string_view(source).substr(s.begin, s.end - s.begin);
  }
  std::string_view textOf(NodeId e) const { return e < exprs.size() ? textOf(exprs[e].span) : std::string_view{}; }
  const std::string& canonical(NodeId e) const { return names[e < exprs.size() ? exprs[e].canonical : 0]; }
  static const Expr& emptyExpr() {
    static const Expr empty;
    return empty;
  }
  const Arg* argsBegin(const Expr& e) const { return args.data() + e.firstArg; }
  const Arg* argsEnd(const Expr& e) const { return args.data() + e.firstArg + e.argCount; }
  const NodeId* listBegin(List l) const { return lists.data() + l.first; }
  const NodeId* listEnd(List l) const { return lists.data() + l.first + l.count; }
  std::string_view lineText(uint32_t line) const;
  std::string_view externalTextOf(const Span& s) const;
  std::string_view own(std::string s) { return ownedText.emplace_back(std::move(s)); }
  /// Line (1-based) of a byte offset.
  uint32_t lineOf(uint32_t offset) const;
};

/// Byte offset of the start of each line of `text` (line 1 at index 0); a final line without a
/// newline counts. Shared by both front ends, the report writers and the CLI.
std::vector<uint32_t> lineStartsOf(std::string_view text);

/// Iterates ids in a List: `for (NodeId s : items(m, stmt.body))`.
struct ListRange {
  const NodeId *b, *e;
  const NodeId* begin() const { return b; }
  const NodeId* end() const { return e; }
  size_t size() const { return static_cast<size_t>(e - b); }
};
inline ListRange items(const Module& m, List l) { return {m.listBegin(l), m.listEnd(l)}; }

struct ArgRange {
  const Arg *b, *e;
  const Arg* begin() const { return b; }
  const Arg* end() const { return e; }
  size_t size() const { return static_cast<size_t>(e - b); }
};
inline ArgRange argsOf(const Module& m, const Expr& e) { return {m.argsBegin(e), m.argsEnd(e)}; }

/// Convenience queries used by facts and rules alike.
/// Method name of a call whose callee is an attribute (`x.backward()` -> "backward"), else "".
std::string_view methodName(const Module& m, NodeId call);
/// Receiver of a method call (`x` in `x.backward()`), or kNone.
NodeId receiverOf(const Module& m, NodeId call);
/// Simple callee name: `foo(...)` -> "foo", `a.b.foo(...)` -> "foo".
std::string_view calleeName(const Module& m, NodeId call);
/// The positional argument at `index`, or kNone. C++ arguments are positional and also carry
/// their parameter's name as keyword (so `backward({}, true)` answers keywordArg "retain_graph").
NodeId positionalArg(const Module& m, NodeId call, uint32_t index);
/// The keyword argument `name`, or kNone.
NodeId keywordArg(const Module& m, NodeId call, std::string_view name);
/// A parameter passed either way: the keyword argument `name`, else the positional one at `index`.
NodeId argumentOf(const Module& m, NodeId call, std::string_view name, uint32_t index);
/// A bare `self` name: the receiver of a Python method, whose attributes outlive the call.
bool isSelfName(const Module& m, NodeId e);
/// Dotted source path of a Name/Attribute chain (`self.model.encoder`), or "" for anything else.
std::string dottedPath(const Module& m, NodeId e);
/// Strips parentheses-free wrappers the front ends keep (none today); identity for now.
bool isTrueLiteral(const Module& m, NodeId e);
bool isFalseLiteral(const Module& m, NodeId e);
/// A string literal's contents: its text as written (`rb"x"`, `'x'`) less prefix letters and
/// quotes, so `d["net"]` and `d['net']` name the same key.
std::string_view stringContents(std::string_view literal);
/// An element of a dict literal written `"key": value`: true, with the key's contents and the
/// value; false for computed keys and `**` splats.
bool stringKeyedEntry(const Module& m, NodeId element, std::string_view& key, NodeId& value);

}  // namespace oomlint
