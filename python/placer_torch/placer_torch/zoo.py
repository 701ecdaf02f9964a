"""Models built from code (random weights, nothing downloaded) for the
exporter's tests and `make zoo` (docs/import.md).

Each entry has build() (the nn.Module), inputs(batch) -> (inputs, target),
loss(output, target) and the default batch size.
"""

import collections

import torch
import torch.nn as nn
import torch.nn.functional as F

Spec = collections.namedtuple("Spec", "build inputs loss batch")


def _classify(n_classes, shape):
    def inputs(batch):
        return torch.randn(batch, *shape), torch.randint(0, n_classes, (batch,))
    return inputs


def _ce(output, target):
    return F.cross_entropy(output, target)


def _lm_loss(output, target):
    return F.cross_entropy(output.reshape(-1, output.shape[-1]), target.reshape(-1))


class MLP(nn.Module):
    """Two Linear layers (the exporter's invariant tests)."""

    def __init__(self, d_in=32, hidden=64, d_out=10):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(hidden, d_out)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class SmallCNN(nn.Module):
    """Two convolutions, batch norm, pooling and a classifier."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.classifier = nn.Linear(16, 10)

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


class Transformer(nn.Module):
    """A BERT-base-like encoder (causal=False) or a GPT-2-small-like decoder
    (causal=True, pre-norm) built from torch.nn layers: token and position
    embeddings, n_layers TransformerEncoderLayers, a final LayerNorm and a
    language-model head."""

    def __init__(self, vocab, max_len, d_model, heads, ffn, n_layers, causal):
        super().__init__()
        self.causal = causal
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(max_len, d_model)
        # Built one by one (nn.TransformerEncoder deep-copies one layer,
        # which fake tensors do not survive).
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(d_model, heads, ffn, dropout=0.1, activation="gelu", batch_first=True,
                                       norm_first=causal)
            for _ in range(n_layers))
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab)

    def forward(self, ids):
        seq = ids.shape[1]
        pos = torch.arange(seq, device=ids.device).unsqueeze(0)
        h = self.tok(ids) + self.pos(pos)
        mask = None
        if self.causal:
            mask = torch.triu(torch.full((seq, seq), float("-inf"), device=ids.device), diagonal=1)
        for layer in self.layers:
            h = layer(h, src_mask=mask)
        return self.head(self.norm(h))


def _tokens(vocab, seq):
    def inputs(batch):
        return torch.randint(0, vocab, (batch, seq)), torch.randint(0, vocab, (batch, seq))
    return inputs


def _torchvision(name, **kw):
    def build():
        import torchvision
        return getattr(torchvision.models, name)(**kw)
    return build


MODELS = {
    "mlp": Spec(MLP, _classify(10, (32,)), _ce, 16),
    "cnn": Spec(SmallCNN, _classify(10, (3, 16, 16)), _ce, 8),
    # torchvision's, random weights; batch 32 as in the placement papers'
    # image models.
    "resnet50": Spec(_torchvision("resnet50"), _classify(1000, (3, 224, 224)), _ce, 32),
    "inception_v3": Spec(_torchvision("inception_v3", aux_logits=False, init_weights=True),
                         _classify(1000, (3, 299, 299)), _ce, 32),
    "vit_b_16": Spec(_torchvision("vit_b_16"), _classify(1000, (3, 224, 224)), _ce, 32),
    # Its constructor computes block widths from tensor values, which fake
    # tensors refuse: the exporter builds it on real tensors.
    "regnet_y_1_6gf": Spec(_torchvision("regnet_y_1_6gf"), _classify(1000, (3, 224, 224)), _ce, 32),
    # BERT-base: 12 layers, 768 wide, 12 heads, 3072 FFN, 30522 tokens,
    # sequence 128.
    "bert_base": Spec(lambda: Transformer(30522, 512, 768, 12, 3072, 12, causal=False), _tokens(30522, 128),
                      _lm_loss, 16),
    # GPT-2 small: 12 layers, 768 wide, 12 heads, 3072 FFN, 50257 tokens,
    # context 1024.
    "gpt2_small": Spec(lambda: Transformer(50257, 1024, 768, 12, 3072, 12, causal=True), _tokens(50257, 1024),
                       _lm_loss, 8),
}
