import torch
import torch.nn as nn


class Model(nn.Module):
    """x scaled by integer counts: k keeps get_inputs()'s integer draw in every distribution."""

    def forward(self, x, k):
        return x * k.float()


def get_inputs():
    return [torch.randn(8, 16), torch.randint(0, 10, (8, 16))]


def get_init_inputs():
    return []
