import torch
import torch.nn as nn


class Model(nn.Module):
    """An input with no elements: no work to time."""

    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.zeros(0, 64)]


def get_init_inputs():
    return []
