import torch
import torch.nn as nn


class Model(nn.Module):
    """Depthwise 2D convolution (groups = 128 channels), 3x3 kernel, on a 256x512 image."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int,
                 padding: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride,
                              padding=padding, groups=in_channels, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch_size = 64
in_channels = 128
out_channels = 128
kernel_size = 3
height_in = 256
width_in = 512
stride = 1
padding = 0


def get_inputs():
    x = torch.rand(batch_size, in_channels, height_in, width_in)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]
