#include "python/frontend.h"

#include "python/lowering.h"
#include "python/parse_arena.h"

#include <tree_sitter/api.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <unordered_map>

extern "C" const TSLanguage* tree_sitter_python(void);

namespace oomlint::python {
namespace {

/// Node types the lowering distinguishes; everything else is K::Other.
enum class K : uint8_t {
  Other, Module, Block, Comment, Error,
  ExpressionStatement, Assignment, AugmentedAssignment, ForStatement, WhileStatement, IfStatement,
  ElifClause, ElseClause, WithStatement, WithClause, WithItem, TryStatement, ExceptClause,
  ExceptGroupClause, FinallyClause, ReturnStatement, DeleteStatement, FunctionDefinition,
  DecoratedDefinition, Decorator, ClassDefinition, ImportStatement, ImportFromStatement,
  FutureImportStatement, BreakStatement, ContinueStatement, RaiseStatement, PassStatement,
  MatchStatement, CaseClause,
  Identifier, Attribute, Call, ArgumentList, KeywordArgument, ListSplat, DictionarySplat,
  Subscript, BinaryOperator, UnaryOperator, NotOperator, ComparisonOperator, BooleanOperator,
  Integer, Float, String, ConcatenatedString, True, False, None, List, Tuple, Set, Dictionary,
  ListComprehension, SetComprehension, DictionaryComprehension, GeneratorExpression, ForInClause, Pair,
  PatternList, TuplePattern, ListPattern, ExpressionList, ParenthesizedExpression, Lambda,
  ConditionalExpression, AsPattern, DottedName, AliasedImport, RelativeImport, WildcardImport,
  Parameters, LambdaParameters, TypedParameter, DefaultParameter, TypedDefaultParameter,
  ListSplatPattern, DictionarySplatPattern, Yield, Await, NamedExpression,
};

struct Grammar {
  const TSLanguage* lang = tree_sitter_python();
  std::vector<K> kinds;
  TSFieldId fLeft, fRight, fOperator, fBody, fCondition, fConsequence, fAlternative, fValue,
      fAlias, fName, fParameters, fSuperclasses, fFunction, fArguments, fObject, fAttribute,
      fSubscript, fDefinition, fModuleName;

  Grammar() {
    static const std::unordered_map<std::string_view, K> byName = {
        {"module", K::Module}, {"block", K::Block}, {"comment", K::Comment}, {"ERROR", K::Error},
        {"expression_statement", K::ExpressionStatement}, {"assignment", K::Assignment},
        {"augmented_assignment", K::AugmentedAssignment}, {"for_statement", K::ForStatement},
        {"while_statement", K::WhileStatement}, {"if_statement", K::IfStatement},
        {"elif_clause", K::ElifClause}, {"else_clause", K::ElseClause},
        {"with_statement", K::WithStatement}, {"with_clause", K::WithClause},
        {"with_item", K::WithItem}, {"try_statement", K::TryStatement},
        {"except_clause", K::ExceptClause}, {"except_group_clause", K::ExceptGroupClause},
        {"finally_clause", K::FinallyClause}, {"return_statement", K::ReturnStatement},
        {"delete_statement", K::DeleteStatement}, {"function_definition", K::FunctionDefinition},
        {"decorated_definition", K::DecoratedDefinition}, {"decorator", K::Decorator},
        {"class_definition", K::ClassDefinition}, {"import_statement", K::ImportStatement},
        {"import_from_statement", K::ImportFromStatement},
        {"future_import_statement", K::FutureImportStatement},
        {"break_statement", K::BreakStatement}, {"continue_statement", K::ContinueStatement},
        {"raise_statement", K::RaiseStatement}, {"pass_statement", K::PassStatement},
        {"match_statement", K::MatchStatement}, {"case_clause", K::CaseClause},
        {"identifier", K::Identifier}, {"attribute", K::Attribute}, {"call", K::Call},
        {"argument_list", K::ArgumentList}, {"keyword_argument", K::KeywordArgument},
        {"list_splat", K::ListSplat}, {"dictionary_splat", K::DictionarySplat},
        {"subscript", K::Subscript}, {"binary_operator", K::BinaryOperator},
        {"unary_operator", K::UnaryOperator}, {"not_operator", K::NotOperator},
        {"comparison_operator", K::ComparisonOperator}, {"boolean_operator", K::BooleanOperator},
        {"integer", K::Integer}, {"float", K::Float}, {"string", K::String},
        {"concatenated_string", K::ConcatenatedString}, {"true", K::True}, {"false", K::False},
        {"none", K::None}, {"list", K::List}, {"tuple", K::Tuple}, {"set", K::Set},
        {"dictionary", K::Dictionary}, {"list_comprehension", K::ListComprehension},
        {"set_comprehension", K::SetComprehension},
        {"dictionary_comprehension", K::DictionaryComprehension},
        {"generator_expression", K::GeneratorExpression}, {"pattern_list", K::PatternList},
        {"tuple_pattern", K::TuplePattern}, {"list_pattern", K::ListPattern},
        {"expression_list", K::ExpressionList},
        {"parenthesized_expression", K::ParenthesizedExpression}, {"lambda", K::Lambda},
        {"conditional_expression", K::ConditionalExpression}, {"as_pattern", K::AsPattern},
        {"dotted_name", K::DottedName}, {"aliased_import", K::AliasedImport},
        {"relative_import", K::RelativeImport}, {"wildcard_import", K::WildcardImport},
        {"parameters", K::Parameters}, {"lambda_parameters", K::LambdaParameters},
        {"typed_parameter", K::TypedParameter}, {"default_parameter", K::DefaultParameter},
        {"typed_default_parameter", K::TypedDefaultParameter},
        {"list_splat_pattern", K::ListSplatPattern},
        {"dictionary_splat_pattern", K::DictionarySplatPattern}, {"yield", K::Yield},
        {"await", K::Await}, {"named_expression", K::NamedExpression},
        {"for_in_clause", K::ForInClause}, {"pair", K::Pair},
    };
    uint32_t count = ts_language_symbol_count(lang);
    kinds.assign(count + 1, K::Other);
    for (uint32_t s = 0; s < count; ++s) {
      if (ts_language_symbol_type(lang, static_cast<TSSymbol>(s)) != TSSymbolTypeRegular) continue;
      auto it = byName.find(ts_language_symbol_name(lang, static_cast<TSSymbol>(s)));
      if (it != byName.end()) kinds[s] = it->second;
    }
    auto field = [&](const char* n) {
      return ts_language_field_id_for_name(lang, n, static_cast<uint32_t>(std::strlen(n)));
    };
    fLeft = field("left"); fRight = field("right"); fOperator = field("operator");
    fBody = field("body"); fCondition = field("condition"); fConsequence = field("consequence");
    fAlternative = field("alternative"); fValue = field("value"); fAlias = field("alias");
    fName = field("name"); fParameters = field("parameters"); fSuperclasses = field("superclasses");
    fFunction = field("function"); fArguments = field("arguments"); fObject = field("object");
    fAttribute = field("attribute"); fSubscript = field("subscript");
    fDefinition = field("definition"); fModuleName = field("module_name");
  }
};

const Grammar& grammar() {
  static const Grammar g;
  return g;
}

/// Nesting deeper than this is left opaque: Python itself refuses far shallower nesting, and
/// a bounded recursion cannot overflow the stack on adversarial input.
constexpr int kMaxDepth = 200;

struct Child {
  TSNode node;
  TSFieldId field;
  K kind;
};

class Lowerer {
 public:
  /// `origin` is the position (in the tree's coordinates) of byte 0 of `m.source`: a fragment of
  /// a larger text is lowered in its own coordinates, so it can be reused wherever it moves.
  Lowerer(Module& m, TSTree* tree, TSPoint originPoint = {0, 0}, uint32_t originByte = 0)
      : m_(m), g_(grammar()), cursor_(ts_tree_cursor_new(ts_tree_root_node(tree))), originByte_(originByte),
        originRow_(originPoint.row) {}
  ~Lowerer() { ts_tree_cursor_delete(&cursor_); }
  Lowerer(const Lowerer&) = delete;
  Lowerer& operator=(const Lowerer&) = delete;

