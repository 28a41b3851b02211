import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """bf16 transformer MLP up-projection: GELU (tanh form) of x @ W^T + b at K = 768."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, dtype=torch.bfloat16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(self.linear(x), approximate="tanh")


batch_size = 8192
in_features = 768
out_features = 3072


def get_inputs():
    x = torch.randn(batch_size, in_features, dtype=torch.bfloat16)
    return [x]


def get_init_inputs():
    return [in_features, out_features]
