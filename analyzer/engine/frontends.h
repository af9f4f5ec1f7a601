#pragma once
/// The one place that decides how a document is read: which front end (by the editor's
/// languageId when there is one, else by extension), the NUL-byte test for Python, and the
/// torch/ATen/c10 pre-filter that keeps Clang out of C++ files with nothing to find. The engine,
/// `--fix` / `--add-noqa` and the LSP server all go through it, so they cannot drift apart.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/model.h"

namespace oomlint {

enum class DocumentLanguage : uint8_t { Python, Cpp, Unsupported };

/// The language a document is read as: `languageId` ("python", "cpp", "cuda", "cuda-cpp") wins
/// when given, else the path's extension (`.py .pyi` / `.cpp .cc .cxx .h .hpp .hh .cu .cuh`); a
/// name without an extension is Python, any other extension is Unsupported.
DocumentLanguage languageOf(const std::string& path, std::string_view languageId = {});

struct ParsedDocument {
  std::unique_ptr<Module> module;  // null when the document is not analysed
  Lang lang = Lang::Python;
  bool nulBytes = false;           // Python text with NUL bytes: not source code
  bool nothingToFind = false;      // C++ that never names torch, ATen or c10: not parsed at all
  std::string skippedReason;       // the C++ front end is not installed: a note, the file is skipped
  std::string parseFailure;        // Clang could not read the file with its flags: an error (OOM000)
  std::string source;              // the text, when no module holds it
};

/// Parses a document with the front end its language calls for.
ParsedDocument parseDocument(const std::string& path, std::string source, DocumentLanguage language);

/// A notebook's module (Python): each code cell, starting at the offsets `cellStarts`, parsed on
/// its own, large notebooks on idle cores. The same model as parseDocument.
ParsedDocument parseCells(const std::string& path, std::string source, const std::vector<uint32_t>& cellStarts);

/// The text parses without a syntax error: what `--fix` checks before and after its edits.
bool parsesCleanly(const std::string& path, const std::string& source, DocumentLanguage language);

}  // namespace oomlint
