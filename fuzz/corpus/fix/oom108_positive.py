# OOM108 positive cases.
import torch
import torch.nn as nn

activations = {}


def save(name):
    def hook(module, inputs, output):
        activations[name] = output  # expect: OOM108
    return hook


class Probe(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model
        self.grads = []
        model.layer.register_full_backward_hook(self.on_backward)

    def on_backward(self, module, grad_input, grad_output):
        self.grads.append(grad_output[0])  # expect: OOM108


def attach(model, loader, optimizer, criterion):
    model.layer4.register_forward_hook(save("layer4"))
    for x, y in loader:
        model.fc.register_forward_hook(save("fc"))  # expect: OOM108
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()


def capture_inputs(model, x):
    captured = {}

    def pre_forward(module, module_inputs):
        captured["inputs"] = module_inputs  # expect: OOM108

    model.register_forward_pre_hook(pre_forward)
    model(x)
    return captured
