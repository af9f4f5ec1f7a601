#pragma once
/// What one Python module tells the rest of its project: the summaries of its functions, its
/// classes and their bases, how it calls names of other modules (grad mode, modules in eval mode,
/// training path), its imports (for re-exports and the import graph) and its program-level facts
/// (it binds the process to a GPU, it makes a GradScaler).
/// Plain data, so it can be cached per file and compared between runs.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "facts/facts.h"

namespace oomlint::project {

struct ExportedFunction {
  std::string name;  // `evaluate`, `Trainer.fit`
  Summary summary;   // node ids cleared: they mean nothing in another file
  std::vector<std::string> params;
  bool method = false;
};

struct ExportedClass {
  std::string name;
  std::vector<std::string> bases;    // dotted, as this module spells them (`nn.Module`, `.base.Trainer`)
  std::vector<std::string> methods;  // every method it defines
  bool module = false;               // this module's facts know it is an nn.Module
  bool accumulator = false;
  bool batches = false;              // its `__iter__` walks a data loader (Facts::iteratesBatches)
  bool tensor = false;               // a tensor subclass: its instances are tensors, not objects with methods to follow
  uint8_t framework = 0;             // Facts::classFramework: a LightningModule, a Trainer
};

/// The calls of this module to one dotted name that may be another module's function, joined.
struct ExportedCall {
  std::string callee;  // dotted, as this module spells it
  uint8_t grad = 0;    // GradMode joined over the calls
  uint32_t evalPositional = 0;
  std::vector<std::string> evalKeywords;
  bool onTrainingPath = false;
};

struct FileExports {
  std::vector<std::pair<std::string, std::string>> imports;  // local name -> dotted, as spelled
  std::vector<ExportedFunction> functions;  // only those whose summary says more than nothing
  std::vector<ExportedClass> classes;
  std::vector<ExportedCall> calls;
  bool bindsDevice = false, usesGradScaler = false, mentionsCuda = false;
  bool importsTorch = false;  // the module's own torch-family import (ProgramFacts::usesTorch)
  /// A fingerprint of everything above: a file whose exports did not change needs no importer re-read.
  uint64_t hash() const;
};

/// True when a summary says nothing a caller could use (what an unknown function is assumed to do).
bool isEmptySummary(const Summary& s);

/// The exports of a parsed module. `facts` is null for a module that is not PyTorch code: then
/// only its imports and classes are known. `mayBeProject` says whether a dotted name (as this
/// module spells it) may denote a function of the project: only those calls are exported.
FileExports exportsOf(const Module& m, const Facts* facts, const std::function<bool(std::string_view)>& mayBeProject);

}  // namespace oomlint::project
