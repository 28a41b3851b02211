import torch
import torch.nn as nn


class Model(nn.Module):
    """C(256, 256) = A(256, K) @ B(K, 256) with K = 524288 (twin of kb1/6_matmul_large_k)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


M = 256
N = 256
K = 524288


def get_inputs():
    A = torch.rand(M, K)
    B = torch.rand(K, N)
    return [A, B]


def get_init_inputs():
    return []
