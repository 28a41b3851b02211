import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Linear layer, dropout in inference (the identity) and a mean over the features."""

    def __init__(self, in_features: int, out_features: int, dropout_p: float):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.dropout_p = dropout_p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # training=False: dropout is the identity, whatever the module's train/eval flag,
        # so the reference is deterministic
        y = F.dropout(self.linear(x), p=self.dropout_p, training=False)
        return torch.mean(y, dim=1, keepdim=True)


batch_size = 16384
in_features = 4096
out_features = 4096
dropout_p = 0.2


def get_inputs():
    x = torch.rand(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, dropout_p]
