// The prelude oomlint precompiles once for files analysed with the bundled LibTorch declarations:
// the stand-in <torch/torch.h>, the standard headers training code includes, and a warm-up.
//
// The warm-up is never compiled or run, and never lowered (only the analysed file's own
// declarations are). It exists because Clang instantiates a class template the first time a
// translation unit needs it complete, and most of a small LibTorch file's parse went into the same
// instantiations every such file needs: std::shared_ptr of each module, the data loader's
// std::unique_ptr, vector iterators, std::optional's converting constructors for the usual
// argument types. Used here, they are instantiated while the prelude is precompiled and stored in
// it; a later parse finds them there instead of redoing them. Anything it misses is instantiated
// as before, so a gap costs time, never a result.
#include <torch/torch.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <numeric>
#include <random>
#include <sstream>
#include <unordered_map>

namespace oomlint_prelude_warm_up {

/// Every module holder the way models use it: declared empty, built from its options, copied,
/// registered, reached through `->`, called.
template <class Holder, class... Args>
void useHolder(torch::nn::Module& owner, Holder& member, Args... args) {
  Holder built(args...);
  Holder copy = built;
  member = owner.register_module("m", built);
  member = owner.register_module("m", copy.ptr());
  (void)member.get();
  (void)member->is_training();
  (void)member.is_empty();
}

struct Net : torch::nn::Module {
  Net() {
    useHolder(*this, linear, 1, 1);
    useHolder(*this, linear, torch::nn::LinearOptions(1, 1).bias(false));
    useHolder(*this, conv, torch::nn::Conv2dOptions(1, 1, 3).stride(1).padding(1));
    useHolder(*this, embedding, 1, 1);
    useHolder(*this, dropout, 0.5);
    useHolder(*this, layerNorm, std::vector<int64_t>{1});
    useHolder(*this, batchNorm1d, 1);
    useHolder(*this, batchNorm2d, 1);
    useHolder(*this, lstm, torch::nn::LSTMOptions(1, 1).num_layers(1).batch_first(true));
    useHolder(*this, gru, torch::nn::GRUOptions(1, 1).num_layers(1).batch_first(true));
    useHolder(*this, attention, 1, 1);
    useHolder(*this, crossEntropy);
    useHolder(*this, nllLoss);
    useHolder(*this, mseLoss);
    useHolder(*this, bceLoss);
    sequential = torch::nn::Sequential(torch::nn::Linear(1, 1), torch::nn::ReLU(), torch::nn::GELU(), torch::nn::Dropout(0.5));
    sequential->push_back(torch::nn::Linear(1, 1));
    sequential->push_back(torch::nn::Functional(torch::relu));
    sequential = register_module("sequential", sequential);
  }

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(linear->forward(x));
    x = linear(x);
    x = conv->forward(x);
    x = embedding->forward(x);
    x = dropout->forward(x);
    x = layerNorm->forward(x);
    x = batchNorm1d->forward(x) + batchNorm2d->forward(x);
    auto [output, state] = lstm->forward(x);
    auto [h, c] = state;
    auto gruOut = gru->forward(output, h);
    x = std::get<0>(gruOut) + std::get<1>(gruOut) + c;
    auto attended = attention->forward(x, x, x);
    x = std::get<0>(attended);
    x = crossEntropy(x, x) + nllLoss(x, x) + mseLoss(x, x) + bceLoss(x, x);
    return sequential->forward(x);
  }

  torch::nn::Linear linear{nullptr};
  torch::nn::Conv2d conv{nullptr};
  torch::nn::Embedding embedding{nullptr};
  torch::nn::Dropout dropout{nullptr};
  torch::nn::LayerNorm layerNorm{nullptr};
  torch::nn::BatchNorm1d batchNorm1d{nullptr};
  torch::nn::BatchNorm2d batchNorm2d{nullptr};
  torch::nn::LSTM lstm{nullptr};
  torch::nn::GRU gru{nullptr};
  torch::nn::MultiheadAttention attention{nullptr};
  torch::nn::CrossEntropyLoss crossEntropy{nullptr};
  torch::nn::NLLLoss nllLoss{nullptr};
  torch::nn::MSELoss mseLoss{nullptr};
  torch::nn::BCEWithLogitsLoss bceLoss{nullptr};
  torch::nn::Sequential sequential{nullptr};
};

