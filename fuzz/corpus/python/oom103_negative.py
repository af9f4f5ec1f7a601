# OOM103 negative cases.
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def moved_to_host(model, loader):
    preds = []
    with torch.no_grad():
        for x, _ in loader:
            out = model(x.to(device))
            preds.append(out.cpu())
            preds.append(out.argmax(1).tolist())
            preds.append(out.detach().cpu().numpy())
    return preds


def cpu_tensors(model, loader):
    # Nothing here is known to be on the GPU.
    preds = []
    with torch.no_grad():
        for x, _ in loader:
            preds.append(model(x))
    return preds


def reduce_on_device(model, loader):
    correct = torch.zeros((), device=device)
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            correct += (model(x).argmax(1) == y).sum()
    return correct.item()


def per_batch_list(model, loader):
    with torch.no_grad():
        for x, _ in loader:
            chunk = []
            chunk.append(model(x.to(device)))
            print(len(chunk))


def prepare_inputs_for_test(n, shape):
    # Building inputs in a counted loop is not a data loop.
    tensor_list = []
    for i in range(n):
        tensor_list.append(torch.randn(shape, device=device))
    return tensor_list
