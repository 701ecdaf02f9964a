"""Tiny models for the runner's checks (test_runner.py, test_torchplan.py;
tools/dev/torchplan's bench_overhead.py and heldout.py, with this folder on
PYTHONPATH; torchplan --model tiny_models:NAME): random initialisation
from config objects, no downloads. No dropout, except in the train-mode models below
(resnet18 ... PyRandomDrop: what a plan changes in train mode,
docs/torch-plan.md)."""

import random

import torch
import torch.nn as nn
import torch.nn.functional as F


def gpt2(n_layer=4, n_embd=32, n_head=2, vocab_size=64, n_positions=16):
    """transformers' GPT2LMHeadModel (tied embeddings)."""
    import transformers
    cfg = transformers.GPT2Config(n_layer=n_layer, n_embd=n_embd, n_head=n_head, vocab_size=vocab_size,
                                  n_positions=n_positions, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                                  use_cache=False, bos_token_id=0, eos_token_id=0)
    return transformers.GPT2LMHeadModel(cfg)


def bert(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, intermediate_size=64, vocab_size=64):
    """transformers' BertForMaskedLM (tied embeddings)."""
    import transformers
    cfg = transformers.BertConfig(num_hidden_layers=num_hidden_layers, hidden_size=hidden_size,
                                  num_attention_heads=num_attention_heads, intermediate_size=intermediate_size,
                                  vocab_size=vocab_size, max_position_embeddings=32, hidden_dropout_prob=0.0,
                                  attention_probs_dropout_prob=0.0, pad_token_id=0)
    return transformers.BertForMaskedLM(cfg)


def vit(depth=2):
    """timm's vit_tiny_patch16_224 at 32 x 32 pixels (4 patches), 10 classes."""
    import timm
    return timm.create_model("vit_tiny_patch16_224", pretrained=False, img_size=32, depth=depth, num_classes=10)


def lm_loss(out, target):
    """Cross-entropy over every token: out is logits or has .logits."""
    logits = out.logits if hasattr(out, "logits") else out
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))


class Looped(nn.Module):
    """One block applied three times (its linear and its norm), between an
    input and an output layer: a cut between or inside its calls puts its
    parameters on two stages."""

    def __init__(self, d=16, classes=5):
        super().__init__()
        self.inp = nn.Linear(8, d)
        self.block = Block(d)
        self.out = nn.Linear(d, classes)

    def forward(self, x):
        h = self.inp(x)
        for _ in range(3):
            h = self.block(h)
        return self.out(h)


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)

    def forward(self, h):
        return h + self.norm(torch.tanh(self.fc(h)))


class TwoInputs(nn.Module):
    """Two inputs (an image-like tensor and a side vector, the second a
    keyword argument) joined in the middle; the side branch's output is
    read two stages later."""

    def __init__(self, d=16, classes=5):
        super().__init__()
        self.a = nn.Linear(12, d)
        self.b = nn.Linear(4, d)
        self.mid = nn.Linear(d, d)
        self.head = nn.Linear(d, classes)

    def forward(self, x, side=None):
        s = self.b(side)
        h = torch.relu(self.a(x.flatten(1)))
        h = torch.relu(self.mid(h)) + s
        return self.head(h * 0.5)


class InPlace(nn.Module):
    """A residual block written as timm's ResNet writes it: in-place ReLUs
    and `y += shortcut`. Cut as [inp, a], [act, b, c], [act2], [out], stage
    1's ReLU runs in place on what it receives, stage 2 adds in place to
    what it receives, and stage 1 adds in place to b's output after sending
    it (the timm ResNet-18 hang at 4 stages, docs/held-out.md)."""

    def __init__(self, d=16, classes=5):
        super().__init__()
        self.inp = nn.Linear(8, d)
        self.a = nn.Linear(d, d)
        self.act = nn.ReLU(inplace=True)
        self.b = nn.Linear(d, d)
        self.c = nn.Linear(d, d)
        self.act2 = nn.ReLU(inplace=True)
        self.out = nn.Linear(d, classes)

    def forward(self, x):
        h = self.inp(x)
        shortcut = h
        y = self.act(self.a(h))
        y = self.b(y)
        y += self.c(shortcut)
        y = self.act2(y)
        return self.out(y)


