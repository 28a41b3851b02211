# LayerNorm over the last 256 of [128, 256], with its weight and bias (tests/gpu/modules_eval.sh)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(256)
        with torch.no_grad():  # not the identity: weight and bias drawn
            self.ln.weight.normal_()
            self.ln.bias.normal_()

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(128, 256)]


def get_init_inputs():
    return []
