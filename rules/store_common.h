#pragma once
/// Shared by OOM102 and OOM103: recognising a store of a value into something that outlives the
/// loop iteration (`xs.append(v)`, `xs += [v]`, `d[k] = v`, `self.last = v`, `acc = torch.cat([acc, v])`).

#include "rules/common.h"

namespace oomlint::rules {

struct Store {
  NodeId stmt = kNone;
  NodeId value = kNone;      // the stored expression
  NodeId container = kNone;  // the list / dict / object / accumulator that keeps it
  NodeId reportAt = kNone;   // expression whose span is reported (call or statement)
  bool attribute = false;    // `self.x = v`
  bool concat = false;       // `acc = torch.cat([acc, v])`
  bool listConcat = false;   // `preds += [v]`: a list grown as `append` grows it
  bool viaMethod = false;    // a method (of this file or another module) stores its argument
  NodeId storedAt = kNone;   // that method's statement that does, when it is of this file
  bool intoArgument = false; // it stores one argument into another: the container is the caller's
  bool elementOfValue = false;  // what it stores are elements of `value` (a dict or list of tensors), not `value`
  bool replaces = false;     // that method assigns it to an attribute (kept until the next call, no growth)
};

/// Recognises a store at statement `s`; fills `out` and returns true. Besides the direct shapes,
/// a call of a method of the project whose summary says it stores an argument into its object
/// (`recorder.log(loss)` where `log` appends to `self.history`).
bool recognizeStore(const Facts& f, NodeId s, Store& out);

/// The store happens in a loop of some role whose iteration the container outlives, and the
/// container is not later fed to a backward (intentional accumulation). With
/// `returnedMeansIntended`, a container a data-loop helper returns is taken as a loss being built
/// for the caller (history-carrying stores); for device tensors returning them is the problem.
/// Outside every such loop, growth of `self` in a module's `forward` (Facts::forwardStepOf) that
/// the file never empties also outlives the steps that call it. Returns the loop (or that
/// forward's def), or kNone.
NodeId storeOutlivesLoop(const Facts& f, const Store& st, bool returnedMeansIntended);

}  // namespace oomlint::rules
