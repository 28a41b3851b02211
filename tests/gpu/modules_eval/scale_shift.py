# y = x * w + alpha * b: a module with parameters (w, b) and a scalar (alpha, from
# get_init_inputs), so it does not lower to a built-in op (tests/gpu/modules_eval.sh)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, n, alpha):
        super().__init__()
        self.w = nn.Parameter(torch.randn(n))
        self.b = nn.Parameter(torch.randn(n))
        self.alpha = alpha

    def forward(self, x):
        return x * self.w + self.alpha * self.b


def get_inputs():
    return [torch.rand(64, 1000)]


def get_init_inputs():
    return [1000, 0.5]
