#pragma once
/// Naming conventions of PyTorch training code that facts lean on when types are unknown.
/// Each list is deliberately short: a name is evidence only where real code uses it that way.

#include <string>
#include <string_view>

namespace oomlint::names {

std::string lower(std::string_view s);
/// Last component of a dotted path: "self.model" -> "model".
std::string_view lastComponent(std::string_view dotted);
/// `path` is `prefix` or a member below it: "self.model.encoder" extends "self.model".
bool extendsPath(std::string_view path, std::string_view prefix);
/// Splits snake_case and camelCase into lower-case words.
bool hasWord(std::string_view identifier, std::string_view word);

bool looksLikeModule(std::string_view name);     // model, net, encoder, netD, text_encoder ...
bool looksLikeLossFn(std::string_view name);     // criterion, loss_fn, loss_func ...
bool looksLikeOptimizer(std::string_view name);  // optimizer, optim, opt_g, scaler ...
bool looksLikeLoader(std::string_view name);     // train_loader, val_dl, batches ...
bool looksLikeDevice(std::string_view name);     // device, dev, self.device ...
bool looksLikeScheduler(std::string_view name);  // scheduler, lr_scheduler, sched ...
/// Function names that mean evaluation: evaluate, validate, val_epoch, predict, inference, test.
/// With `testsAreEvaluations` (code no test framework names `test_*`: C++), test_model and runTest too.
bool looksLikeEvalFunction(std::string_view name, bool testsAreEvaluations = false);
/// The name starts with an unambiguous evaluation verb (evaluate, validate, predict, test,
/// inference; also after run_/do_), not one that also means "deduce" (`infer_shape`).
bool hasEvalVerbFirst(std::string_view name);

}  // namespace oomlint::names
