import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """3x3 convolution, inference batch norm (running statistics) and ReLU: the conv-BN-ReLU block folded at inference."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.bn = nn.BatchNorm2d(out_channels)
        with torch.no_grad():
            # statistics as a trained network holds them, not the identity of a fresh one
            self.bn.running_mean.copy_(0.1 * torch.randn(out_channels))
            self.bn.running_var.copy_(0.5 + torch.rand(out_channels))
            self.bn.weight.copy_(1.0 + 0.1 * torch.randn(out_channels))
            self.bn.bias.copy_(0.1 * torch.randn(out_channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv(x)
        # inference mode whatever the module's train/eval flag: running statistics, no update
        y = F.batch_norm(y, self.bn.running_mean, self.bn.running_var, self.bn.weight,
                         self.bn.bias, training=False, eps=self.bn.eps)
        return F.relu(y)


batch_size = 64
in_channels = 64
out_channels = 128
kernel_size = 3
height = 128
width = 128


def get_inputs():
    x = torch.rand(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
