# Generated from problems/level3/32_ConvolutionalVisionTransformer.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Convolutional vision transformer classifier: strided conv patch embedding flattened into a
single token, a class token, transformer encoder layers and a linear head."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv2d patchify -> flatten -> Linear to one embedding -> prepend class token ->
    TransformerEncoderLayer stack (batch first) -> Linear on the class token."""

    def __init__(
        self,
        num_classes: int,
        embed_dim: int = 512,
        num_heads: int = 8,
        num_layers: int = 6,
        mlp_ratio: float = 4.0,
        patch_size: int = 4,
        in_channels: int = 3,
        image_size: int = 32,
    ):
        super().__init__()
        self.patch_size = patch_size
        self.image_size = image_size
        self.embed_dim = embed_dim

        self.conv1 = nn.Conv2d(in_channels, embed_dim, kernel_size=patch_size, stride=patch_size)
        num_patches = (image_size // patch_size) ** 2
        self.linear_proj = nn.Linear(embed_dim * num_patches, embed_dim)
        self.transformer_layers = nn.ModuleList(
            [
                nn.TransformerEncoderLayer(
                    d_model=embed_dim,
                    nhead=num_heads,
                    dim_feedforward=int(embed_dim * mlp_ratio),
                    dropout=0.0,
                    batch_first=True,
                )
                for _ in range(num_layers)
            ]
        )
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        self.fc_out = nn.Linear(embed_dim, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B = x.size(0)
        x = self.conv1(x)
        x = x.flatten(start_dim=1)
        x = self.linear_proj(x)
        cls_tokens = self.cls_token.expand(B, -1, -1)
        x = torch.cat((cls_tokens, x.unsqueeze(1)), dim=1)  # (B, 2, embed_dim)
        for layer in self.transformer_layers:
            x = layer(x)
        return self.fc_out(x[:, 0])


batch_size = 10
image_size = 32
embed_dim = 128
in_channels = 3
num_heads = 4
num_classes = 1000


def get_inputs():
    return [torch.randn(batch_size, in_channels, image_size, image_size)]


def get_init_inputs():
    return [num_classes, embed_dim, num_heads]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
