import torch
import torch.nn as nn


class Model(nn.Module):
    """Depthwise-separable 2D convolution: a 3x3 depthwise conv (64 groups) then a 1x1 pointwise conv to 128 channels."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int,
                 padding: int, dilation: int):
        super().__init__()
        self.depthwise = nn.Conv2d(in_channels, in_channels, kernel_size, stride=stride,
                                   padding=padding, dilation=dilation, groups=in_channels,
                                   bias=False)
        self.pointwise = nn.Conv2d(in_channels, out_channels, kernel_size=1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pointwise(self.depthwise(x))


batch_size = 16
in_channels = 64
out_channels = 128
kernel_size = 3
height = 512
width = 512
stride = 1
padding = 1
dilation = 1


def get_inputs():
    x = torch.rand(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, dilation]
