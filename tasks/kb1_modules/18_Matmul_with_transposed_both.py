import torch
import torch.nn as nn


class Model(nn.Module):
    """C(M, N) = A.T @ B.T with A stored (K, M) and B (N, K) (twin of kb1/18_matmul_transposed_both)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A.T, B.T)


M = 2048
K = 8192
N = 4096


def get_inputs():
    A = torch.rand(K, M)
    B = torch.rand(N, K)
    return [A, B]


def get_init_inputs():
    return []
