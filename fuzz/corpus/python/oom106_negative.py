# OOM106 negative cases.
import torch


def gradient_penalty(model, x, y, criterion, optimizer):
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    grads = torch.autograd.grad(loss, list(model.parameters()), create_graph=True)
    penalty = sum(g.pow(2).sum() for g in grads)
    (loss + penalty).backward()
    loss.backward(create_graph=False)
    optimizer.step()