  /// Lowers the top-level statements of `root` that start in [origin, `end`): all of them for a
  /// whole file, one chunk's for a file kept in pieces (python/incremental.h).
  void lowerModule(TSNode root, uint64_t end = UINT64_MAX) {
    Function top;
    top.name = "<module>";
    top.span = spanOf(root);
    m_.functions.push_back(top);
    fn_ = 0;
    const size_t first = collectChildren(root, originByte_, end), last = childBuf_.size();
    const size_t listStart = listBuf_.size();
    for (size_t i = first; i < last; ++i) {
      const Child c = childBuf_[i];
      lowerStatement(c.node, c.kind, kNone, listStart);
    }
    childBuf_.resize(first);
    m_.functions[0].body = pushList(listStart);
  }

 private:
  Module& m_;
  const Grammar& g_;
  TSTreeCursor cursor_;
  uint32_t originByte_ = 0, originRow_ = 0;
  std::vector<Child> childBuf_;
  std::vector<NodeId> listBuf_;
  std::vector<Arg> argBuf_;
  uint32_t fn_ = 0;
  int32_t cls_ = -1;
  int depth_ = 0;

  struct DepthGuard {
    int& d;
    explicit DepthGuard(int& depth) : d(depth) { ++d; }
    ~DepthGuard() { --d; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
  };

  K kindOf(TSNode n) const {
    TSSymbol s = ts_node_symbol(n);
    return s < g_.kinds.size() ? g_.kinds[s] : K::Other;
  }

  Span spanOf(TSNode n) const {
    Span s;
    s.begin = ts_node_start_byte(n) - originByte_;
    s.end = ts_node_end_byte(n) - originByte_;
    TSPoint a = ts_node_start_point(n), b = ts_node_end_point(n);
    s.line = a.row - originRow_ + 1;
    s.col = a.column;
    s.endLine = b.row - originRow_ + 1;
    s.endCol = b.column;
    return s;
  }

  std::string_view text(TSNode n) const {
    uint32_t b = ts_node_start_byte(n) - originByte_, e = ts_node_end_byte(n) - originByte_;
    return std::string_view(m_.source).substr(b, e - b);
  }

  /// Pushes the named children of `n` that start in [from, to) onto childBuf_, returns the first
  /// index. A range starting past 0 is found by byte, not by walking the children before it: a
  /// chunk of a file with thousands of top-level statements costs its own statements only.
  size_t collectChildren(TSNode n, uint32_t from = 0, uint64_t to = UINT64_MAX) {
    size_t start = childBuf_.size();
    ts_tree_cursor_reset(&cursor_, n);
    bool found = from == 0 ? ts_tree_cursor_goto_first_child(&cursor_)
                           : ts_tree_cursor_goto_first_child_for_byte(&cursor_, from) >= 0;
    if (!found) return start;
    do {
      TSNode c = ts_tree_cursor_current_node(&cursor_);
      uint32_t at = ts_node_start_byte(c);
      if (at >= to) break;
      if (!ts_node_is_named(c) || at < from) continue;
      childBuf_.push_back({c, ts_tree_cursor_current_field_id(&cursor_), kindOf(c)});
    } while (ts_tree_cursor_goto_next_sibling(&cursor_));
    return start;
  }

  TSNode field(TSNode n, TSFieldId f) const { return ts_node_child_by_field_id(n, f); }

  /// The one named child of `n` that is not a comment; a null node when there are more or none.
  TSNode soleExpression(TSNode n) const {
    TSNode sole{};
    uint32_t count = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < count; ++i) {
      TSNode c = ts_node_named_child(n, i);
      if (kindOf(c) == K::Comment) continue;
      if (!ts_node_is_null(sole)) return TSNode{};
      sole = c;
    }
    return sole;
  }

  List pushList(size_t from) {
    List l{static_cast<uint32_t>(m_.lists.size()), static_cast<uint32_t>(listBuf_.size() - from)};
    m_.lists.insert(m_.lists.end(), listBuf_.begin() + static_cast<long>(from), listBuf_.end());
    listBuf_.resize(from);
    return l;
  }

  NodeId newExpr(ExprKind k, TSNode n) {
    Expr e;
    e.kind = k;
    e.span = spanOf(n);
    e.owner = fn_;
    m_.exprs.push_back(e);
    return static_cast<NodeId>(m_.exprs.size() - 1);
  }

  NodeId newStmt(StmtKind k, TSNode n, NodeId parent) {
    Stmt s;
    s.kind = k;
    s.span = spanOf(n);
    s.parent = parent;
    s.function = fn_;
    s.firstExpr = static_cast<uint32_t>(m_.exprs.size());
    s.endExpr = s.firstExpr;
    m_.stmts.push_back(s);
    return static_cast<NodeId>(m_.stmts.size() - 1);
  }

  // ---------------------------------------------------------------- statements

  /// Lowers the statements that are children of `n` (a module or block).
  List lowerBlockChildren(TSNode n, NodeId parent) {
    size_t start = collectChildren(n);
    size_t end = childBuf_.size();
    size_t listStart = listBuf_.size();
    for (size_t i = start; i < end; ++i) {
      Child c = childBuf_[i];
      lowerStatement(c.node, c.kind, parent, listStart);
    }
    childBuf_.resize(start);
    return pushList(listStart);
  }

  List lowerBody(TSNode block, NodeId parent) {
    if (ts_node_is_null(block)) return {};
    if (kindOf(block) == K::Block) return lowerBlockChildren(block, parent);
    // A single statement where a block was expected (error recovery).
    size_t listStart = listBuf_.size();
    lowerStatement(block, kindOf(block), parent, listStart);
    return pushList(listStart);
  }

  void lowerStatement(TSNode n, K k, NodeId parent, size_t /*listStart*/) {
    if (k == K::Comment || k == K::Error) return;  // error regions are not trusted
    DepthGuard guard(depth_);
    if (depth_ > kMaxDepth) {
      m_.truncatedDepth = true;
      return;
    }
    NodeId id = kNone;
    switch (k) {
      case K::ExpressionStatement: id = lowerExpressionStatement(n, parent); break;
      case K::ForStatement: id = lowerFor(n, parent); break;
      case K::WhileStatement: id = lowerWhile(n, parent); break;
      case K::IfStatement: id = lowerIf(n, parent); break;
      case K::WithStatement: id = lowerWith(n, parent); break;
      case K::TryStatement: id = lowerTry(n, parent); break;
      case K::ReturnStatement: id = lowerSimple(n, parent, StmtKind::Return); break;
      case K::DeleteStatement: id = lowerDelete(n, parent); break;
      case K::RaiseStatement: id = lowerSimple(n, parent, StmtKind::Raise); break;
      case K::FunctionDefinition: id = lowerFunction(n, parent, {}); break;
      case K::DecoratedDefinition: id = lowerDecorated(n, parent); break;
      case K::ClassDefinition: id = lowerClass(n, parent, {}); break;
      case K::ImportStatement: case K::ImportFromStatement: case K::FutureImportStatement:
        id = lowerImport(n, k, parent); break;
      case K::BreakStatement: id = newStmt(StmtKind::Break, n, parent); break;
      case K::ContinueStatement: id = newStmt(StmtKind::Continue, n, parent); break;
      case K::PassStatement: id = newStmt(StmtKind::Pass, n, parent); break;
      case K::MatchStatement: id = lowerMatch(n, parent); break;
      default: id = lowerSimple(n, parent, StmtKind::Other); break;
    }
    if (id != kNone) {
      m_.stmts[id].endExpr = static_cast<uint32_t>(m_.exprs.size());
      listBuf_.push_back(id);
    }
  }

