import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """3x3 convolution with bias, GroupNorm (8 groups) and ReLU."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, num_groups: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.gn = nn.GroupNorm(num_groups, out_channels)
        with torch.no_grad():
            self.gn.weight.copy_(1.0 + 0.1 * torch.randn(out_channels))
            self.gn.bias.copy_(0.1 * torch.randn(out_channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.gn(self.conv(x)))


batch_size = 64
in_channels = 32
out_channels = 64
kernel_size = 3
num_groups = 8
height = 128
width = 128


def get_inputs():
    x = torch.rand(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, num_groups]
