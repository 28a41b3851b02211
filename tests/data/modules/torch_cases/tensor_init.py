import torch
import torch.nn as nn

# a tensor among the init inputs, kept as a plain attribute
class Model(nn.Module):
    def __init__(self, w, scale):
        super().__init__()
        self.w = w
        self.scale = scale
    def forward(self, x):
        return (x @ self.w) * self.scale

def get_inputs():
    return [torch.randn(64, 96)]

def get_init_inputs():
    return [torch.randn(96, 48), 0.5]