/// A training and an evaluation loop over the usual data pipeline, optimizers, devices and output.
inline double trainAndEvaluate(const std::string& root) {
  torch::manual_seed(1);
  torch::Device device(torch::cuda::is_available() ? torch::kCUDA : torch::kCPU);
  torch::Device named("cuda:0");
  auto model = std::make_shared<Net>();
  model->to(device);
  model->to(torch::kCUDA);
  model->train();
  torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9).weight_decay(0));
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-3).betas({0.9, 0.999}));
  torch::optim::AdamW adamw(model->parameters(), torch::optim::AdamWOptions(1e-3).weight_decay(0.01));
  auto dataset = torch::data::datasets::MNIST(root)
                     .map(torch::data::transforms::Normalize<>(0.1307, 0.3081))
                     .map(torch::data::transforms::Stack<>());
  auto loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(std::move(dataset), 64);
  auto shuffled = torch::data::make_data_loader(
      torch::data::datasets::MNIST(root, torch::data::datasets::MNIST::Mode::kTest).map(torch::data::transforms::Stack<>()),
      torch::data::DataLoaderOptions().batch_size(64).workers(2).drop_last(true));
  auto started = std::chrono::steady_clock::now();
  double total = 0;
  int64_t correct = 0;
  size_t step = 0;
  for (auto& batch : *loader) {
    auto data = batch.data.to(device), target = batch.target.to(device, true);
    sgd.zero_grad();
    adam.zero_grad(true);
    auto output = model->forward(data);
    auto loss = torch::nll_loss(output, target);
    loss.backward();
    loss.backward({}, true);
    torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
    sgd.step();
    adamw.step();
    total += loss.item<double>() + loss.template item<float>();
    correct += output.argmax(1).eq(target).sum().item<int64_t>();
    if (step++ % 100 == 0) std::printf("%zu %.4f\n", step, loss.item<double>());
  }
  {
    torch::NoGradGuard noGrad;
    model->eval();
    for (const auto& batch : *shuffled) {
      auto output = model->forward(batch.data.to(device));
      total += torch::nn::functional::cross_entropy(output, batch.target).item<double>();
      auto [values, indices] = output.max(1);
      correct += indices.eq(batch.target).sum().item<int64_t>();
    }
  }
  std::vector<torch::Tensor> kept;
  kept.push_back(torch::zeros({1}, device));
  kept.emplace_back(torch::ones({1, 2}, torch::kCUDA));
  for (auto& p : model->parameters()) kept.push_back(p.grad());
  for (const auto& p : model->named_parameters()) std::cout << p.key() << " " << p.value().sizes() << std::endl;
  std::vector<std::pair<torch::Tensor, torch::Tensor>> pairs{{kept[0], kept[1]}};
  for (auto& [a, b] : pairs) total += (a + b).sum().item<double>();
  auto stacked = torch::stack(kept);
  auto concatenated = torch::cat(kept, 0);
  for (const auto& chunk : stacked.chunk(2)) total += chunk.numel();
  std::vector<int64_t> shape{1, 2};
  std::vector<double> history{total};
  std::vector<float> values{1.0f};
  std::vector<std::string> names{"a"};
  std::unordered_map<std::string, torch::Tensor> byName{{"a", concatenated}};
  std::map<std::string, double> metrics{{"loss", total}};
  std::function<torch::Tensor(torch::Tensor)> transform = torch::relu;
  std::cout << std::fixed << std::setprecision(4) << total << " " << concatenated << std::endl;
  auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  torch::save(model, "model.pt");
  return total / static_cast<double>(step) + static_cast<double>(correct + elapsed.count()) +
         static_cast<double>(shape.size() + history.size() + values.size() + names.size() + byName.size() + metrics.size());
}

}  // namespace oomlint_prelude_warm_up
