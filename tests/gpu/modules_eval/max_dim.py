# torch.max over the last dimension: two outputs, the values (fp32) and their indices (int64),
# so the runner judges several outputs and an integer one (tests/gpu/modules_eval.sh)
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        v, i = torch.max(x, dim=1)
        return v, i


def get_inputs():
    return [torch.rand(64, 1000)]


def get_init_inputs():
    return []
