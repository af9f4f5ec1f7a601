#pragma once
/// Lowers a Clang AST into the language-neutral program model, so the rules written once for
/// Python apply to LibTorch C++. Only declarations spelled in the main file are lowered.

#include <clang/AST/ASTContext.h>

#include "model/model.h"

namespace oomlint::cpp {

/// Fills `m` (whose path and source are set) from the translation unit of `ctx`.
void lowerTranslationUnit(clang::ASTContext& ctx, Module& m);

/// `torch::nn::functional::softmax` -> `torch.nn.functional.softmax`, with the C++-only spellings
/// mapped to their Python twins (`at::NoGradGuard` -> `torch.no_grad`). "" for non-LibTorch names.
std::string canonicalName(const std::string& qualified);

}  // namespace oomlint::cpp
