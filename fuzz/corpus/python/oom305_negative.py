# OOM305 negative cases.
import torch


def filtered(model, lr):
    for p in model.backbone.parameters():
        p.requires_grad = False
    return torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr)


def other_model(model, teacher, lr):
    for p in teacher.parameters():
        p.requires_grad = False
    return torch.optim.AdamW(model.parameters(), lr=lr)


def unfreeze(model, lr):
    for p in model.parameters():
        p.requires_grad = True
    return torch.optim.AdamW(model.parameters(), lr=lr)


def scheduler_after(model, optimizer):
    model.encoder.requires_grad_(False)
    return torch.optim.lr_scheduler.StepLR(optimizer, step_size=10)