  /// A statement whose only interesting content is its expressions (first one kept as value).
  NodeId lowerSimple(TSNode n, NodeId parent, StmtKind kind) {
    NodeId id = newStmt(kind, n, parent);
    size_t start = collectChildren(n);
    size_t end = childBuf_.size();
    size_t listStart = listBuf_.size();
    for (size_t i = start; i < end; ++i) {
      Child c = childBuf_[i];
      if (c.kind == K::Comment || c.kind == K::Block) continue;
      NodeId e = lowerExpr(c.node, id);
      if (e == kNone) continue;
      if (m_.stmts[id].value == kNone) m_.stmts[id].value = e;
      listBuf_.push_back(e);
    }
    childBuf_.resize(start);
    m_.stmts[id].targets = pushList(listStart);
    return id;
  }

  NodeId lowerExpressionStatement(TSNode n, NodeId parent) {
    size_t start = collectChildren(n);
    size_t end = childBuf_.size();
    NodeId id = kNone;
    // `a, b` as a bare statement shows up as several children: lower the first as the value.
    for (size_t i = start; i < end && id == kNone; ++i) {
      Child c = childBuf_[i];
      if (c.kind == K::Comment) continue;
      if (c.kind == K::Assignment) {
        id = lowerAssignment(c.node, n, parent);
      } else if (c.kind == K::AugmentedAssignment) {
        id = newStmt(StmtKind::AugAssign, n, parent);
        TSNode op = field(c.node, g_.fOperator);
        m_.stmts[id].op = ts_node_is_null(op) ? std::string_view{} : text(op);
        m_.stmts[id].target = lowerExpr(field(c.node, g_.fLeft), id);
        m_.stmts[id].value = lowerExpr(field(c.node, g_.fRight), id);
      } else {
        id = newStmt(StmtKind::Expr, n, parent);
        m_.stmts[id].value = lowerExpr(c.node, id);
      }
    }
    childBuf_.resize(start);
    return id;
  }

  NodeId lowerAssignment(TSNode assign, TSNode stmtNode, NodeId parent) {
    NodeId id = newStmt(StmtKind::Assign, stmtNode, parent);
    size_t listStart = listBuf_.size();
    TSNode cur = assign;
    // Chained `a = b = value`: the right side nests another assignment.
    for (int guard = 0; guard < kMaxDepth; ++guard) {
      TSNode left = field(cur, g_.fLeft);
      TSNode right = field(cur, g_.fRight);
      if (!ts_node_is_null(left)) listBuf_.push_back(lowerExpr(left, id));
      if (ts_node_is_null(right)) break;  // annotation without a value
      if (kindOf(right) == K::Assignment) {
        cur = right;
        continue;
      }
      m_.stmts[id].value = lowerExpr(right, id);
      break;
    }
    m_.stmts[id].targets = pushList(listStart);
    if (m_.stmts[id].targets.count) m_.stmts[id].target = m_.lists[m_.stmts[id].targets.first];
    if (m_.stmts[id].value == kNone) m_.stmts[id].kind = StmtKind::Other;  // `x: int`
    return id;
  }

  NodeId lowerFor(TSNode n, NodeId parent) {
    NodeId id = newStmt(StmtKind::For, n, parent);
    m_.stmts[id].target = lowerExpr(field(n, g_.fLeft), id);
    m_.stmts[id].value = lowerExpr(field(n, g_.fRight), id);
    m_.stmts[id].body = lowerBody(field(n, g_.fBody), id);
    TSNode alt = field(n, g_.fAlternative);
    if (!ts_node_is_null(alt)) m_.stmts[id].orelse = lowerBody(field(alt, g_.fBody), id);
    return id;
  }

  NodeId lowerWhile(TSNode n, NodeId parent) {
    NodeId id = newStmt(StmtKind::While, n, parent);
    m_.stmts[id].value = lowerExpr(field(n, g_.fCondition), id);
    m_.stmts[id].body = lowerBody(field(n, g_.fBody), id);
    TSNode alt = field(n, g_.fAlternative);
    if (!ts_node_is_null(alt)) m_.stmts[id].orelse = lowerBody(field(alt, g_.fBody), id);
    return id;
  }

  /// if / elif / else: elif chains become nested Ifs in `orelse`.
  NodeId lowerIf(TSNode n, NodeId parent) {
    NodeId id = newStmt(StmtKind::If, n, parent);
    m_.stmts[id].value = lowerExpr(field(n, g_.fCondition), id);
    m_.stmts[id].body = lowerBody(field(n, g_.fConsequence), id);
    size_t start = collectChildren(n);
    size_t end = childBuf_.size();
    std::vector<Child> alts;
    for (size_t i = start; i < end; ++i)
      if (childBuf_[i].field == g_.fAlternative) alts.push_back(childBuf_[i]);
    childBuf_.resize(start);
    NodeId owner = id;
    for (const Child& a : alts) {
      if (a.kind == K::ElseClause) {
        m_.stmts[owner].orelse = lowerBody(field(a.node, g_.fBody), owner);
        break;
      }
      if (a.kind != K::ElifClause) continue;
      DepthGuard guard(depth_);
      if (depth_ > kMaxDepth) {
        m_.truncatedDepth = true;
        break;
      }
      NodeId elif = newStmt(StmtKind::If, a.node, owner);
      m_.stmts[elif].value = lowerExpr(field(a.node, g_.fCondition), elif);
      m_.stmts[elif].body = lowerBody(field(a.node, g_.fConsequence), elif);
      m_.stmts[elif].endExpr = static_cast<uint32_t>(m_.exprs.size());
      m_.stmts[owner].orelse = List{static_cast<uint32_t>(m_.lists.size()), 1};
      m_.lists.push_back(elif);
      owner = elif;
    }
    return id;
  }

  NodeId lowerWith(TSNode n, NodeId parent) {
    NodeId id = newStmt(StmtKind::With, n, parent);
    size_t listStart = listBuf_.size();
    size_t start = collectChildren(n);
    size_t end = childBuf_.size();
    for (size_t i = start; i < end; ++i) {
      if (childBuf_[i].kind != K::WithClause) continue;
      TSNode clause = childBuf_[i].node;
      uint32_t count = ts_node_named_child_count(clause);
      for (uint32_t j = 0; j < count; ++j) {
        TSNode item = ts_node_named_child(clause, j);
        if (kindOf(item) != K::WithItem) continue;
        TSNode value = field(item, g_.fValue);
        if (ts_node_is_null(value)) continue;
        if (kindOf(value) == K::AsPattern && ts_node_named_child_count(value) > 0)
          value = ts_node_named_child(value, 0);  // `ctx as alias`: keep the context expression
        listBuf_.push_back(lowerExpr(value, id));
      }
    }
    childBuf_.resize(start);
    m_.stmts[id].targets = pushList(listStart);
    m_.stmts[id].body = lowerBody(field(n, g_.fBody), id);
    return id;
  }

