import torch
import torch.nn as nn


class Model(nn.Module):
    """Looks like relu, is not: negative inputs keep a thousandth of their value."""

    def forward(self, x):
        return torch.relu(x) - 0.001 * torch.relu(-x)


def get_inputs():
    return [torch.rand(16, 512)]


def get_init_inputs():
    return []
