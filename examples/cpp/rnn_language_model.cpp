// A word-level LSTM language model trained with truncated backpropagation through time.
// One mistake is left in on purpose: the hidden state is carried into the next chunk with its graph.
#include <torch/torch.h>

#include <tuple>
#include <vector>

struct LanguageModelImpl : torch::nn::Module {
  LanguageModelImpl(int64_t vocab, int64_t dim, int64_t layers)
      : embed(register_module("embed", torch::nn::Embedding(vocab, dim))),
        lstm(register_module("lstm", torch::nn::LSTM(torch::nn::LSTMOptions(dim, dim).num_layers(layers)))),
        head(register_module("head", torch::nn::Linear(dim, vocab))) {}

  std::tuple<torch::Tensor, std::tuple<torch::Tensor, torch::Tensor>> forward(
      const torch::Tensor& tokens, std::tuple<torch::Tensor, torch::Tensor> state) {
    auto [out, next] = lstm->forward(embed->forward(tokens), state);
    return {head->forward(out), next};
  }

  torch::nn::Embedding embed;
  torch::nn::LSTM lstm;
  torch::nn::Linear head;
};
TORCH_MODULE(LanguageModel);

double train_epoch(LanguageModel& model, torch::optim::Adam& optimizer, const std::vector<torch::Tensor>& chunks,
                   const std::vector<torch::Tensor>& targets, int64_t layers, int64_t batch, int64_t dim) {
  model->train();
  auto state = std::make_tuple(torch::zeros({layers, batch, dim}), torch::zeros({layers, batch, dim}));
  double total = 0;
  for (size_t i = 0; i < chunks.size(); ++i) {
    optimizer.zero_grad();
    auto result = model->forward(chunks[i], state);
    auto logits = std::get<0>(result);
    state = std::get<1>(result);  // mistake: no detach, so backward walks every earlier chunk
    auto loss = torch::nn::functional::cross_entropy(logits.view({-1, logits.size(-1)}), targets[i].view({-1}));
    loss.backward();
    torch::nn::utils::clip_grad_norm_(model->parameters(), 0.25);
    optimizer.step();
    total += loss.item<double>();
  }
  return total / static_cast<double>(chunks.size());
}

double evaluate(LanguageModel& model, const std::vector<torch::Tensor>& chunks, const std::vector<torch::Tensor>& targets,
                int64_t layers, int64_t batch, int64_t dim) {
  torch::NoGradGuard no_grad;
  model->eval();
  auto state = std::make_tuple(torch::zeros({layers, batch, dim}), torch::zeros({layers, batch, dim}));
  double total = 0;
  for (size_t i = 0; i < chunks.size(); ++i) {
    auto result = model->forward(chunks[i], state);
    state = std::get<1>(result);
    auto logits = std::get<0>(result);
    total += torch::nn::functional::cross_entropy(logits.view({-1, logits.size(-1)}), targets[i].view({-1})).item<double>();
  }
  return total / static_cast<double>(chunks.size());
}
