// A custom dataset feeding a training loop through LibTorch's data loader, with a checkpoint
// restored at start. Two mistakes are left in on purpose.
#include <torch/torch.h>

#include <string>
#include <vector>

class PairsDataset : public torch::data::datasets::Dataset<PairsDataset> {
 public:
  PairsDataset(torch::Tensor inputs, torch::Tensor labels) : inputs_(std::move(inputs)), labels_(std::move(labels)) {}
  torch::data::Example<> get(size_t index) override { return {inputs_[index], labels_[index]}; }
  torch::optional<size_t> size() const override { return inputs_.size(0); }

 private:
  torch::Tensor inputs_, labels_;
};

std::vector<double> fit(torch::nn::Sequential& model, const std::string& checkpoint, torch::Tensor inputs,
                        torch::Tensor labels, int64_t epochs) {
  torch::load(model, checkpoint);  // mistake 1: no device, tensors go back where they were saved
  torch::Device device(torch::kCUDA);
  model->to(device);
  auto dataset = PairsDataset(inputs, labels).map(torch::data::transforms::Stack<>());
  auto loader = torch::data::make_data_loader(std::move(dataset), torch::data::DataLoaderOptions(32).workers(2));
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));
  torch::nn::CrossEntropyLoss criterion;
  std::vector<double> history;
  for (int64_t epoch = 0; epoch < epochs; ++epoch) {
    double epoch_loss = 0;
    for (auto& batch : *loader) {
      auto x = batch.data.to(device);
      auto y = batch.target.to(device);
      optimizer.zero_grad();
      auto loss = criterion(model->forward(x), y);
      loss.backward();
      optimizer.step();
      epoch_loss += loss.item<double>();
      auto mask = torch::ones({x.size(0)}).to(device);  // mistake 2: built on the host, then copied
      (void)mask;
    }
    history.push_back(epoch_loss);
  }
  return history;
}
