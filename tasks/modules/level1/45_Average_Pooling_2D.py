import torch
import torch.nn as nn


class Model(nn.Module):
    """2D average pooling with non-overlapping 11x11 windows (stride = kernel), the last partial window dropped."""

    def __init__(self, kernel_size: int):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size=kernel_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


batch_size = 16
channels = 64
height = 2048
width = 2048
kernel_size = 11


def get_inputs():
    x = torch.rand(batch_size, channels, height, width)
    return [x]


def get_init_inputs():
    return [kernel_size]
