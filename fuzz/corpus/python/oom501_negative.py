# OOM501 negative cases.
import torch


def after_training(model, loader, optimizer, criterion):
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    torch.cuda.empty_cache()


def release_between_trials(configs, run_trial):
    for cfg in configs:
        run_trial(cfg)
        torch.cuda.empty_cache()
