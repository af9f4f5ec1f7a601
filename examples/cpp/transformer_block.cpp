// A pre-norm transformer block with hand-written attention, trained on random data.
// One mistake is left in on purpose: attention materialises the full score matrix.
#include <torch/torch.h>

#include <cmath>
#include <vector>

struct BlockImpl : torch::nn::Module {
  BlockImpl(int64_t dim, int64_t heads)
      : heads_(heads),
        norm1(register_module("norm1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim})))),
        norm2(register_module("norm2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim})))),
        qkv(register_module("qkv", torch::nn::Linear(dim, 3 * dim))),
        proj(register_module("proj", torch::nn::Linear(dim, dim))),
        fc1(register_module("fc1", torch::nn::Linear(dim, 4 * dim))),
        fc2(register_module("fc2", torch::nn::Linear(4 * dim, dim))) {}

  torch::Tensor attention(const torch::Tensor& x) {
    int64_t b = x.size(0), t = x.size(1), d = x.size(2), hd = d / heads_;
    auto parts = qkv->forward(x).view({b, t, 3, heads_, hd}).permute({2, 0, 3, 1, 4});
    auto q = parts[0], k = parts[1], v = parts[2];
    auto scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(hd));
    auto probs = torch::softmax(scores, -1);  // mistake: B*H*T*T scores and probabilities saved for backward
    auto out = torch::matmul(probs, v).transpose(1, 2).reshape({b, t, d});
    return proj->forward(out);
  }

  torch::Tensor forward(torch::Tensor x) {
    x = x + attention(norm1->forward(x));
    return x + fc2->forward(torch::nn::functional::gelu(fc1->forward(norm2->forward(x))));
  }

  int64_t heads_;
  torch::nn::LayerNorm norm1, norm2;
  torch::nn::Linear qkv, proj, fc1, fc2;
};
TORCH_MODULE(Block);

void train(Block& block, torch::optim::AdamW& optimizer, int64_t steps, int64_t batch, int64_t seq, int64_t dim,
           torch::Device device) {
  block->train();
  for (int64_t step = 0; step < steps; ++step) {
    auto x = torch::randn({batch, seq, dim}, device);
    optimizer.zero_grad();
    auto loss = block->forward(x).pow(2).mean();
    loss.backward();
    optimizer.step();
  }
}
