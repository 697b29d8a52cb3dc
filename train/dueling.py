"""The dueling Q-network of masked DQN, and its view as one plain linear layer for export.

``DQN(policy=DuelingDQNPolicy)`` learns ``Q = V + A - mean(A)``; the export folds the head
into the last linear layer (:class:`FoldedDuelingLinear`), so an exported dueling network is
a plain MLP.
"""

from __future__ import annotations

from typing import Any

import torch as th
from stable_baselines3.common.torch_layers import create_mlp
from stable_baselines3.dqn.policies import DQNPolicy, QNetwork
from torch import nn

__all__ = ["DuelingDQNPolicy", "DuelingHead", "DuelingQNetwork", "FoldedDuelingLinear"]


class FoldedDuelingLinear(nn.Linear):
    """A dueling head folded into one linear layer (an export view of :class:`DuelingHead`).

    ``Q = V + A - mean(A)`` is linear in the last hidden layer ``h``, so one layer computes
    it: ``W = W_A - mean_rows(W_A) + w_V`` and ``b = b_A - mean(b_A) + b_V``. The layer's
    tensors are a copy; :meth:`unfold` writes weights copied into it back into the head.
    """

    def __init__(self, head: DuelingHead) -> None:
        super().__init__(head.advantage.in_features, head.advantage.out_features)
        self._heads = [head]  # a plain list: the head is not a submodule of this view
        with th.no_grad():
            w_a, b_a = head.advantage.weight, head.advantage.bias
            self.weight.copy_(w_a - w_a.mean(dim=0, keepdim=True) + head.value.weight)
            self.bias.copy_(b_a - b_a.mean() + head.value.bias)

    def unfold(self) -> None:
        """Set the head so that it computes this layer: ``A = W x + b``, ``V = mean(A)``."""
        head = self._heads[0]
        with th.no_grad():
            head.advantage.weight.copy_(self.weight)
            head.advantage.bias.copy_(self.bias)
            head.value.weight.copy_(self.weight.mean(dim=0, keepdim=True))
            head.value.bias.copy_(self.bias.mean().reshape(1))


class DuelingHead(nn.Module):
    """The dueling output layer: ``Q(s, a) = V(s) + A(s, a) - mean_a A(s, a)``.

    The value stream learns how good a state is from every transition, whichever action
    was taken; the advantages only have to rank the actions (most UNO decisions have a few
    near-equivalent legal plays). The mean runs over all actions, legal or not, which keeps
    ``Q`` linear in the last hidden layer (:meth:`folded`) and leaves the legal argmax
    unchanged.

    Args:
        in_features: Width of the last hidden layer.
        num_actions: Number of actions.
    """

    def __init__(self, in_features: int, num_actions: int) -> None:
        super().__init__()
        self.value = nn.Linear(in_features, 1)
        self.advantage = nn.Linear(in_features, num_actions)

    def forward(self, hidden: th.Tensor) -> th.Tensor:
        """(B, in_features) -> (B, num_actions) Q-values."""
        advantage = self.advantage(hidden)
        return self.value(hidden) + advantage - advantage.mean(dim=1, keepdim=True)

    def folded(self) -> FoldedDuelingLinear:
        """One linear layer computing the same Q-values (for export)."""
        return FoldedDuelingLinear(self)


class DuelingQNetwork(QNetwork):
    """SB3's Q-network with a :class:`DuelingHead` after the hidden layers.

    ``q_net`` stays one ``nn.Sequential`` (hidden layers, activations, then the head), so the
    export reads it as the plain network with the head folded into its last layer.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        hidden = create_mlp(self.features_dim, -1, self.net_arch, self.activation_fn)
        width = self.net_arch[-1] if self.net_arch else self.features_dim
        self.q_net = nn.Sequential(*hidden, DuelingHead(width, int(self.action_space.n)))


class DuelingDQNPolicy(DQNPolicy):
    """SB3's DQN policy with dueling Q-networks (online and target)."""

    def make_q_net(self) -> DuelingQNetwork:
        """A fresh :class:`DuelingQNetwork` (its own features extractor)."""
        net_args = self._update_features_extractor(self.net_args, features_extractor=None)
        return DuelingQNetwork(**net_args).to(self.device)
