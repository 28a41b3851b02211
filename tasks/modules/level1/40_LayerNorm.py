import torch
import torch.nn as nn


class Model(nn.Module):
    """Layer normalization over the last three dimensions (features, dim1, dim2) with an elementwise affine."""

    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)
        with torch.no_grad():
            self.ln.weight.copy_(1.0 + 0.1 * torch.randn(normalized_shape))
            self.ln.bias.copy_(0.1 * torch.randn(normalized_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


batch_size = 16
features = 64
dim1 = 256
dim2 = 256


def get_inputs():
    x = torch.rand(batch_size, features, dim1, dim2)
    return [x]


def get_init_inputs():
    return [(features, dim1, dim2)]
