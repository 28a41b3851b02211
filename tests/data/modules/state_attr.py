# tensors kept as plain attributes (a get_init_inputs() tensor, an RNN-style initial state)
# and a dropout the mode changes: tests/e2e/modules.sh, module_export.sh
import torch
import torch.nn as nn
class Model(nn.Module):
    def __init__(self, w, p):
        super().__init__()
        self.w = w                          # a tensor from get_init_inputs, a plain attribute
        self.h0 = torch.randn(8, 6)         # KernelBench level 3's RNNs keep their state so
        self.fc = nn.Linear(6, 6)
        self.drop = nn.Dropout(p)
    def forward(self, x):
        self.h0 = self.h0.to(x.device)
        return self.drop(self.fc(x @ self.w + self.h0))
def get_inputs():
    return [torch.randn(8, 4)]
def get_init_inputs():
    return [torch.randn(4, 6), 0.5]
