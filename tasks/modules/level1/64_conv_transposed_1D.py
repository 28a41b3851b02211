import torch
import torch.nn as nn


class Model(nn.Module):
    """Transposed 1D convolution, 128 -> 128 channels, kernel 3, on sequences of 65536."""

    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.ConvTranspose1d(in_channels, out_channels, kernel_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch_size = 64
in_channels = 128
out_channels = 128
kernel_size = 3
length = 65536


def get_inputs():
    x = torch.rand(batch_size, in_channels, length)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
