import torch
import torch.nn as nn

# the inputs must keep their structure: drawn by get_inputs() only
CUTEGEN = {"inputs": {"A": "module", "B": "module"}}


class Model(nn.Module):
    """C = A @ B with A and B symmetric (twin of kb1/13_symmetric_matmul)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


N = 4096


def get_inputs():
    A = torch.rand(N, N)
    A = (A + A.T) / 2
    B = torch.rand(N, N)
    B = (B + B.T) / 2
    return [A, B]


def get_init_inputs():
    return []