  NodeId lowerTry(TSNode n, NodeId parent) {
    NodeId id = newStmt(StmtKind::Try, n, parent);
    m_.stmts[id].body = lowerBody(field(n, g_.fBody), id);
    size_t start = collectChildren(n);
    size_t end = childBuf_.size();
    std::vector<Child> clauses(childBuf_.begin() + static_cast<long>(start), childBuf_.end());
    childBuf_.resize(start);
    (void)end;
    std::vector<Handler> handlers;
    for (const Child& c : clauses) {
      if (c.kind == K::ExceptClause || c.kind == K::ExceptGroupClause) {
        Handler h;
        h.span = spanOf(c.node);
        TSNode block{};
        bool haveBlock = false;
        uint32_t count = ts_node_named_child_count(c.node);
        for (uint32_t j = 0; j < count; ++j) {
          TSNode ch = ts_node_named_child(c.node, j);
          K ck = kindOf(ch);
          if (ck == K::Block) {
            block = ch;
            haveBlock = true;
          } else if (ck == K::Comment) {
            continue;
          } else if (h.type == kNone) {
            TSNode typeNode = ch;
            if (ck == K::AsPattern && ts_node_named_child_count(ch) > 0) {
              typeNode = ts_node_named_child(ch, 0);
              TSNode alias = ts_node_named_child(ch, ts_node_named_child_count(ch) - 1);
              if (!ts_node_is_null(alias) && ts_node_named_child_count(ch) > 1) h.name = text(alias);
            }
            h.type = lowerExpr(typeNode, id);
          } else if (ck == K::Identifier && h.name.empty()) {
            h.name = text(ch);
          }
        }
        if (haveBlock) h.body = lowerBody(block, id);
        handlers.push_back(h);
      } else if (c.kind == K::ElseClause) {
        m_.stmts[id].orelse = lowerBody(field(c.node, g_.fBody), id);
      } else if (c.kind == K::FinallyClause) {
        uint32_t count = ts_node_named_child_count(c.node);
        for (uint32_t j = 0; j < count; ++j) {
          TSNode ch = ts_node_named_child(c.node, j);
          if (kindOf(ch) == K::Block) m_.stmts[id].finalbody = lowerBody(ch, id);
        }
      }
    }
    m_.stmts[id].firstHandler = static_cast<uint32_t>(m_.handlers.size());
    m_.stmts[id].handlerCount = static_cast<uint32_t>(handlers.size());
    m_.handlers.insert(m_.handlers.end(), handlers.begin(), handlers.end());
    return id;
  }

  NodeId lowerDelete(TSNode n, NodeId parent) {
    NodeId id = newStmt(StmtKind::Delete, n, parent);
    size_t listStart = listBuf_.size();
    size_t start = collectChildren(n);
    size_t end = childBuf_.size();
    for (size_t i = start; i < end; ++i) {
      Child c = childBuf_[i];
      if (c.kind == K::Comment) continue;
      if (c.kind == K::ExpressionList) {
        size_t s2 = collectChildren(c.node);
        size_t e2 = childBuf_.size();
        for (size_t j = s2; j < e2; ++j)
          if (childBuf_[j].kind != K::Comment) listBuf_.push_back(lowerExpr(childBuf_[j].node, id));
        childBuf_.resize(s2);
      } else {
        listBuf_.push_back(lowerExpr(c.node, id));
      }
    }
    childBuf_.resize(start);
    m_.stmts[id].targets = pushList(listStart);
    return id;
  }

  /// `match` becomes a chain of Ifs, one per case, so facts see alternative branches.
  NodeId lowerMatch(TSNode n, NodeId parent) {
    NodeId id = newStmt(StmtKind::If, n, parent);
    TSNode subject = ts_node_child_by_field_name(n, "subject", 7);
    if (!ts_node_is_null(subject)) m_.stmts[id].value = lowerExpr(subject, id);
    TSNode body = field(n, g_.fBody);
    if (ts_node_is_null(body)) return id;
    NodeId owner = id;
    bool first = true;
    uint32_t count = ts_node_named_child_count(body);
    for (uint32_t j = 0; j < count; ++j) {
      TSNode c = ts_node_named_child(body, j);
      if (kindOf(c) != K::CaseClause) continue;
      TSNode consequence = ts_node_child_by_field_name(c, "consequence", 11);
      if (first) {
        m_.stmts[id].body = lowerBody(consequence, id);
        first = false;
        continue;
      }
      DepthGuard guard(depth_);
      if (depth_ > kMaxDepth) break;
      NodeId next = newStmt(StmtKind::If, c, owner);
      m_.stmts[next].body = lowerBody(consequence, next);
      m_.stmts[next].endExpr = static_cast<uint32_t>(m_.exprs.size());
      m_.stmts[owner].orelse = List{static_cast<uint32_t>(m_.lists.size()), 1};
      m_.lists.push_back(next);
      owner = next;
    }
    return id;
  }

  NodeId lowerDecorated(TSNode n, NodeId parent) {
    size_t listStart = listBuf_.size();
    TSNode def{};
    bool haveDef = false;
    // Decorators are lowered after the def statement exists so they belong to it.
    std::vector<TSNode> decorators;
    size_t start = collectChildren(n);
    size_t end = childBuf_.size();
    for (size_t i = start; i < end; ++i) {
      Child c = childBuf_[i];
      if (c.kind == K::Decorator) decorators.push_back(c.node);
      if (c.field == g_.fDefinition) {
        def = c.node;
        haveDef = true;
      }
    }
    childBuf_.resize(start);
    (void)listStart;
    if (!haveDef) return lowerSimple(n, parent, StmtKind::Other);
    if (kindOf(def) == K::FunctionDefinition) return lowerFunction(def, parent, decorators, n);
    if (kindOf(def) == K::ClassDefinition) return lowerClass(def, parent, decorators, n);
    return lowerSimple(n, parent, StmtKind::Other);
  }

  List lowerDecorators(const std::vector<TSNode>& decorators, NodeId stmt) {
    size_t listStart = listBuf_.size();
    for (TSNode d : decorators) {
      if (ts_node_named_child_count(d) == 0) continue;
      TSNode e = ts_node_named_child(d, 0);
      if (kindOf(e) == K::Comment) continue;
      listBuf_.push_back(lowerExpr(e, stmt));
    }
    return pushList(listStart);
  }

  NodeId lowerFunction(TSNode n, NodeId parent, const std::vector<TSNode>& decorators,
                       TSNode outer = TSNode{}) {
    NodeId id = newStmt(StmtKind::FunctionDef, ts_node_is_null(outer) ? n : outer, parent);
    Function f;
    TSNode name = field(n, g_.fName);
    f.name = ts_node_is_null(name) ? std::string_view("<anonymous>") : text(name);
    f.span = spanOf(n);
    f.nameSpan = ts_node_is_null(name) ? f.span : spanOf(name);
    f.parent = fn_;
    f.cls = cls_;
    f.defStmt = id;
    m_.functions.push_back(f);
    uint32_t index = static_cast<uint32_t>(m_.functions.size() - 1);
    m_.stmts[id].def = index;
    // Decorators and defaults are evaluated in the enclosing scope.
    List decos = lowerDecorators(decorators, id);
    lowerParams(field(n, g_.fParameters), index, id);
    m_.functions[index].decorators = decos;
    uint32_t savedFn = fn_;
    int32_t savedCls = cls_;
    fn_ = index;
    cls_ = -1;
    List body = lowerBody(field(n, g_.fBody), kNone);
    fn_ = savedFn;
    cls_ = savedCls;
    m_.functions[index].body = body;
    return id;
  }

