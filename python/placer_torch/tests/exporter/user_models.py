"""A user's own models, as test_torchexport.py's CommandLineTest and
DataDependentTest export them through --model user_models:NAME (or this
file by its path)."""

import torch


class Branchy(torch.nn.Module):
    """A branch on a tensor's value in forward."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(8, 4)
        self.b = torch.nn.Linear(8, 4)

    def forward(self, x):
        if x.mean() > 0:  # BRANCH: the line the exporter names
            return self.a(x)
        return self.b(x)


class TinyNet(torch.nn.Module):
    """A user's model, exported through --model user_models:tiny_net."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(12, 5)

    def forward(self, x):
        return torch.relu(self.fc(x))


def tiny_net():
    return TinyNet()


class TwoInputs(torch.nn.Module):
    """Two inputs, one of them token ids: --input-shape 12 --input-shape 7:int64."""

    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(10, 12)
        self.fc = torch.nn.Linear(12, 3)

    def forward(self, x, ids):
        return self.fc(x + self.emb(ids).sum(1))


def not_a_module():
    return 42
