import torch
import torch.nn as nn


class Model(nn.Module):
    """y = torch.nn.functional.softplus(x, beta=beta, threshold=threshold) on x(4096, 393216) (twin of kb1/29_softplus)."""

    def __init__(self, beta: float, threshold: float):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.softplus(x, beta=self.beta, threshold=self.threshold)


batch_size = 4096
dim = 393216
beta = 1.0
threshold = 20.0


def get_inputs():
    x = torch.rand(batch_size, dim)
    return [x]


def get_init_inputs():
    return [beta, threshold]
