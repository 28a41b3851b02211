import torch
import torch.nn as nn


class Model(nn.Module):
    """2D convolution, 5x9 kernel dilated (2, 3) and padded (2, 4), 32 -> 64 channels, on a 512x512 image."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, dilation=dilation, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch_size = 8
in_channels = 32
out_channels = 64
kernel_size = (5, 9)
height = 512
width = 512
stride = 1
padding = (2, 4)
dilation = (2, 3)


def get_inputs():
    x = torch.rand(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, dilation]