class TinyGPT(nn.Module):
    """A 2-layer pre-norm causal transformer LM (torch.nn layers, no
    dropout; test_torchplan.py's), written so that torch.fx traces it: the positions and the
    mask are buffers of the one sequence length it takes."""

    def __init__(self, vocab=64, max_len=8, d=16, heads=2, ffn=32, layers=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_len, d)
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(d, heads, ffn, dropout=0.0, activation="gelu", batch_first=True,
                                       norm_first=True) for _ in range(layers))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)
        self.register_buffer("positions", torch.arange(max_len).unsqueeze(0), persistent=False)
        self.register_buffer("mask", torch.triu(torch.full((max_len, max_len), float("-inf")), diagonal=1),
                             persistent=False)

    def forward(self, ids):
        h = self.tok(ids) + self.pos(self.positions)
        for layer in self.layers:
            h = layer(h, src_mask=self.mask)
        return self.head(self.norm(h))


def mlp(width=64, depth=8, classes=10, inp=32):
    """A plain sequential MLP (bench_overhead.py: split by hand with
    torch.distributed.pipelining)."""
    layers = [nn.Linear(inp, width), nn.ReLU()]
    for _ in range(depth - 2):
        layers += [nn.Linear(width, width), nn.ReLU()]
    layers.append(nn.Linear(width, classes))
    return nn.Sequential(*layers)


# Train mode under a plan (test_runner.py's TrainModeTest): BatchNorm,
# stochastic depth, dropout, and random draws the runner cannot align.

def resnet18(num_classes=10):
    """torchvision's ResNet-18 (20 BatchNorm2d)."""
    import torchvision
    return torchvision.models.resnet18(num_classes=num_classes)


def vit_drop_path(depth=2, drop_path_rate=0.2):
    """timm's vit_tiny_patch16_224 at 32 x 32 pixels with stochastic depth
    (DropPath in its blocks but the first: timm's rates rise from 0) and
    dropout after the patch embedding."""
    import timm
    return timm.create_model("vit_tiny_patch16_224", pretrained=False, img_size=32, depth=depth, num_classes=10,
                             drop_path_rate=drop_path_rate, drop_rate=0.1, pos_drop_rate=0.1)


def gpt2_dropout(n_layer=4, n_embd=32, n_head=2, vocab_size=64, n_positions=16, p=0.1):
    """transformers' GPT2LMHeadModel with its dropouts on: nn.Dropout
    modules and the attention's functional dropout."""
    import transformers
    cfg = transformers.GPT2Config(n_layer=n_layer, n_embd=n_embd, n_head=n_head, vocab_size=vocab_size,
                                  n_positions=n_positions, resid_pdrop=p, embd_pdrop=p, attn_pdrop=p,
                                  use_cache=False, bos_token_id=0, eos_token_id=0, attn_implementation="eager")
    return transformers.GPT2LMHeadModel(cfg)


class DropMLP(nn.Module):
    """Linear layers with nn.Dropout modules between them, and a functional
    dropout in the root's own forward (glue: replayed on every stage's
    rank, which must draw the same mask)."""

    def __init__(self, d=16, classes=5, p=0.25):
        super().__init__()
        self.inp = nn.Linear(8, d)
        self.drop1 = nn.Dropout(p)
        self.mid = nn.Linear(d, d)
        self.drop2 = nn.Dropout(p)
        self.out = nn.Linear(d, classes)

    def forward(self, x):
        h = self.drop1(torch.relu(self.inp(x)))
        h = F.dropout(h, 0.25, self.training)
        h = h + self.drop2(torch.relu(self.mid(h)))
        return self.out(h)


class OwnGenerator(nn.Module):
    """Dropout drawn from a torch.Generator the module holds: its state is
    each rank's own, which no seed of the runner's aligns."""

    def __init__(self, p=0.25):
        super().__init__()
        self.p = p
        self.g = torch.Generator().manual_seed(7)

    def forward(self, x):
        if not self.training:
            return x
        keep = torch.rand(x.shape, generator=self.g) >= self.p
        return x * keep / (1 - self.p)


class OwnGeneratorMLP(DropMLP):
    """DropMLP with its second dropout an OwnGenerator."""

    def __init__(self):
        super().__init__()
        self.drop2 = OwnGenerator()


class PyRandomDrop(nn.Module):
    """Dropout, and the whole input dropped (stochastic depth) when a
    Python random.Random seeded with the process's rank says so, as
    scripts seed per rank: a random state of each process's own, which the
    runner does not seed."""

    def __init__(self, p=0.5):
        super().__init__()
        import torch.distributed as dist
        self.p = p
        self.rng = random.Random(dist.get_rank() if dist.is_available() and dist.is_initialized() else 0)

    def forward(self, x):
        if not self.training:
            return x
        h = F.dropout(x, 0.25, True)
        return h * 0 if self.rng.random() < self.p else h


class PyRandomMLP(DropMLP):
    """DropMLP with its second dropout a PyRandomDrop."""

    def __init__(self):
        super().__init__()
        self.drop2 = PyRandomDrop()
