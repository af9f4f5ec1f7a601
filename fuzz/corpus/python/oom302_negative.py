# OOM302 negative cases.
import torch


def zero_first(model, loader, optimizer, criterion):
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()


def zero_last(model, loader, optimizer, criterion):
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


def teacher_under_no_grad(teacher, student, loader, optimizer, criterion):
    for x, y in loader:
        with torch.no_grad():
            target = teacher(x)
        optimizer.zero_grad()
        loss = criterion(student(x), target)
        loss.backward()
        optimizer.step()


def accumulation(model, loader, optimizer, criterion, k):
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y) / k
        loss.backward()
        if (i + 1) % k == 0:
            optimizer.step()
            optimizer.zero_grad()


def finished_step_then_zero(net, inputs, optimizer):
    # The first forward already had its backward: zero_grad comes before the next forward.
    for x in inputs:
        loss = net(x).norm()
        loss.backward()
        net.zero_grad()
        loss = net(x).norm()
        loss.backward()
        optimizer.step()
