import torch
import torch.nn as nn


class Model(nn.Module):
    """C = A @ B (KernelBench L1 #2's form, small sizes)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


M, K, N = 64, 128, 96


def get_inputs():
    return [torch.rand(M, K), torch.rand(K, N)]


def get_init_inputs():
    return []
