#include "facts/names.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <vector>

namespace oomlint::names {

std::string lower(std::string_view s) {
  // ASCII only, without std::tolower's per-character locale lookup: identifiers are compared
  // against ASCII word lists, and this runs for most calls of every file.
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string_view lastComponent(std::string_view dotted) {
  size_t dot = dotted.rfind('.');
  return dot == std::string_view::npos ? dotted : dotted.substr(dot + 1);
}

bool extendsPath(std::string_view path, std::string_view prefix) {
  return path == prefix || (path.size() > prefix.size() && path.substr(0, prefix.size()) == prefix && path[prefix.size()] == '.');
}

namespace {

std::vector<std::string> words(std::string_view id) {
  std::vector<std::string> out;
  std::string cur;
  for (size_t i = 0; i < id.size(); ++i) {
    char c = id[i];
    if (c == '_' || std::isdigit(static_cast<unsigned char>(c))) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
      continue;
    }
    bool upper = std::isupper(static_cast<unsigned char>(c)) != 0;
    if (upper && !cur.empty() && !std::isupper(static_cast<unsigned char>(id[i - 1]))) {
      out.push_back(cur);
      cur.clear();
    }
    cur += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
bool startsWith(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix;
}

template <size_t N>
bool in(std::string_view s, const std::array<std::string_view, N>& set) {
  return std::find(set.begin(), set.end(), s) != set.end();
}

}  // namespace

bool hasWord(std::string_view identifier, std::string_view word) {
  for (const std::string& w : words(identifier))
    if (w == word) return true;
  return false;
}

bool looksLikeModule(std::string_view name) {
  std::string n = lower(lastComponent(name));
  static constexpr std::array<std::string_view, 40> kExact = {
      "rnn", "lstm", "gru", "cell", "model", "net", "network", "module", "encoder", "decoder", "backbone", "generator",
      "discriminator", "netg", "netd", "classifier", "teacher", "student", "policy", "actor",
      "critic", "unet", "vae", "transformer", "autoencoder", "detector", "lm", "llm",
      "ddp_model", "raw_model", "base_model", "model_ema", "ema_model", "text_encoder",
      "image_encoder", "vision_model", "language_model", "q_network", "target_network", "head"};
  if (in(n, kExact)) return true;
  for (std::string_view suffix : {"_model", "_net", "_network", "_encoder", "_decoder", "_backbone", "_rnn", "_lstm", "_gru", "_cell"})
    if (endsWith(n, suffix)) return true;
  // "mymodel", "resnet", "densenet"; but not "model_name", "subnet_cfg".
  return (endsWith(n, "model") && n.size() <= 12) || (endsWith(n, "net") && n.size() <= 12 && n != "magnet");
}

bool looksLikeLossFn(std::string_view name) {
  std::string n = lower(lastComponent(name));
  static constexpr std::array<std::string_view, 9> kExact = {
      "criterion", "loss_fn", "loss_func", "lossfn", "loss_function", "criteria", "loss_fcn",
      "compute_loss", "loss_module"};
  if (in(n, kExact)) return true;
  return startsWith(n, "criterion") || endsWith(n, "_criterion") || endsWith(n, "_loss_fn") ||
         endsWith(n, "_loss_func");
}

bool looksLikeOptimizer(std::string_view name) {
  std::string n = lower(lastComponent(name));
  if (n.find("sched") != std::string::npos || n.find("lr") != std::string::npos) return false;
  static constexpr std::array<std::string_view, 8> kExact = {
      "optimizer", "optim", "opt", "optimizers", "scaler", "grad_scaler", "optimiser", "opts"};
  if (in(n, kExact)) return true;
  for (std::string_view suffix : {"_optimizer", "_optim", "_opt", "_scaler", "_optimiser"})
    if (endsWith(n, suffix)) return true;
  return startsWith(n, "optimizer_") || startsWith(n, "opt_") || startsWith(n, "optim_");
}

bool looksLikeLoader(std::string_view name) {
  std::string n = lower(lastComponent(name));
  if (n.find("loader") != std::string::npos) return true;
  if (n == "dl" || endsWith(n, "_dl") || startsWith(n, "dl_")) return true;
  return n == "batches" || endsWith(n, "_batches") || n == "dataset" || endsWith(n, "_dataset") ||
         endsWith(n, "_ds") || n == "data_iter" || endsWith(n, "_iter") || n == "micro_batches";
}

bool looksLikeDevice(std::string_view name) {
  std::string n = lower(lastComponent(name));
  return n == "device" || n == "dev" || n == "cuda_device" || n == "gpu" || endsWith(n, "_device");
}

bool looksLikeScheduler(std::string_view name) {
  std::string n = lower(lastComponent(name));
  return n.find("scheduler") != std::string::npos || n == "sched" || endsWith(n, "_sched") || startsWith(n, "sched_") ||
         n == "lr_sched";
}

bool hasEvalVerbFirst(std::string_view name) {
  static constexpr std::array<std::string_view, 12> kStrong = {
      "eval", "evaluate", "evaluation", "val", "valid", "validate", "validation", "predict", "prediction", "inference", "test",
      "testing"};
  std::vector<std::string> w = words(name);
  if (w.empty()) return false;
  size_t i = (w.size() >= 2 && (w[0] == "run" || w[0] == "do" || w[0] == "perform")) ? 1 : 0;
  return in(w[i], kStrong);
}

bool looksLikeEvalFunction(std::string_view name, bool testsAreEvaluations) {
  // Every word below contains one of these: most names are ruled out without splitting them.
  std::string low = lower(name);
  if (low.find("val") == std::string::npos && low.find("test") == std::string::npos && low.find("pred") == std::string::npos &&
      low.find("infer") == std::string::npos)
    return false;
  static constexpr std::array<std::string_view, 14> kVerbs = {
      "eval", "evaluate", "evaluation", "evaluating", "val", "valid", "validate", "validation",
      "validating", "predict", "prediction", "predictions", "infer", "inference"};
  std::string n = lower(name);
  while (!n.empty() && n[0] == '_') n.erase(0, 1);
  // "test" is an evaluation loop only when the function is literally named for it: test_* are
  // pytest/unittest tests, and helpers with "test" in their names are test utilities.
  if (n == "test" || n == "test_epoch" || n == "test_one_epoch" || n == "test_loop" || n == "testing") return true;
  std::vector<std::string> w = words(name);
  // Where no test framework names its tests so (C++: `test_model(net, loader)`, `runTest`),
  // "test" leads like the other verbs.
  if (testsAreEvaluations && !w.empty() && (w.front() == "test" || (w.size() >= 2 && (w.front() == "run" || w.front() == "do") && w[1] == "test")) &&
      std::find(w.begin(), w.end(), "step") == w.end())
    return true;
  // Per-batch hooks of training frameworks (`validation_step`, `valid_step_with_inference`,
  // `test_step_end`): the framework calls them and chooses the grad mode, usually no_grad.
  if (std::find(w.begin(), w.end(), "step") != w.end())
    return false;
  if (w.empty()) return false;
  if (in(w.front(), kVerbs)) return true;  // evaluate_model, val_epoch, predict_batch, inference_loop
  static constexpr std::array<std::string_view, 5> kLeads = {"run", "do", "start", "perform", "compute"};
  if (w.size() >= 2 && in(w.front(), kLeads) && in(w[1], kVerbs)) return true;  // run_validation, do_eval
  // model_eval, batch_inference; but not get_val / max_val.
  return w.size() >= 2 && in(w.back(), kVerbs) && w.back() != "val" && w.back() != "valid";
}

}  // namespace oomlint::names
