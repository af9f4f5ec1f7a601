// A LibTorch MNIST classifier with a training loop and an evaluation loop, in the style of
// pytorch/examples' cpp/mnist. Two memory mistakes are left in on purpose; oomlint finds them.
#include <torch/torch.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

struct NetImpl : torch::nn::Module {
  NetImpl()
      : conv1(register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 10, 5)))),
        conv2(register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(10, 20, 5)))),
        fc1(register_module("fc1", torch::nn::Linear(320, 50))),
        fc2(register_module("fc2", torch::nn::Linear(50, 10))) {}

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(torch::max_pool2d(conv1->forward(x), 2));
    x = torch::relu(torch::max_pool2d(conv2->forward(x), 2));
    x = x.view({-1, 320});
    x = torch::relu(fc1->forward(x));
    x = torch::dropout(x, 0.5, is_training());
    return torch::log_softmax(fc2->forward(x), 1);
  }

  torch::nn::Conv2d conv1, conv2;
  torch::nn::Linear fc1, fc2;
};
TORCH_MODULE(Net);

template <typename DataLoader>
void train(size_t epoch, Net& model, torch::Device device, DataLoader& data_loader, torch::optim::Optimizer& optimizer) {
  model->train();
  torch::Tensor epoch_loss = torch::zeros({1}, device);
  size_t batch_idx = 0;
  for (auto& batch : data_loader) {
    auto data = batch.data.to(device), targets = batch.target.to(device);
    optimizer.zero_grad();
    auto output = model->forward(data);
    auto loss = torch::nll_loss(output, targets);
    loss.backward();
    optimizer.step();
    epoch_loss += loss;  // mistake 1: the running total keeps every batch's graph alive
    if (batch_idx++ % 100 == 0) std::printf("epoch %zu batch %zu loss %.4f\n", epoch, batch_idx, loss.template item<float>());
  }
  std::cout << "epoch " << epoch << " total loss " << epoch_loss << std::endl;
}

template <typename DataLoader>
double test(Net& model, torch::Device device, DataLoader& data_loader, size_t dataset_size) {
  model->eval();
  double test_loss = 0;
  int64_t correct = 0;
  for (const auto& batch : data_loader) {
    auto data = batch.data.to(device), targets = batch.target.to(device);
    auto output = model->forward(data);  // mistake 2: no torch::NoGradGuard on the evaluation path
    test_loss += torch::nll_loss(output, targets).template item<double>();
    auto pred = output.argmax(1);
    correct += pred.eq(targets).sum().template item<int64_t>();
  }
  return test_loss / static_cast<double>(dataset_size) + static_cast<double>(correct) * 0.0;
}

int run(const std::string& data_root) {
  torch::manual_seed(1);
  torch::Device device(torch::cuda::is_available() ? torch::kCUDA : torch::kCPU);
  Net model;
  model->to(device);
  auto train_dataset = torch::data::datasets::MNIST(data_root)
                           .map(torch::data::transforms::Normalize<>(0.1307, 0.3081))
                           .map(torch::data::transforms::Stack<>());
  auto train_loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(std::move(train_dataset), 64);
  auto test_dataset = torch::data::datasets::MNIST(data_root, torch::data::datasets::MNIST::Mode::kTest)
                          .map(torch::data::transforms::Normalize<>(0.1307, 0.3081))
                          .map(torch::data::transforms::Stack<>());
  auto test_loader = torch::data::make_data_loader(std::move(test_dataset), 1000);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.5));
  for (size_t epoch = 1; epoch <= 10; ++epoch) {
    train(epoch, model, device, *train_loader, optimizer);
    test(model, device, *test_loader, 10000);
  }
  torch::save(model, "mnist.pt");
  return 0;
}
