# OOM108 negative cases.
import torch

features = {}


def save(name):
    def hook(module, inputs, output):
        features[name] = output.detach().cpu()
    return hook


def shapes(module, inputs, output):
    local = {}
    local["shape"] = output.shape
    features["shape"] = tuple(output.shape)


def attach(model, loader):
    model.layer4.register_forward_hook(save("layer4"))
    model.layer3.register_forward_hook(shapes)
    with torch.no_grad():
        for x, _ in loader:
            handle = model.fc.register_forward_hook(save("fc"))
            model(x)
            handle.remove()


class BackwardRecorder:
    def __init__(self, module):
        self.latest = None
        module.register_full_backward_hook(self.record)

    def record(self, module, grad_input, grad_output):
        # Keeping the latest gradient is bounded, and gradients carry no graph.
        self.latest = grad_output[0]
        self.packed = pack(grad_output)


def pack(values):
    return tuple(values)
