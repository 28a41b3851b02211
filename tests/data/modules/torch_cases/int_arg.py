import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x, dim: int):
        return torch.cumsum(x, dim=dim)

def get_inputs():
    return [torch.randn(128, 4096), 1]

def get_init_inputs():
    return []
