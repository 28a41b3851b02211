import torch
import torch.nn as nn

# the inputs must keep their structure: drawn by get_inputs() only
CUTEGEN = {"inputs": {"A": "module", "B": "module"}}


class Model(nn.Module):
    """C = tril(A @ B) with A and B lower triangular (twin of kb1/15_lower_triangular_matmul)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.tril(torch.matmul(A, B))


N = 4096


def get_inputs():
    A = torch.tril(torch.rand(N, N))
    B = torch.tril(torch.rand(N, N))
    return [A, B]


def get_init_inputs():
    return []
