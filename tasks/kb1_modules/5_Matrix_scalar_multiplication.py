import torch
import torch.nn as nn


class Model(nn.Module):
    """C = A * scalar with the scalar an init value (twin of kb1/5_scalar_mul)."""

    def __init__(self, scalar: float):
        super().__init__()
        self.scalar = scalar

    def forward(self, A: torch.Tensor) -> torch.Tensor:
        return A * self.scalar


M = 65536
N = 16384
scalar = 3.14


def get_inputs():
    A = torch.rand(M, N)
    return [A]


def get_init_inputs():
    return [scalar]
