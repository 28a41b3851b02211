import torch
import torch.nn as nn


class Model(nn.Module):
    """y = x W^T + b: the parameters are kernel inputs after x (state_dict order)."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        return self.fc(x)


def get_inputs():
    return [torch.rand(32, 64)]


def get_init_inputs():
    return [64, 48]
