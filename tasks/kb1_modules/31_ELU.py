import torch
import torch.nn as nn


class Model(nn.Module):
    """y = torch.nn.functional.elu(x, alpha=alpha) on x(4096, 393216) (twin of kb1/31_elu)."""

    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.elu(x, alpha=self.alpha)


batch_size = 4096
dim = 393216
alpha = 1.0


def get_inputs():
    x = torch.rand(batch_size, dim)
    return [x]


def get_init_inputs():
    return [alpha]
