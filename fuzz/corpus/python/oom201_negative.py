# OOM201 negative cases.
import torch
import torch.nn as nn


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    return [model(x) for x, _ in loader]


@torch.inference_mode()
def predict(model, x):
    return model(x)


def validate(model, loader):
    model.eval()
    with torch.no_grad():
        for x, y in loader:
            out = model(x)


def test_time_adaptation(model, loader, optimizer, criterion):
    # Backward on the path: this evaluation trains on purpose.
    model.eval()
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()


def train(model, loader, optimizer, criterion):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()


def test_forward_shape():
    # A pytest test, not an evaluation loop.
    model = nn.Linear(4, 2)
    assert model(torch.zeros(1, 4)).shape == (1, 2)


class Lit(nn.Module):
    def validation_step(self, batch, batch_idx):
        # Lightning runs this under no_grad itself.
        x, y = batch
        return self(x)


def caller(model, loader):
    with torch.no_grad():
        helper_eval(model, loader)


def helper_eval(model, loader):
    model.eval()
    for x, _ in loader:
        model(x)


def eval_then_train(model, batch, optimizer, criterion):
    model.eval()
    stats = model.stats()
    model.train()
    optimizer.zero_grad()
    loss = criterion(model(batch), batch)
    loss.backward()
    optimizer.step()


def evaluate_set_grad(model, loader):
    torch.set_grad_enabled(False)
    model.eval()
    for x, _ in loader:
        model(x)


class Adaptive(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(4, 2)

    def predict(self, x):
        # A module's own API: its caller chooses the grad mode.
        return self.head(x).argmax(1)


def make_case_test(model):
    # Helpers with "test" in the name are test utilities; the lambda runs elsewhere.
    return dict(reference_fn=lambda i: model(i).sum())


def test_eval_outputs_match(model, local_model, inp):
    model.eval()
    local_model.eval()
    assert torch.equal(model(inp), local_model(inp))


def get_val(model, x):
    return model(x)
