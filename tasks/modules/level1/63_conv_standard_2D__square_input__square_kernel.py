import torch
import torch.nn as nn


class Model(nn.Module):
    """2D convolution, 16 -> 128 channels, 3x3 kernel, on a 1024x1024 image."""

    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch_size = 16
in_channels = 16
out_channels = 128
kernel_size = 3
height = 1024
width = 1024


def get_inputs():
    x = torch.rand(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
