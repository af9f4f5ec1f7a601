#pragma once
/// Helpers shared by rules: fix rendering per language and small queries over the model.

#include <string>
#include <string_view>
#include <vector>

#include "engine/rule.h"
#include "facts/names.h"

namespace oomlint::rules {

/// `expr` followed by a method call, parenthesised when needed: `loss` -> `loss.item()`,
/// `a + b` -> `(a + b).item()`. `method` is rendered per language (`item` -> `item<double>` in C++).
std::string withMethod(const Module& m, NodeId expr, std::string_view pythonSuffix, std::string_view cppSuffix);

/// Edit replacing `expr` with `replacement`.
Edit replaceExpr(const Module& m, NodeId expr, std::string replacement);

/// Edit deleting keyword argument `keyword` (and the comma that joins it) from `call`.
bool removeKeywordArg(const Module& m, NodeId call, std::string_view keyword, Edit& out);
/// Edit deleting the first positional argument of `call`.
bool removePositionalArg(const Module& m, NodeId call, uint32_t index, Edit& out);

/// Edit inserting argument text `arg` into `call`: as the last argument (`f(a)` -> `f(a, arg)`),
/// or as the first (`f(a)` -> `f(arg, a)`). False when the call's parentheses cannot be found.
bool insertArgument(const Module& m, NodeId call, std::string_view arg, bool first, Edit& out);

/// A simple statement rendered for the module's language: C++ adds the `;`.
inline std::string statementText(const Module& m, std::string text) {
  if (m.lang == Lang::Cpp) text += ';';
  return text;
}

/// Edit inserting a new statement line `text` (without indentation or newline) just before
/// statement `stmt`, at the same indentation. False when `stmt` shares its first line.
bool insertStatementBefore(const Module& m, NodeId stmt, std::string_view text, Edit& out);

/// The enclosing statement chain of `stmt` holds a `with` whose context is one of `canonicals`
/// (or the function is decorated with one). Used for autocast regions.
bool insideContext(const Module& m, NodeId stmt, bool (*matches)(const std::string& canonical));

/// Edit deleting a whole statement that sits alone on its lines (or replacing it with `pass` when
/// it is the only statement of its block). False when the statement shares a line.
bool removeStatement(const Module& m, NodeId stmt, Edit& out);

/// Edit wrapping statement `stmt` in `with <ctx>:` (Python), re-indenting its lines with the
/// file's indent unit. False when it cannot be done safely (statement shares a line, or holds a
/// multi-line string whose contents would change).
bool wrapInWith(const Module& m, NodeId stmt, std::string_view ctx, Edit& out);

/// The local spelling of a dotted torch name (`torch.no_grad` -> `t.no_grad` after
/// `import torch as t`, `no_grad` after `from torch import no_grad`), or "" if not reachable.
std::string localName(const Module& m, std::string_view canonical);

// Evidence notes a finding shows (Finding::note): the facts it rests on, where a reader can
// check them.

/// Where `value`'s autograd history comes from: the forward, the loss, the backward called on it,
/// the function that returns it.
void noteHistory(Finding& f, const Facts& facts, NodeId value);
/// Where the target's binding that outlives the loop was made (`total = 0` before the loop).
void noteOutside(Finding& f, const Facts& facts, NodeId target);
/// The loop the finding is about, by its role (`training loop`, `evaluation loop`, `data loop`).
void noteLoop(Finding& f, const Facts& facts, NodeId loop);
/// The iteration (Facts::iterationOf) is a function's body that a loop of this file runs once per
/// iteration through a call (Facts::stepCallOf), not a loop or a framework's step.
bool calledPerIteration(const Facts& facts, NodeId iteration);

/// A forward call of the loop that takes `path` in an argument (`model(x, h)`, `model(input)`):
/// the loop feeds the value back into the model. kNone when none does. With `withHistory`, only
/// a read that passes the value's history on counts (Facts::readWithHistory: not `h.detach()`,
/// and through the iteration's own names).
NodeId forwardReading(const Facts& facts, NodeId loop, std::string_view path, bool withHistory = false);

/// Facts::runningUpdate, with the term reported: `added` is what it adds (of several terms, the
/// first that carries history, else the last); `several` (optional, only ever set) that it adds
/// more than one.
NodeId runningUpdateRead(const Facts& facts, NodeId value, std::string_view key, NodeId& added, bool* average = nullptr,
                         bool* several = nullptr);
/// The same for an assignment's target: its path, or the dict or list entry it is (`sums["cls"]
/// = sums["cls"] + loss`).
NodeId runningUpdateOfTarget(const Facts& facts, NodeId value, NodeId target, NodeId& added, bool* average = nullptr,
                             bool* several = nullptr);

/// Another statement of `loop` than `s` reads `key` with its history (Facts::readWithHistory): a
/// moving average of outputs fed into the loss (`(out - target).pow(2)`) is carried state.
bool readWithHistoryElsewhere(const Facts& facts, NodeId loop, NodeId s, std::string_view key);
/// An identifier in `e` (a name or attribute, lower-cased) contains `word`: naming evidence
/// (`logits`, `out_logits`, `self.lm_logits`), the weakest kind.
bool identifierMentions(const Facts& facts, NodeId e, std::string_view word);
/// Some identifier of the file contains `word`.
bool fileMentionsIdentifier(const Module& m, std::string_view word);
/// The expression holds a `%` (a `step % N == 0` guard).
bool hasModulo(const Facts& facts, NodeId e);
/// A loop's role, in words.
std::string_view loopRoleName(uint8_t role);

/// The argument holding the tensor in an accumulation target: Names and attribute paths.
inline bool isTrackable(const Module& m, NodeId e) {
  if (e == kNone) return false;
  ExprKind k = m.expr(e).kind;
  return k == ExprKind::Name || k == ExprKind::Attribute || k == ExprKind::Subscript;
}

/// Short source text of an expression for messages, elided when long.
std::string brief(const Module& m, NodeId e, size_t max = 40);
/// `text` in backticks, the way messages quote code. Built by appending: GCC 12 warns falsely
/// (-Wrestrict) on "`" + std::string.
std::string ticked(std::string_view text);

}  // namespace oomlint::rules
