import torch
import torch.nn as nn


class Model(nn.Module):
    """Depthwise 2D convolution (groups = channels = 64), 3x3 kernel, on a 512x512 image."""

    def __init__(self, in_channels: int, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, in_channels, kernel_size, stride=stride,
                              padding=padding, groups=in_channels, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch_size = 16
in_channels = 64
kernel_size = 3
height = 512
width = 512
stride = 1
padding = 0


def get_inputs():
    x = torch.rand(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, kernel_size, stride, padding]
