import torch
import torch.nn as nn


class Model(nn.Module):
    """Adds noise drawn in forward: no kernel can be judged against it."""

    def forward(self, x):
        return x + torch.randn_like(x)


def get_inputs():
    return [torch.randn(8, 16)]


def get_init_inputs():
    return []
