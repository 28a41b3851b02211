import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, dim=1):
        super().__init__()
        self.dim = dim
    def forward(self, x, y=None):
        return torch.softmax(x, dim=self.dim)

def get_inputs():
    return [torch.randn(64, 8192)]

def get_init_inputs():
    return []
