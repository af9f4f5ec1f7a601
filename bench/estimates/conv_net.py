# An image classifier of convolutions, batch norm, pooling and a flatten, for the shape-faithful
# probe on the H200 (runtime_check/results/h200-layers-verify.json): `oomlint check --verify`
# runs this file's own layers on a random batch of the stated (batch, channels, height, width).
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(64)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(64, 128, kernel_size=(3, 3), padding="same")
        self.fc1 = nn.Linear(128 * 16 * 16, 256)
        self.fc2 = nn.Linear(256, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.bn1(self.conv1(x))))
        x = F.relu(self.conv2(x))
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return F.log_softmax(self.fc2(x), dim=1)


model = Net().cuda()
images = torch.randn(256, 3, 32, 32, device="cuda")

scores = []
model.eval()
for step in range(9):
    scores.append(model(images))
