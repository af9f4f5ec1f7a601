#pragma once
/// Lowers a Clang AST into the language-neutral program model, so the rules written once for
/// Python apply to LibTorch C++. Declarations spelled in the main file are lowered, and after
/// them what their code uses from the project's own headers (Module::firstExternalFunction).

#include <clang/AST/ASTContext.h>

#include <vector>

#include "model/model.h"

namespace oomlint::cpp {

/// Fills `m` (whose path and source are set) from the top-level declarations the parser produced
/// for this file, in source order (ASTConsumer::HandleTopLevelDecl). Walking the translation unit
/// instead would deserialize every declaration of a precompiled preamble (all of libstdc++ and
/// LibTorch), which cost more than the parse itself.
/// `projectRoot` (absolute, no trailing slash): headers below it are the project's own; "" lowers
/// none of them (the file alone).
void lowerTranslationUnit(clang::ASTContext& ctx, const std::vector<const clang::Decl*>& topLevel, Module& m,
                          const std::string& projectRoot);

/// `torch::nn::functional::softmax` -> `torch.nn.functional.softmax`, with the C++-only spellings
/// mapped to their Python twins (`at::NoGradGuard` -> `torch.no_grad`). "" for non-LibTorch names.
std::string canonicalName(const std::string& qualified);

}  // namespace oomlint::cpp
