import torch
import torch.nn as nn


class Model(nn.Module):
    """C(M, N) = A(M, K) @ B(K, N) (twin of kb1/2_standard_matmul)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


M = 2048
K = 8192
N = 4096


def get_inputs():
    A = torch.rand(M, K)
    B = torch.rand(K, N)
    return [A, B]


def get_init_inputs():
    return []
