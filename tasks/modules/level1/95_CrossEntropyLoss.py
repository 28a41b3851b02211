import torch
import torch.nn as nn
import torch.nn.functional as F

# targets are class indices in [0, num_classes)
CUTEGEN = {"inputs": {"targets": "indices"}}


class Model(nn.Module):
    """Cross-entropy of logits against class indices, averaged over the batch (a row log-softmax, a gather, a mean)."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(predictions, targets)


batch_size = 32768
num_classes = 4096
input_shape = (num_classes,)


def get_inputs():
    predictions = torch.rand(batch_size, *input_shape)
    targets = torch.randint(0, num_classes, (batch_size,))
    return [predictions, targets]


def get_init_inputs():
    return []