  void lowerParams(TSNode params, uint32_t function, NodeId stmt) {
    m_.functions[function].firstParam = static_cast<uint32_t>(m_.params.size());
    if (ts_node_is_null(params)) return;
    uint32_t count = ts_node_named_child_count(params);
    std::vector<Param> out;
    for (uint32_t i = 0; i < count; ++i) {
      TSNode p = ts_node_named_child(params, i);
      Param param;
      switch (kindOf(p)) {
        case K::Identifier: param.name = text(p); break;
        case K::TypedParameter:
        case K::ListSplatPattern:
        case K::DictionarySplatPattern: {
          TSNode inner = ts_node_named_child(p, 0);
          while (!ts_node_is_null(inner) && kindOf(inner) != K::Identifier && ts_node_named_child_count(inner) > 0)
            inner = ts_node_named_child(inner, 0);
          if (!ts_node_is_null(inner) && kindOf(inner) == K::Identifier) param.name = text(inner);
          break;
        }
        case K::DefaultParameter:
        case K::TypedDefaultParameter: {
          TSNode nm = field(p, g_.fName);
          if (!ts_node_is_null(nm)) param.name = text(nm);
          TSNode v = field(p, g_.fValue);
          if (!ts_node_is_null(v)) param.defaultValue = lowerExpr(v, stmt);
          break;
        }
        default: continue;
      }
      if (!param.name.empty()) out.push_back(param);
    }
    m_.params.insert(m_.params.end(), out.begin(), out.end());
    m_.functions[function].paramCount = static_cast<uint32_t>(out.size());
  }

  NodeId lowerClass(TSNode n, NodeId parent, const std::vector<TSNode>& decorators, TSNode outer = TSNode{}) {
    NodeId id = newStmt(StmtKind::ClassDef, ts_node_is_null(outer) ? n : outer, parent);
    Class c;
    TSNode name = field(n, g_.fName);
    c.name = ts_node_is_null(name) ? std::string_view("<anonymous>") : text(name);
    c.span = spanOf(n);
    c.function = fn_;
    c.defStmt = id;
    m_.classes.push_back(c);
    int32_t index = static_cast<int32_t>(m_.classes.size() - 1);
    m_.stmts[id].def = static_cast<uint32_t>(index);
    lowerDecorators(decorators, id);
    TSNode supers = field(n, g_.fSuperclasses);
    size_t listStart = listBuf_.size();
    if (!ts_node_is_null(supers)) {
      size_t start = collectChildren(supers);
      size_t end = childBuf_.size();
      for (size_t i = start; i < end; ++i) {
        Child ch = childBuf_[i];
        if (ch.kind == K::KeywordArgument || ch.kind == K::Comment) continue;
        listBuf_.push_back(lowerExpr(ch.node, id));
      }
      childBuf_.resize(start);
    }
    m_.classes[static_cast<size_t>(index)].bases = pushList(listStart);
    int32_t savedCls = cls_;
    cls_ = index;
    // Class bodies run in the enclosing function's frame for our purposes; methods get cls_.
    List body = lowerBody(field(n, g_.fBody), id);
    cls_ = savedCls;
    m_.classes[static_cast<size_t>(index)].body = body;
    m_.stmts[id].body = body;
    return id;
  }

  NodeId lowerImport(TSNode n, K k, NodeId parent) {
    NodeId id = newStmt(StmtKind::Import, n, parent);
    if (k == K::FutureImportStatement) return id;
    std::string base;
    if (k == K::ImportFromStatement) {
      TSNode mod = field(n, g_.fModuleName);
      if (ts_node_is_null(mod)) return id;
      base = std::string(text(mod));
      noteImportRoot(base);
    }
    size_t start = collectChildren(n);
    size_t end = childBuf_.size();
    for (size_t i = start; i < end; ++i) {
      Child c = childBuf_[i];
      if (c.field != g_.fName) continue;
      std::string_view dotted, alias;
      if (c.kind == K::DottedName) {
        dotted = text(c.node);
      } else if (c.kind == K::AliasedImport) {
        TSNode nm = field(c.node, g_.fName), al = field(c.node, g_.fAlias);
        if (ts_node_is_null(nm)) continue;
        dotted = text(nm);
        if (!ts_node_is_null(al)) alias = text(al);
      } else {
        continue;
      }
      // `from . import utils` names `.utils`; `from .models import Net` names `.models.Net`.
      std::string full = base.empty() ? std::string(dotted) : base + (base.back() == '.' ? "" : ".") + std::string(dotted);
      // Dotted names may span lines with backslashes or spaces; normalise.
      std::erase_if(full, [](char ch) { return ch == ' ' || ch == '\\' || ch == '\n' || ch == '\r' || ch == '\t'; });
      if (k == K::ImportStatement) noteImportRoot(full);
      if (!alias.empty()) {
        m_.imports[alias] = full;
      } else if (k == K::ImportStatement) {
        // `import torch.nn` binds `torch`.
        std::string_view head = dotted.substr(0, dotted.find('.'));
        m_.imports[head] = std::string(head);
      } else {
        m_.imports[dotted] = full;
      }
    }
    childBuf_.resize(start);
    return id;
  }

  void noteImportRoot(std::string_view module) {
    std::string_view root = module.substr(0, module.find('.'));
    static constexpr std::array<std::string_view, 14> kTorchFamily = {
        "torch", "torchvision", "torchaudio", "torchtext", "lightning", "pytorch_lightning",
        "transformers", "accelerate", "timm", "deepspeed", "fairscale", "torchmetrics", "apex", "diffusers"};
    for (std::string_view t : kTorchFamily)
      if (root == t) m_.importsTorch = true;
    static constexpr std::array<std::string_view, 14> kOtherFrameworks = {
        "tensorflow", "keras", "tf_keras", "jax", "flax", "haiku", "optax", "mxnet", "paddle", "mindspore", "oneflow",
        "chainer", "theano", "mlx"};
    for (std::string_view t : kOtherFrameworks)
      if (root == t) m_.importsOtherFramework = true;
  }

  // ---------------------------------------------------------------- expressions

