import torch
import torch.nn as nn


class Model(nn.Module):
    """3D convolution, 3 -> 64 channels, cubic 3x3x3 kernel, on a 64^3 volume."""

    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch_size = 16
in_channels = 3
out_channels = 64
kernel_size = 3
depth = 64
height = 64
width = 64


def get_inputs():
    x = torch.rand(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
