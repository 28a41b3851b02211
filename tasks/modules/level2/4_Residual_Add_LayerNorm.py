import torch
import torch.nn as nn


class Model(nn.Module):
    """Post-norm residual: LayerNorm(x + residual) over the hidden dim, with an elementwise affine."""

    def __init__(self, hidden: int):
        super().__init__()
        self.ln = nn.LayerNorm(hidden)
        with torch.no_grad():
            self.ln.weight.copy_(1.0 + 0.1 * torch.randn(hidden))
            self.ln.bias.copy_(0.1 * torch.randn(hidden))

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return self.ln(x + residual)


batch_size = 32
sequence_length = 1024
hidden = 1024


def get_inputs():
    x = torch.randn(batch_size, sequence_length, hidden)
    residual = torch.randn(batch_size, sequence_length, hidden)
    return [x, residual]


def get_init_inputs():
    return [hidden]
