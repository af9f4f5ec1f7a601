#pragma once
/// What oomlint knows of the PyTorch API (and of the libraries training code builds on): word
/// lists and canonical-name tests the facts passes share. Canonical names are dotted and resolved
/// through imports (`torch.nn.functional.softmax`), the same for Python and C++.

#include <string>
#include <string_view>

#include "model/model.h"

namespace oomlint::torch_api {

bool startsWith(std::string_view s, std::string_view p);
bool endsWith(std::string_view s, std::string_view p);
bool isUpperInitial(std::string_view s);

bool isGradDisablingCtx(const std::string& canonical);   // no_grad, inference_mode
bool isGradEnablingCtx(const std::string& canonical);    // enable_grad
bool isSetGradEnabled(const std::string& canonical);     // set_grad_enabled

/// Tensor methods whose result never carries autograd history.
bool isNonDifferentiableMethod(std::string_view method);
/// Methods of an nn.Module, besides `forward`, that run its computation (`forward_features`,
/// `encode_image`, `predict_step` ...): a call of one on a module is a forward.
bool runsModuleForward(std::string_view method);
/// Methods whose result is not a tensor on the device at all.
bool leavesDevice(std::string_view method);
/// Tensor attributes that are not tensors (`shape`, `dtype` ...).
bool isNonTensorAttribute(std::string_view attr);
/// Builtins whose result is a Python value (`float`, `len`, `print` ...).
bool isStrippingBuiltin(std::string_view callee);
/// `torch.zeros`, `torch.randn_like` ... (last component of the canonical name).
bool isTensorFactory(std::string_view last);
/// A call of `canonical` returns a tensor made from its tensor arguments, carrying their autograd
/// history when autograd is on: a differentiable `torch.` function (`torch.mean`, `F.relu`; not a
/// factory, a class, `torch.cuda.*` or a non-differentiable op such as `torch.argmax`), or one of
/// Horovod's collectives, which are autograd functions (`hvd.allreduce(loss)`).
bool passesHistory(const std::string& canonical);
/// `torch.nn.functional.cross_entropy`, `*_loss` (last component).
bool isLossFunctionName(std::string_view last);

/// Module paths whose classes are nn.Module subclasses of note (torch.nn.Linear, torchvision models ...).
bool isModuleClassCanonical(const std::string& canonical);
/// `torch.nn.ModuleList`, `torch.nn.ModuleDict`: containers whose items are modules.
bool isModuleCollectionCanonical(const std::string& canonical);
bool isLossModuleCanonical(const std::string& canonical);
bool isOptimizerCanonical(const std::string& canonical);
bool isSchedulerCanonical(const std::string& canonical);
bool isGradScalerCanonical(const std::string& canonical);
bool isDataLoaderCanonical(const std::string& canonical);
/// Wrappers that return the module they are given: DDP, DataParallel, FSDP, torch.compile.
bool isModuleWrapperCanonical(const std::string& canonical);
/// Hugging Face classes that `from_pretrained` builds a tokenizer/processor (not a module) from.
bool isPreprocessorClassName(std::string_view lastComponent);
/// Classes whose `from_pretrained` builds a configuration, not a module.
bool isConfigClassName(std::string_view lastComponent);

/// Unwraps `enumerate(x)`, `tqdm(x)`, `zip(x, y)`, `iter(x)` to the iterated value.
NodeId unwrapIterable(const Module& m, NodeId e);

/// `for x in model.parameters()`, `accelerator.trackers`, `os.listdir(d)`: a loop over things
/// that are neither batches nor steps.
bool iteratesBookkeeping(const Module& m, NodeId iterable);

}  // namespace oomlint::torch_api
