import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
    def forward(self, idx):
        return self.emb(idx)

def get_inputs():
    return [torch.randint(0, 32000, (8, 512))]

def get_init_inputs():
    return [32000, 1024]
