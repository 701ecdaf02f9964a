"""Models for make gpu's fidelity step beyond the zoo (python/placer_torch/placer_torch/zoo.py),
named as torchexport takes a factory: tools/measure/fidelity/models.py:NAME.

    lstm_lm   Zaremba et al.'s medium word-level LSTM language model (2014):
              a 10,000-word vocabulary, 650-wide embedding, two LSTM layers
              of 650, a linear decoder; input 35:int64 (35 tokens a
              sequence), batch 20 as the paper trains it.
"""

import torch


class LSTMLM(torch.nn.Module):
    def __init__(self, vocab=10000, width=650, layers=2):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, width)
        self.lstm = torch.nn.LSTM(width, width, layers, batch_first=True)
        self.decoder = torch.nn.Linear(width, vocab)

    def forward(self, tokens):
        y, _ = self.lstm(self.embed(tokens))
        return self.decoder(y)


def lstm_lm():
    return LSTMLM()
