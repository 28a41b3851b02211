import torch
import torch.nn as nn


class Model(nn.Module):
    """Transposed 2D convolution, 64 -> 64 channels, 3x7 kernel, on a 512x512 image."""

    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch_size = 8
in_channels = 64
out_channels = 64
kernel_size = (3, 7)
height = 512
width = 512


def get_inputs():
    x = torch.rand(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
