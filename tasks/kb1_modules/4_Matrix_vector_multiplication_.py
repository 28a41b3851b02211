import torch
import torch.nn as nn


class Model(nn.Module):
    """y(M, 1) = A(M, K) @ x(K, 1), memory-bound (twin of kb1/4_matvec)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, x)


M = 2048
K = 1048576


def get_inputs():
    A = torch.rand(M, K)
    x = torch.rand(K, 1)
    return [A, x]


def get_init_inputs():
    return []