  NodeId lowerExpr(TSNode n, NodeId stmt) {
    if (ts_node_is_null(n)) return kNone;
    DepthGuard guard(depth_);
    if (depth_ > kMaxDepth) {
      m_.truncatedDepth = true;
      NodeId id = newExpr(ExprKind::Other, n);
      m_.exprs[id].stmt = stmt;
      return id;
    }
    K k = kindOf(n);
    // Parentheses carry no meaning for the model, and neither do comments inside them
    // (`(  # why\n a\n + b\n)`).
    while (k == K::ParenthesizedExpression) {
      TSNode inner = soleExpression(n);
      if (ts_node_is_null(inner)) break;
      n = inner;
      k = kindOf(n);
    }
    NodeId id = kNone;
    switch (k) {
      case K::Identifier:
        id = newExpr(ExprKind::Name, n);
        m_.exprs[id].text = text(n);
        break;
      case K::Attribute: {
        NodeId obj = lowerExpr(field(n, g_.fObject), stmt);
        id = newExpr(ExprKind::Attribute, n);
        m_.exprs[id].lhs = obj;
        TSNode attr = field(n, g_.fAttribute);
        if (!ts_node_is_null(attr)) m_.exprs[id].text = text(attr);
        break;
      }
      case K::Call: id = lowerCall(n, stmt); break;
      case K::Subscript: {
        TSNode valueNode = field(n, g_.fValue);
        NodeId value = lowerExpr(valueNode, stmt);
        NodeId index = lowerIndex(n, valueNode, stmt);
        id = newExpr(ExprKind::Subscript, n);
        m_.exprs[id].lhs = value;
        m_.exprs[id].rhs = index;
        break;
      }
      case K::BinaryOperator: {
        NodeId l = lowerExpr(field(n, g_.fLeft), stmt);
        NodeId r = lowerExpr(field(n, g_.fRight), stmt);
        id = newExpr(ExprKind::BinOp, n);
        m_.exprs[id].lhs = l;
        m_.exprs[id].rhs = r;
        TSNode op = field(n, g_.fOperator);
        if (!ts_node_is_null(op)) m_.exprs[id].text = text(op);
        break;
      }
      case K::UnaryOperator: case K::NotOperator: case K::Await: {
        TSNode operand = ts_node_named_child(n, ts_node_named_child_count(n) - 1);
        NodeId o = lowerExpr(operand, stmt);
        id = newExpr(k == K::Await ? ExprKind::Other : ExprKind::UnaryOp, n);
        m_.exprs[id].lhs = o;
        if (k == K::Await) setArgs(id, {o});
        if (k == K::NotOperator) m_.exprs[id].text = "not";
        if (k == K::UnaryOperator) {
          TSNode op = field(n, g_.fOperator);
          if (!ts_node_is_null(op)) m_.exprs[id].text = text(op);
        }
        break;
      }
      case K::Integer: case K::Float:
        id = newExpr(ExprKind::Number, n);
        m_.exprs[id].text = text(n);
        break;
      case K::String: case K::ConcatenatedString:
        id = newExpr(ExprKind::String, n);
        m_.exprs[id].text = text(n);
        break;
      case K::True: case K::False:
        id = newExpr(ExprKind::Bool, n);
        m_.exprs[id].text = text(n);
        break;
      case K::None:
        id = newExpr(ExprKind::NoneLit, n);
        break;
      case K::Lambda: id = lowerLambda(n, stmt); break;
      case K::ComparisonOperator: id = lowerWithChildren(n, stmt, ExprKind::Compare); break;
      case K::BooleanOperator: id = lowerWithChildren(n, stmt, ExprKind::BoolOp); break;
      case K::ConditionalExpression: id = lowerWithChildren(n, stmt, ExprKind::Conditional); break;
      case K::List: case K::Tuple: case K::Set: case K::Dictionary: case K::ListComprehension:
      case K::SetComprehension: case K::DictionaryComprehension: case K::GeneratorExpression:
      case K::PatternList: case K::TuplePattern: case K::ListPattern: case K::ExpressionList:
      case K::ParenthesizedExpression:
        id = lowerWithChildren(n, stmt, ExprKind::Container);
        m_.exprs[id].shape = containerShape(k);
        break;
      case K::ForInClause:
        id = lowerWithChildren(n, stmt, ExprKind::Other);
        m_.exprs[id].shape = shape::kForClause;
        break;
      case K::Pair:
        id = lowerWithChildren(n, stmt, ExprKind::Other);
        m_.exprs[id].shape = shape::kPair;
        break;
      case K::Yield:
        id = lowerWithChildren(n, stmt, ExprKind::Other);
        m_.exprs[id].shape = yieldsFrom(n) ? shape::kYieldFrom : shape::kYield;
        break;
      case K::Error:
        id = newExpr(ExprKind::Other, n);  // not trusted: nothing inside is lowered
        break;
      default: id = lowerWithChildren(n, stmt, ExprKind::Other); break;
    }
    m_.exprs[id].stmt = stmt;
    return id;
  }

  static uint8_t containerShape(K k) {
    switch (k) {
      case K::List: case K::ListPattern: return shape::kList;
      case K::Tuple: case K::TuplePattern: case K::PatternList: case K::ExpressionList: return shape::kTuple;
      case K::Set: return shape::kSet;
      case K::Dictionary: return shape::kDict;
      case K::ListComprehension: return shape::kListComp;
      case K::SetComprehension: return shape::kSetComp;
      case K::DictionaryComprehension: return shape::kDictComp;
      case K::GeneratorExpression: return shape::kGenerator;
      default: return shape::kNone;
    }
  }

  void setArgs(NodeId id, std::initializer_list<NodeId> values) {
    m_.exprs[id].firstArg = static_cast<uint32_t>(m_.args.size());
    for (NodeId v : values)
      if (v != kNone) m_.args.push_back({{}, v});
    m_.exprs[id].argCount = static_cast<uint32_t>(m_.args.size()) - m_.exprs[id].firstArg;
  }

  /// Generic: lowers every named child as an element (keyword arguments keep their names).
  /// A subscript's index: its one expression, or for `x[:, -1]` (several, comma-separated) a
  /// tuple of them, which is what Python passes to `__getitem__`.
  NodeId lowerIndex(TSNode subscript, TSNode valueNode, NodeId stmt) {
    std::vector<TSNode> indices;
    uint32_t count = ts_node_named_child_count(subscript);
    for (uint32_t i = 0; i < count; ++i) {
      TSNode c = ts_node_named_child(subscript, i);
      if (ts_node_eq(c, valueNode) || std::strcmp(ts_node_type(c), "comment") == 0) continue;
      indices.push_back(c);
    }
    if (indices.size() < 2) return lowerExpr(field(subscript, g_.fSubscript), stmt);
    std::vector<Arg> elems;
    for (TSNode c : indices)
      if (NodeId v = lowerExpr(c, stmt); v != kNone) elems.push_back({{}, v});
    NodeId id = newExpr(ExprKind::Container, indices.front());
    Span last = spanOf(indices.back());
    m_.exprs[id].span.end = last.end;
    m_.exprs[id].span.endLine = last.endLine;
    m_.exprs[id].span.endCol = last.endCol;
    m_.exprs[id].shape = shape::kTuple;
    m_.exprs[id].firstArg = static_cast<uint32_t>(m_.args.size());
    m_.exprs[id].argCount = static_cast<uint32_t>(elems.size());
    m_.args.insert(m_.args.end(), elems.begin(), elems.end());
    return id;
  }

  /// `yield from values` rather than `yield value`: its anonymous `from` keyword.
  bool yieldsFrom(TSNode n) const {
    uint32_t count = ts_node_child_count(n);
    for (uint32_t i = 0; i < count; ++i)
      if (TSNode c = ts_node_child(n, i); !ts_node_is_named(c) && text(c) == "from") return true;
    return false;
  }

  NodeId lowerWithChildren(TSNode n, NodeId stmt, ExprKind kind) {
    std::vector<Arg> elems;
    size_t start = collectChildren(n);
    size_t end = childBuf_.size();
    std::vector<Child> kids(childBuf_.begin() + static_cast<long>(start), childBuf_.end());
    childBuf_.resize(start);
    (void)end;
    for (const Child& c : kids) {
      if (c.kind == K::Comment) continue;
      if (c.kind == K::KeywordArgument) {
        TSNode nm = field(c.node, g_.fName);
        NodeId v = lowerExpr(field(c.node, g_.fValue), stmt);
        if (v != kNone) elems.push_back({ts_node_is_null(nm) ? std::string_view{} : text(nm), v});
        continue;
      }
      NodeId v = lowerExpr(c.node, stmt);
      if (v != kNone) elems.push_back({{}, v});
    }
    NodeId id = newExpr(kind, n);
    m_.exprs[id].firstArg = static_cast<uint32_t>(m_.args.size());
    m_.exprs[id].argCount = static_cast<uint32_t>(elems.size());
    m_.args.insert(m_.args.end(), elems.begin(), elems.end());
    if (kind == ExprKind::Other || kind == ExprKind::Compare || kind == ExprKind::BoolOp) {
      // Operators' text helps rules read `x == y` and `a and b`.
      if (kind != ExprKind::Other) {
        uint32_t count = ts_node_child_count(n);
        for (uint32_t i = 0; i < count; ++i) {
          TSNode c = ts_node_child(n, i);
          if (!ts_node_is_named(c)) {
            m_.exprs[id].text = text(c);
            break;
          }
        }
      }
    }
    return id;
  }

