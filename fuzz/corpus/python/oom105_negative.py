# OOM105 negative cases.
import torch


def two_losses_one_forward(model, loader, optimizer, criterion):
    for x, y in loader:
        optimizer.zero_grad()
        out = model(x)
        loss_a = criterion(out, y)
        loss_b = out.pow(2).mean()
        loss_a.backward(retain_graph=True)
        loss_b.backward()
        optimizer.step()


def jacobian_rows(model, x):
    # The graph is built once, before the loop; each row's backward reuses it.
    out = model(x)
    rows = []
    for i in range(out.numel()):
        (g,) = torch.autograd.grad(out.reshape(-1)[i], x, retain_graph=True)
        rows.append(g)
    return rows


def no_flag(model, loader, optimizer, criterion):
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()


def variable_flag(model, loader, optimizer, criterion, keep):
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward(retain_graph=keep)
        optimizer.step()


def outside_loop(model, x, y, criterion):
    loss = criterion(model(x), y)
    loss.backward(retain_graph=True)
    return loss


def gan_step(netD, netG, loader, optD, optG, criterion, noise):
    for real in loader:
        optD.zero_grad()
        optG.zero_grad()
        fake = netG(noise)
        d_loss = criterion(netD(real), 1) + criterion(netD(fake), 0)
        d_loss.backward(retain_graph=True)
        optD.step()
        g_loss = criterion(netD(fake), 1)
        g_loss.backward()
        optG.step()
