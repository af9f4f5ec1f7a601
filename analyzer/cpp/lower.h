#pragma once
/// Lowers a Clang AST into the language-neutral program model, so the rules written once for
/// Python apply to LibTorch C++. Only declarations spelled in the main file are lowered.

#include <clang/AST/ASTContext.h>

#include <vector>

#include "model/model.h"

namespace oomlint::cpp {

/// Fills `m` (whose path and source are set) from the top-level declarations the parser produced
/// for this file, in source order (ASTConsumer::HandleTopLevelDecl). Walking the translation unit
/// instead would deserialize every declaration of a precompiled preamble (all of libstdc++ and
/// LibTorch), which cost more than the parse itself.
void lowerTranslationUnit(clang::ASTContext& ctx, const std::vector<const clang::Decl*>& topLevel, Module& m);

/// `torch::nn::functional::softmax` -> `torch.nn.functional.softmax`, with the C++-only spellings
/// mapped to their Python twins (`at::NoGradGuard` -> `torch.no_grad`). "" for non-LibTorch names.
std::string canonicalName(const std::string& qualified);

}  // namespace oomlint::cpp
