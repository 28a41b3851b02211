import torch
import torch.nn as nn


class Model(nn.Module):
    """Group normalization: channels split into groups, each normalized over its channels and H x W, then a per-channel affine."""

    def __init__(self, num_features: int, num_groups: int):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=num_features)
        with torch.no_grad():
            self.gn.weight.copy_(1.0 + 0.1 * torch.randn(num_features))
            self.gn.bias.copy_(0.1 * torch.randn(num_features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gn(x)


batch_size = 112
features = 64
num_groups = 8
dim1 = 512
dim2 = 512


def get_inputs():
    x = torch.rand(batch_size, features, dim1, dim2)
    return [x]


def get_init_inputs():
    return [features, num_groups]
