import torch
import torch.nn as nn


class Model(nn.Module):
    """C(32768, 32768) = A(32768, 32) @ B(32, 32768) (twin of kb1/9_tall_skinny_matmul)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


M = 32768
N = 32768
K = 32


def get_inputs():
    A = torch.rand(M, K)
    B = torch.rand(K, N)
    return [A, B]


def get_init_inputs():
    return []
