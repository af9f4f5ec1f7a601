# OOM109 negative cases.
import torch
from torch.optim.lr_scheduler import LambdaLR


def warmup_factor(step, warmup=100):
    return min(1.0, (step + 1) / warmup)


class Trainer:
    def __init__(self, model, optimizer, warmup):
        self.model = model
        # A lambda that captures nothing: LambdaLR keeps it, and that is fine (measured flat).
        self.scheduler = LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / warmup))
        self.other = LambdaLR(optimizer, warmup_factor)
        scale = lambda x: x * self.model.scale
        print(scale(2))


class GradWatcher:
    def __init__(self):
        self.calls = 0

    def watch(self, tensor):
        def hook(grad):
            self.calls += 1
            return grad

        # The hook lives on the tensor's autograd node, which this object does not own: no cycle.
        tensor.register_hook(hook)
