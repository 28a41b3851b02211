import torch
import torch.nn as nn


class Model(nn.Module):
    """Reverse prefix sum along dim 1: y[i] = sum of x[j] for j >= i."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x.flip(self.dim), dim=self.dim).flip(self.dim)


batch_size = 32768
input_shape = (32768,)
dim = 1


def get_inputs():
    x = torch.rand(batch_size, *input_shape)
    return [x]


def get_init_inputs():
    return [dim]