  NodeId lowerCall(TSNode n, NodeId stmt) {
    NodeId callee = lowerExpr(field(n, g_.fFunction), stmt);
    TSNode argNode = field(n, g_.fArguments);
    // Arguments collect on a stack shared with the calls nested in them: no allocation per call.
    const size_t argStart = argBuf_.size();
    auto& args = argBuf_;
    if (!ts_node_is_null(argNode)) {
      if (kindOf(argNode) == K::GeneratorExpression) {
        NodeId v = lowerExpr(argNode, stmt);
        if (v != kNone) args.push_back({{}, v});
      } else {
        const size_t start = collectChildren(argNode), end = childBuf_.size();
        for (size_t i = start; i < end; ++i) {
          const Child c = childBuf_[i];  // a copy: nested calls grow childBuf_ past `end`
          switch (c.kind) {
            case K::Comment: break;
            case K::KeywordArgument: {
              TSNode nm = field(c.node, g_.fName);
              NodeId v = lowerExpr(field(c.node, g_.fValue), stmt);
              if (v != kNone && !ts_node_is_null(nm)) args.push_back({text(nm), v});
              break;
            }
            case K::ListSplat: case K::DictionarySplat: {
              NodeId v = ts_node_named_child_count(c.node) ? lowerExpr(ts_node_named_child(c.node, 0), stmt) : kNone;
              if (v != kNone) args.push_back({c.kind == K::ListSplat ? "*" : "**", v});
              break;
            }
            default: {
              NodeId v = lowerExpr(c.node, stmt);
              if (v != kNone) args.push_back({{}, v});
            }
          }
        }
        childBuf_.resize(start);
      }
    }
    NodeId id = newExpr(ExprKind::Call, n);
    m_.exprs[id].lhs = callee;
    m_.exprs[id].firstArg = static_cast<uint32_t>(m_.args.size());
    m_.exprs[id].argCount = static_cast<uint32_t>(args.size() - argStart);
    m_.args.insert(m_.args.end(), args.begin() + static_cast<long>(argStart), args.end());
    args.resize(argStart);
    return id;
  }

