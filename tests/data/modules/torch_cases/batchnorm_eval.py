import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.bn = nn.BatchNorm2d(c)
        self.drop = nn.Dropout(0.5)
    def forward(self, x):
        return self.drop(self.bn(x))

def get_inputs():
    return [torch.randn(16, 64, 128, 128)]

def get_init_inputs():
    return [64]
