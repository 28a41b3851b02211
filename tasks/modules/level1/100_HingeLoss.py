import torch
import torch.nn as nn

# targets are labels of -1 or +1
CUTEGEN = {"inputs": {"targets": "module"}}


class Model(nn.Module):
    """Hinge loss mean(clamp(1 - predictions * targets, min=0)); targets of (batch,) broadcast along the last dim."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))


batch_size = 32768
input_shape = (32768,)


def get_inputs():
    predictions = torch.rand(batch_size, *input_shape)
    targets = torch.randint(0, 2, (batch_size,)).float() * 2 - 1
    return [predictions, targets]


def get_init_inputs():
    return []