  NodeId lowerLambda(TSNode n, NodeId stmt) {
    Function f;
    f.name = "<lambda>";
    f.span = spanOf(n);
    f.nameSpan = f.span;
    f.parent = fn_;
    f.cls = -1;
    f.isLambda = true;
    m_.functions.push_back(f);
    uint32_t index = static_cast<uint32_t>(m_.functions.size() - 1);
    lowerParams(field(n, g_.fParameters), index, stmt);
    uint32_t saved = fn_;
    fn_ = index;
    NodeId body = lowerExpr(field(n, g_.fBody), stmt);
    fn_ = saved;
    m_.functions[index].lambdaBody = body;
    NodeId id = newExpr(ExprKind::Lambda, n);
    m_.exprs[id].function = index;
    setArgs(id, {body});
    return id;
  }
};

/// Finds the first ERROR or MISSING node, descending only into subtrees that contain one.
void recordFirstSyntaxIssue(Module& m, TSNode root) {
  if (!ts_node_has_error(root)) return;
  TSNode n = root;
  for (int guard = 0; guard < 100000; ++guard) {
    if (ts_node_is_missing(n) || std::strcmp(ts_node_type(n), "ERROR") == 0) break;
    uint32_t count = ts_node_child_count(n);
    bool descended = false;
    for (uint32_t i = 0; i < count; ++i) {
      TSNode c = ts_node_child(n, i);
      if (ts_node_has_error(c) || ts_node_is_missing(c)) {
        n = c;
        descended = true;
        break;
      }
    }
    if (!descended) break;
  }
  SyntaxIssue issue;
  issue.span.begin = ts_node_start_byte(n);
  issue.span.end = ts_node_end_byte(n);
  TSPoint a = ts_node_start_point(n), b = ts_node_end_point(n);
  issue.span.line = a.row + 1;
  issue.span.col = a.column;
  issue.span.endLine = b.row + 1;
  issue.span.endCol = b.column;
  if (ts_node_is_missing(n)) {
    issue.message = std::string("syntax error: expected `") + ts_node_type(n) + "`";
  } else {
    // Name what the parser choked on: the first token of the error region.
    std::string_view src(m.source);
    std::string_view tok = src.substr(issue.span.begin, std::min<uint32_t>(issue.span.end - issue.span.begin, 40));
    size_t cut = tok.find_first_of("\r\n");
    if (cut != std::string_view::npos) tok = tok.substr(0, cut);
    while (!tok.empty() && (tok.back() == ' ' || tok.back() == '\t')) tok.remove_suffix(1);
    bool printable = !tok.empty();
    for (unsigned char ch : tok)
      if (ch < 0x20 || ch >= 0x7f) printable = false;
    issue.message = printable ? "syntax error: unexpected `" + std::string(tok) + "`" : std::string("syntax error");
  }
  m.syntaxIssues.push_back(std::move(issue));
}

void computeLineStarts(Module& m) { m.lineStarts = lineStartsOf(m.source); }

/// Resolves Name/Attribute chains to dotted canonical names through the import table.
/// Expressions are stored children first, so one forward pass sees each object before its attribute.
void resolveCanonicalNames(Module& m) {
  if (m.imports.empty()) return;
  std::unordered_map<std::string, uint32_t> interned;
  auto intern = [&](std::string s) -> uint32_t {
    auto [it, inserted] = interned.try_emplace(std::move(s), static_cast<uint32_t>(m.names.size()));
    if (inserted) m.names.push_back(it->first);
    return it->second;
  };
  for (Expr& e : m.exprs) {
    if (e.kind == ExprKind::Name) {
      auto it = m.imports.find(e.text);
      if (it != m.imports.end()) e.canonical = intern(it->second);
    } else if (e.kind == ExprKind::Attribute && e.lhs != kNone &&
               (m.exprs[e.lhs].kind == ExprKind::Name || m.exprs[e.lhs].kind == ExprKind::Attribute)) {
      // Only dotted paths resolve: `torch.ones(3).cuda` is a method of a value, not `torch.ones.cuda`.
      uint32_t base = m.exprs[e.lhs].canonical;
      if (base != 0) e.canonical = intern(m.names[base] + "." + std::string(e.text));
    } else if (e.kind == ExprKind::Call && e.lhs != kNone) {
      e.canonical = m.exprs[e.lhs].canonical;
    }
  }
}

/// Keeps only comments that carry suppressions; found by text search, confirmed by the tree.
void collectDirectiveComments(Module& m, TSNode root, TSPoint originPoint = {0, 0}, uint32_t originByte = 0) {
  // One pass over the '#'s (searching for each marker instead compared text at every 'n' of the
  // file): a '#' followed on its line by a marker is kept when tree-sitter says it is in a comment.
  std::string_view src(m.source);
  auto hasMarker = [](std::string_view rest) {
    return rest.find("noqa") != std::string_view::npos || rest.find("NOQA") != std::string_view::npos ||
           rest.find("oomlint:") != std::string_view::npos;
  };
  size_t hash = 0;
  while ((hash = src.find('#', hash)) != std::string_view::npos) {
    size_t lineEnd = src.find('\n', hash);
    if (lineEnd == std::string_view::npos) lineEnd = src.size();
    if (!hasMarker(src.substr(hash + 1, lineEnd - hash - 1))) {
      hash = lineEnd;
      continue;
    }
    uint32_t at = static_cast<uint32_t>(hash) + originByte;
    TSNode n = ts_node_descendant_for_byte_range(root, at, at + 1);
    if (!ts_node_is_null(n) && std::strcmp(ts_node_type(n), "comment") == 0) {
      Comment c;
      c.begin = ts_node_start_byte(n) - originByte;
      c.end = ts_node_end_byte(n) - originByte;
      c.line = ts_node_start_point(n).row - originPoint.row + 1;
      if (m.comments.empty() || m.comments.back().begin != c.begin) m.comments.push_back(c);
      // A comment runs to the end of its line: nothing after this '#' can start another.
      hash = lineEnd;
      continue;
    }
    ++hash;  // a '#' in a string: a comment may still follow on this line
  }
}

}  // namespace

std::unique_ptr<Module> lowerTree(std::string path, std::string source, TSTree* tree) {
  auto m = std::make_unique<Module>();
  m->lang = Lang::Python;
  m->path = std::move(path);
  m->source = std::move(source);
  computeLineStarts(*m);
  TSNode root = ts_tree_root_node(tree);
  m->exprs.reserve(m->source.size() / 6);
  m->stmts.reserve(m->source.size() / 40);
  {
    Lowerer lowerer(*m, tree);
    lowerer.lowerModule(root);
  }
  recordFirstSyntaxIssue(*m, root);
  resolveCanonicalNames(*m);
  collectDirectiveComments(*m, root);
  return m;
}

std::unique_ptr<Module> lowerChunk(std::string text, TSTree* tree, TSPoint originPoint, uint32_t originByte) {
  auto m = std::make_unique<Module>();
  m->lang = Lang::Python;
  m->source = std::move(text);
  TSNode root = ts_tree_root_node(tree);
  {
    Lowerer lowerer(*m, tree, originPoint, originByte);
    lowerer.lowerModule(root, uint64_t{originByte} + m->source.size());
  }
  collectDirectiveComments(*m, root, originPoint, originByte);
  return m;
}

void resolveNames(Module& m) { resolveCanonicalNames(m); }

namespace {

// Before main, while no thread can be inside tree-sitter.
[[maybe_unused]] const bool kArenaHooksInstalled = (ParseArena::installHooks(), true);

struct ParserHandle {
  TSParser* parser = ts_parser_new();
  ParserHandle() { ts_parser_set_language(parser, tree_sitter_python()); }
  ~ParserHandle() { ts_parser_delete(parser); }
  ParserHandle(const ParserHandle&) = delete;
  ParserHandle& operator=(const ParserHandle&) = delete;
};

}  // namespace

TSParser* threadParser() {
  thread_local ParserHandle handle;
  // tree-sitter-python 0.23.6's external scanner does not clear its "inside an f-string" flag
  // when a parse starts, so after a file that ends inside an f-string the next file's error
  // recovery could differ. Setting the language again makes a new scanner: every parse starts
  // the same, and a file's findings never depend on the file parsed before it.
  ts_parser_set_language(handle.parser, tree_sitter_python());
  return handle.parser;
}

ArenaParser::ArenaParser() : parser(ts_parser_new()) { ts_parser_set_language(parser, tree_sitter_python()); }
ArenaParser::~ArenaParser() { ts_parser_delete(parser); }  // frees the grammar's scanner, which the grammar mallocs

std::string repairMisparses(std::string_view text, TSTree* tree) {
  TSNode root = ts_tree_root_node(tree);
  if (!ts_node_has_error(root)) return {};
  // The error regions: only text the parser rejected is touched.
  std::vector<std::pair<uint32_t, uint32_t>> errors;
  std::vector<TSNode> work{root};
  while (!work.empty() && errors.size() < 64) {
    TSNode n = work.back();
    work.pop_back();
    if (std::strcmp(ts_node_type(n), "ERROR") == 0) {
      errors.emplace_back(ts_node_start_byte(n), ts_node_end_byte(n));
      continue;
    }
    uint32_t count = ts_node_child_count(n);
    for (uint32_t i = 0; i < count; ++i) {
      TSNode c = ts_node_child(n, i);
      if (ts_node_has_error(c)) work.push_back(c);
    }
  }
  std::string out;
  for (auto [b, e] : errors)
    for (uint32_t i = b; i + 1 < e && i + 1 < text.size(); ++i) {
      // `*(...)`, `*[...]`, `*{...}`, `*name`, `*"..."`: what tree-sitter-python rejects in an
      // expression list (`y = 1, *[]`, `return a, *(f(x) for x in s)`) though Python accepts it.
      char next = text[i + 1];
      bool operand = next == '(' || next == '[' || next == '{' || next == '_' || next == '"' || next == '\'' ||
                     (next >= 'a' && next <= 'z') || (next >= 'A' && next <= 'Z');
      if (text[i] != '*' || !operand || (i > 0 && text[i - 1] == '*')) continue;
      // A starred operand of an expression list: after `,`, `=`, `return` or `yield`.
      uint32_t j = i;
      while (j > 0 && (text[j - 1] == ' ' || text[j - 1] == '\t')) --j;
      bool starred = j > 0 && (text[j - 1] == ',' || text[j - 1] == '=');
      for (std::string_view kw : {"return", "yield"})
        if (j >= kw.size() && text.substr(j - kw.size(), kw.size()) == kw) starred = true;
      if (!starred) continue;
      if (out.empty()) out = std::string(text);
      out[i] = ' ';
    }
  return out;
}

TSTree* parseWithRepairs(TSParser* parser, std::string_view text, std::string& repaired) {
  TSTree* tree = ts_parser_parse_string(parser, nullptr, text.data(), static_cast<uint32_t>(text.size()));
  if (!ts_node_has_error(ts_tree_root_node(tree))) return tree;
  repaired = repairMisparses(text, tree);
  if (repaired.empty()) return tree;
  TSTree* again = ts_parser_parse_string(parser, nullptr, repaired.data(), static_cast<uint32_t>(repaired.size()));
  if (ts_node_has_error(ts_tree_root_node(again))) {
    ts_tree_delete(again);
    repaired.clear();
    return tree;
  }
  ts_tree_delete(tree);
  return again;
}

std::unique_ptr<Module> parse(std::string path, std::string source) {
  // Everything tree-sitter allocates for this file comes from one arena and goes back at once: no
  // per-node malloc and free, and no walk over the finished tree to free it (ts_tree_delete).
  ParseArena arena;
  ArenaParser parser;
  std::string repaired;
  TSTree* tree = parseWithRepairs(parser.parser, source, repaired);
  return lowerTree(std::move(path), std::move(source), tree);
}

bool parsesCleanly(const std::string& source) {
  ParseArena arena;
  ArenaParser parser;
  std::string repaired;
  return !ts_node_has_error(ts_tree_root_node(parseWithRepairs(parser.parser, source, repaired)));
}

}  // namespace oomlint::python
