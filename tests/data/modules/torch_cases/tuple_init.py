import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, kernel_size, stride):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size, stride)
    def forward(self, x):
        return self.pool(x)

def get_inputs():
    return [torch.randn(8, 16, 64, 64)]

def get_init_inputs():
    return [(3, 3), 2]
