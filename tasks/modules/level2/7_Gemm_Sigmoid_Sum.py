import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear layer, sigmoid, then a sum over the features: a GEMM whose epilogue is a row reduction."""

    def __init__(self, in_features: int, hidden: int):
        super().__init__()
        self.linear = nn.Linear(in_features, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(torch.sigmoid(self.linear(x)), dim=1, keepdim=True)


batch_size = 16384
in_features = 4096
hidden = 4096


def get_inputs():
    x = torch.rand(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, hidden]
