import torch
import torch.nn as nn


class Model(nn.Module):
    """y = torch.nn.functional.hardtanh(x, min_val=min_val, max_val=max_val) on x(4096, 393216) (twin of kb1/32_hardtanh)."""

    def __init__(self, min_val: float, max_val: float):
        super().__init__()
        self.min_val = min_val
        self.max_val = max_val

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.hardtanh(x, min_val=self.min_val, max_val=self.max_val)


batch_size = 4096
dim = 393216
min_val = -1.0
max_val = 1.0


def get_inputs():
    x = torch.rand(batch_size, dim)
    return [x]


def get_init_inputs():
    return [min_val, max_val]
