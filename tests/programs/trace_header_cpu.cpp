// Built against whatever LibTorch the build found (Debian's 1.13 is CPU only): oomlint/trace.h
// must compile there, do nothing outside `oomlint trace`, and refuse under it, saying why.
// `--name-stack` prints a stack taken inside an inlined call, as oomlint/trace_symbols.h names it.
#include <oomlint/trace.h>
#include <oomlint/trace_symbols.h>
#include <torch/torch.h>

#include <cstdio>
#include <string>

static std::vector<void*> taken;

[[gnu::noinline]] static void take() { taken = oomlint::trace::symbols::capture(0); }

template <typename T>
inline T twice(T x) {
  take();  // the inlined frame: this line
  return x * 2;
}

static int nameStack(int n) {
  int r = twice(n);  // the caller's frame: this line
  const std::string self = oomlint::trace::symbols::detail::mainProgram();
  auto named = oomlint::trace::symbols::name(taken, [&](const std::string& library) { return library == self; });
  for (void* pc : taken)
    for (const auto& f : named[pc]) std::printf("%s:%llu %s\n", f.file.c_str(), static_cast<unsigned long long>(f.line), f.function.c_str());
  return r > 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--name-stack") return nameStack(argc);
  oomlint::trace::start();
  torch::manual_seed(0);
  torch::nn::Linear model(4, 1);
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.1));
  auto x = torch::randn({8, 4});
  auto y = torch::randn({8, 1});
  for (int step = 0; step < 3; ++step) {
    opt.zero_grad();
    auto loss = torch::mse_loss(model(x), y);
    loss.backward();
    opt.step();
    oomlint::trace::step();
  }
  oomlint::trace::stop();
  std::printf("trained 3 steps\n");
  return 0;
}
