#include "facts/torch_api.h"

#include <algorithm>
#include <array>

#include "facts/names.h"

namespace oomlint::torch_api {
namespace {

template <size_t N>
bool in(std::string_view s, const std::array<std::string_view, N>& set) {
  return std::find(set.begin(), set.end(), s) != set.end();
}

}  // namespace

bool startsWith(std::string_view s, std::string_view p) { return s.size() >= p.size() && s.substr(0, p.size()) == p; }
bool endsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}
bool isUpperInitial(std::string_view s) { return !s.empty() && s[0] >= 'A' && s[0] <= 'Z'; }

bool isGradDisablingCtx(const std::string& c) {
  return c == "torch.no_grad" || c == "torch.inference_mode" || c == "torch.autograd.no_grad" ||
         c == "torch.autograd.grad_mode.no_grad" || c == "torch.autograd.inference_mode" ||
         c == "torch.autograd.grad_mode.inference_mode";
}
bool isGradEnablingCtx(const std::string& c) {
  return c == "torch.enable_grad" || c == "torch.autograd.enable_grad" || c == "torch.autograd.grad_mode.enable_grad";
}
bool isSetGradEnabled(const std::string& c) {
  return c == "torch.set_grad_enabled" || c == "torch.autograd.set_grad_enabled" ||
         c == "torch.autograd.grad_mode.set_grad_enabled";
}

bool isNonDifferentiableMethod(std::string_view m) {
  static constexpr std::array<std::string_view, 36> k = {
      "item", "tolist", "numpy", "detach", "detach_", "argmax", "argmin", "argsort", "eq", "ne",
      "lt", "gt", "le", "ge", "isnan", "isinf", "isfinite", "nonzero", "bool", "long", "int",
      "size", "dim", "numel", "bincount", "element_size", "generate", "data_ptr", "is_tensor",
      "is_floating_point", "is_nonzero", "equal", "allclose", "isclose", "count_nonzero", "searchsorted"};
  return in(m, k);
}
bool runsModuleForward(std::string_view m) {
  // Well-known entry points that run a module's computation besides `forward`: timm's
  // forward_features / forward_head, CLIP's and Hugging Face's encoders, fairseq's
  // extract_features, Lightning's predict_step. Not `encode` / `decode` / `generate`: tokenizers
  // have them, and Whisper's and Hugging Face's return objects built under their own no_grad.
  static constexpr std::array<std::string_view, 10> k = {
      "forward_features", "forward_head", "encode_image", "encode_text", "get_image_features", "get_text_features",
      "extract_features", "predict_step", "forward_encoder", "forward_decoder"};
  return in(m, k);
}
bool leavesDevice(std::string_view m) {
  return m == "item" || m == "tolist" || m == "numpy" || m == "cpu" || m == "size" || m == "dim" ||
         m == "numel" || m == "element_size" || m == "data_ptr";
}
bool isNonTensorAttribute(std::string_view a) {
  static constexpr std::array<std::string_view, 10> k = {
      "shape", "dtype", "device", "ndim", "is_cuda", "requires_grad", "grad_fn", "is_leaf", "layout", "names"};
  return in(a, k);
}
bool isStrippingBuiltin(std::string_view f) {
  static constexpr std::array<std::string_view, 12> k = {
      "float", "int", "bool", "len", "str", "repr", "round", "print", "isinstance", "format", "abs", "hash"};
  return in(f, k);
}
bool passesHistory(const std::string& canonical) {
  static constexpr std::array<std::string_view, 6> kHorovod = {
      "horovod.torch.allreduce", "horovod.torch.allgather", "horovod.torch.broadcast",
      "horovod.torch.alltoall", "horovod.torch.reducescatter", "horovod.torch.grouped_allreduce"};
  if (std::find(kHorovod.begin(), kHorovod.end(), canonical) != kHorovod.end()) return true;
  if (!startsWith(canonical, "torch.") || startsWith(canonical, "torch.cuda.") || canonical == "torch.autograd.grad") return false;
  std::string_view last = names::lastComponent(canonical);
  return !isTensorFactory(last) && !isNonDifferentiableMethod(last) && !isUpperInitial(last);
}

bool isTensorFactory(std::string_view last) {
  static constexpr std::array<std::string_view, 22> k = {
      "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange", "linspace",
      "tensor", "as_tensor", "from_numpy", "zeros_like", "ones_like", "empty_like", "full_like",
      "rand_like", "randn_like", "eye", "logspace", "normal"};
  return in(last, k);
}
bool isLossFunctionName(std::string_view last) {
  if (endsWith(last, "_loss") && last != "get_loss") return true;
  static constexpr std::array<std::string_view, 8> k = {
      "cross_entropy", "binary_cross_entropy", "binary_cross_entropy_with_logits", "nll_loss",
      "kl_div", "mse_loss", "l1_loss", "smooth_l1_loss"};
  return in(last, k);
}

