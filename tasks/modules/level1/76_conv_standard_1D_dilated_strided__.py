import torch
import torch.nn as nn


class Model(nn.Module):
    """1D convolution with stride 3 and dilation 4, 64 -> 128 channels, kernel 3, on sequences of 524280."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, dilation):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, stride=stride, dilation=dilation, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch_size = 64
in_channels = 64
out_channels = 128
kernel_size = 3
length = 524280
stride = 3
dilation = 4


def get_inputs():
    x = torch.rand(batch_size, in_channels, length)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, dilation]
