import torch
import torch.nn as nn

# A running product of U[0, 1) values is 0 after a few hundred terms, which any kernel
# matches; values near 1 keep all 32768 partial products finite and nonzero.
CUTEGEN = {"inputs": {"x": "module"}}


class Model(nn.Module):
    """Inclusive prefix product along dim 1, of values near 1 so every partial product stays finite and nonzero."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumprod(x, dim=self.dim)


batch_size = 32768
input_shape = (32768,)
dim = 1


def get_inputs():
    x = 1.0 + 0.01 * torch.randn(batch_size, *input_shape)
    return [x]


def get_init_inputs():
    return [dim]
