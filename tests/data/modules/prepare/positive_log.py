import torch
import torch.nn as nn

CUTEGEN = {"inputs": {"x": "positive"}}


class Model(nn.Module):
    """log(x) * y: x keeps get_inputs()'s positive draw in every distribution, y does not."""

    def forward(self, x, y):
        return torch.log(x) * y


def get_inputs():
    return [torch.rand(16, 32) + 0.5, torch.rand(16, 32)]


def get_init_inputs():
    return []
