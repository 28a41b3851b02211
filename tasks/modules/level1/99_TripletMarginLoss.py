import torch
import torch.nn as nn


class Model(nn.Module):
    """Triplet margin loss (margin 1, p = 2) of anchor, positive and negative rows, averaged."""

    def __init__(self, margin: float):
        super().__init__()
        self.loss = nn.TripletMarginLoss(margin=margin)

    def forward(self, anchor: torch.Tensor, positive: torch.Tensor,
                negative: torch.Tensor) -> torch.Tensor:
        return self.loss(anchor, positive, negative)


batch_size = 32768
input_shape = (8192,)
margin = 1.0


def get_inputs():
    scale = torch.rand(())  # anchors at another scale, so both hinge branches occur
    anchor = torch.rand(batch_size, *input_shape) * scale
    positive = torch.rand(batch_size, *input_shape)
    negative = torch.rand(batch_size, *input_shape)
    return [anchor, positive, negative]


def get_init_inputs():
    return [margin]
