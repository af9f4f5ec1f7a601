#pragma once
/// What the rest of the project says about the names one file uses. The facts passes ask it
/// while they build a file's facts; project/ answers from the other files' exported summaries
/// and records every question, so a file is re-analysed (or its cached findings dropped) exactly
/// when an answer it relied on changes. A file checked alone has no view: facts then know only
/// the file itself, as before.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace oomlint {

struct Summary;

/// A function of another module: its summary (file-local node ids cleared) and its parameters,
/// so a call's arguments map onto them.
struct ImportedFunction {
  const Summary* summary = nullptr;
  std::vector<std::string> params;  // every parameter, `self` included for methods
  bool bound = false;               // a method: a call on an instance passes params[0]
};

/// A class of another module.
struct ImportedClass {
  bool module = false;       // inherits nn.Module, in any module of the project
  bool accumulator = false;  // a meter or recorder: a method sums or stores an argument
  bool batches = false;      // its `__iter__` walks a data loader: an instance is a loader
  uint8_t framework = 0;     // a training framework's base class (Lightning, HF Trainer) it derives from
};

/// How the callers in other files call one function of this file, joined over every such call.
struct CallerContext {
  uint8_t grad = 0;            // GradMode at every call site (Unknown when they differ)
  uint32_t evalPositional = 0;            // bit i: positional argument i is a module in eval mode at every call site
  std::vector<std::string> evalKeywords;  // keyword arguments that are, at every call site
  bool onTrainingPath = false; // some call site is on a training path
};

/// Facts about the whole program (the files connected to this one by imports).
struct ProgramFacts {
  bool bindsDevice = false;      // some file calls set_device / set_device_index / passes device_id /
                                 // sets CUDA_VISIBLE_DEVICES
  bool usesGradScaler = false;   // some file makes or uses a GradScaler (or an AMP optimizer owning one)
  bool mentionsCuda = false;     // some file is written for a GPU (Facts::mentionsCuda)
  bool usesTorch = false;        // some other file imports a torch-family package
};

/// One of ProgramFacts' facts, as a bit: a file is analysed again when a fact it read changes,
/// not when one it never asked for does.
enum class ProgramFact : uint8_t { BindsDevice = 1, UsesGradScaler = 2, MentionsCuda = 4, UsesTorch = 8 };

class ProjectView {
 public:
  virtual ~ProjectView() = default;
  /// The project function a dotted name of this file denotes (`utils.evaluate`, `.utils.evaluate`,
  /// `m.evaluate` after `import pkg.utils as m`; `meters.AverageMeter.update` for a method), or null.
  virtual const ImportedFunction* function(std::string_view dotted) const = 0;
  /// The project class a dotted name denotes, or null.
  virtual const ImportedClass* cls(std::string_view dotted) const = 0;
  /// The callers in other files of this file's function `qualified` (`evaluate`, `Trainer.fit`), or null.
  virtual const CallerContext* callers(std::string_view qualified) const = 0;
  /// One fact of the programs holding this file.
  virtual bool programFact(ProgramFact which) const = 0;
};

}  // namespace oomlint
