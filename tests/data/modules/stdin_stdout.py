import sys

import torch
import torch.nn as nn

print("noise on stdout that must not reach the reply channel")
sys.stdin.read()  # reads nothing: the requests come on a private copy of stdin


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.rand(8, 8)]


def get_init_inputs():
    return []
