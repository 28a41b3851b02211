import torch
import torch.nn as nn

# A product of 4096 values of U[0, 1) underflows to 0, which any kernel matches; values
# near 1 keep the product finite and nonzero, so the order of the multiplications shows.
CUTEGEN = {"inputs": {"x": "module"}}


class Model(nn.Module):
    """Product over one dimension, of values near 1 so the result neither underflows nor overflows."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.prod(x, dim=self.dim)


batch_size = 128
dim1 = 4096
dim2 = 4095
reduce_dim = 1


def get_inputs():
    x = 1.0 + 0.01 * torch.randn(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return [reduce_dim]