bool isModuleCollectionCanonical(const std::string& c) {
  return c == "torch.nn.ModuleList" || c == "torch.nn.ModuleDict" || c == "torch.nn.modules.container.ModuleList" ||
         c == "torch.nn.modules.container.ModuleDict";
}
bool isLossModuleCanonical(const std::string& c) { return startsWith(c, "torch.nn.") && endsWith(c, "Loss"); }

bool isModuleClassCanonical(const std::string& c) {
  std::string_view last = names::lastComponent(c);
  if (startsWith(c, "torch.nn.") && isUpperInitial(last)) {
    if (endsWith(last, "Loss") || last == "Parameter" || last == "ParameterList" || last == "ParameterDict") return false;
    if (startsWith(c, "torch.nn.utils.") || startsWith(c, "torch.nn.parallel.") || startsWith(c, "torch.nn.attention.")) return false;
    if (isModuleCollectionCanonical(c)) return false;
    return true;
  }
  if (startsWith(c, "torchvision.models.") && !isUpperInitial(last) && last != "get_weight" && !endsWith(last, "_weights"))
    return true;
  return c == "timm.create_model" || c == "torch.hub.load";
}
bool isOptimizerCanonical(const std::string& c) {
  if (!startsWith(c, "torch.optim.") || c.find("lr_scheduler") != std::string::npos || c.find("swa_utils") != std::string::npos)
    return false;
  return isUpperInitial(names::lastComponent(c));
}
bool isSchedulerCanonical(const std::string& c) {
  if (c.find("lr_scheduler") != std::string::npos) return true;
  std::string_view last = names::lastComponent(c);
  if (endsWith(last, "Scheduler") || endsWith(last, "LR")) return isUpperInitial(last);
  return startsWith(c, "transformers.") && (startsWith(last, "get_") && last.find("schedule") != std::string_view::npos);
}
bool isGradScalerCanonical(const std::string& c) { return endsWith(c, "GradScaler") || endsWith(c, "ShardedGradScaler"); }
bool isDataLoaderCanonical(const std::string& c) {
  return c == "torch.utils.data.DataLoader" || c == "torch.utils.data.dataloader.DataLoader" || endsWith(c, ".DataLoader");
}
bool isModuleWrapperCanonical(const std::string& c) {
  return c == "torch.compile" || endsWith(c, "DistributedDataParallel") || endsWith(c, "DataParallel") ||
         endsWith(c, "FullyShardedDataParallel") || c == "torch.jit.script" || c == "torch.jit.trace";
}
bool isPreprocessorClassName(std::string_view last) {
  for (std::string_view w : {"Tokenizer", "Processor", "FeatureExtractor", "ImageProcessor", "Config", "Vocab"})
    if (last.find(w) != std::string_view::npos) return true;
  return false;
}
bool isConfigClassName(std::string_view last) { return endsWith(last, "Config") || endsWith(last, "Configuration"); }

NodeId unwrapIterable(const Module& m, NodeId e) {
  for (int guard = 0; guard < 8 && e != kNone; ++guard) {
    const Expr& x = m.expr(e);
    if (x.kind != ExprKind::Call) return e;
    std::string_view f = calleeName(m, e);
    if (f == "enumerate" || f == "tqdm" || f == "zip" || f == "iter" || f == "islice" || f == "track" ||
        f == "progress_bar" || f == "pbar" || f == "auto" || f == "trange" || f == "cycle" || f == "repeat") {
      NodeId first = positionalArg(m, e, 0);
      if (first == kNone) return e;
      e = first;
      continue;
    }
    return e;
  }
  return e;
}

bool iteratesBookkeeping(const Module& m, NodeId iterable) {
  NodeId it = unwrapIterable(m, iterable);
  if (it == kNone) return false;
  const Expr& x = m.expr(it);
  if (x.kind == ExprKind::Call) {
    std::string_view meth = methodName(m, it);
    static constexpr std::array<std::string_view, 12> kModuleWalks = {
        "parameters", "named_parameters", "modules", "named_modules", "children", "named_children",
        "buffers", "named_buffers", "state_dict", "glob", "rglob", "iterdir"};
    if (in(meth, kModuleWalks)) return true;
    if ((meth == "items" || meth == "keys" || meth == "values") && receiverOf(m, it) != kNone) {
      NodeId r = receiverOf(m, it);
      if (m.expr(r).kind == ExprKind::Call && methodName(m, r) == "state_dict") return true;
    }
    const std::string& c = m.canonical(it);
    return c == "os.listdir" || c == "os.walk" || c == "os.scandir" || c == "glob.glob" || c == "glob.iglob" ||
           calleeName(m, it) == "open";
  }
  if (x.kind == ExprKind::Attribute)
    return x.text == "trackers" || x.text == "callbacks" || x.text == "param_groups" || x.text == "hooks" ||
           x.text == "loggers";
  return false;
}

}  // namespace oomlint::torch_api
