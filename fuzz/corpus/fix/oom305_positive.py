# OOM305 positive cases.
import torch
import torchvision


def build(model, lr):
    for p in model.backbone.parameters():
        p.requires_grad = False
    return torch.optim.AdamW(model.parameters(), lr=lr)  # expect: OOM305


def build_named(lr):
    net = torchvision.models.resnet18()
    for name, param in net.named_parameters():
        if not name.startswith("fc"):
            param.requires_grad = False
    optimizer = torch.optim.SGD(net.parameters(), lr=lr, momentum=0.9)  # expect: OOM305
    return optimizer


def build_module_freeze(model):
    model.encoder.requires_grad_(False)
    return torch.optim.Adam(params=model.parameters())  # expect: OOM305
