import torch
import torch.nn as nn

# the mask is a bool tensor of random bits: drawn by get_inputs() only
CUTEGEN = {"inputs": {"mask": "module"}}


class Model(nn.Module):
    """Prefix sum along dim 1 of x where mask is true (masked-out elements count as 0)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x * mask, dim=self.dim)


batch_size = 32768
input_shape = (32768,)
dim = 1


def get_inputs():
    x = torch.rand(batch_size, *input_shape)
    mask = torch.randint(0, 2, (batch_size, *input_shape)).bool()
    return [x, mask]


def get_init_inputs():
    return [dim]
