import torch
import torch.nn as nn


class Model(nn.Module):
    """C = diag(a) @ B: row i of B scaled by a[i] (twin of kb1/12_diag_matmul)."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.diag(a) @ B


N = 4096
M = 4096


def get_inputs():
    a = torch.rand(N)
    B = torch.rand(N, M)
    return [a, B]


def get_init_inputs():
    return []
