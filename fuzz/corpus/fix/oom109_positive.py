# OOM109 positive cases.
import torch
from torch.optim.lr_scheduler import LambdaLR


class Trainer:
    def __init__(self, model, optimizer, warmup):
        self.model = model
        self.warmup = warmup
        self.scheduler = LambdaLR(optimizer, lambda step: self.lr_scale(step))  # expect: OOM109
        self.log = lambda msg: print(self.model, msg)  # expect: OOM109

        def hook(module, inputs, output):  # expect: OOM109
            self.last = output.detach()

        self.model.register_forward_hook(hook)

    def lr_scale(self, step):
        return min(1.0, (step + 1) / self.warmup)
