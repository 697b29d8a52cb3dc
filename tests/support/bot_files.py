"""Python bot files for tests: a file of classes, good and faulty, written into a test's folder."""

from __future__ import annotations

from pathlib import Path

__all__ = ["BOT_SOURCE", "write_bot_file"]

BOT_SOURCE = '''
"""Bots of a user's own, and classes that are not quite bots."""

import numpy as np

LOADS = []  # one entry per time this file runs


class FirstLegal:
    """Plays the lowest legal action id."""

    name = "first_legal"

    def act(self, observations, masks):
        return masks.argmax(axis=1).astype(np.int64)

    def reset(self, games=None):
        pass


class RandomLegal:
    """Plays a legal action at random: its games depend on its seed."""

    name = "random_legal"

    def __init__(self, seed=None):
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def act(self, observations, masks):
        scores = np.where(masks, self.rng.random(masks.shape), -1.0)
        return scores.argmax(axis=1).astype(np.int64)

    def reset(self, games=None):
        pass


class NoReset:
    name = "no_reset"

    def act(self, observations, masks):
        return masks.argmax(axis=1)


class NoName:
    def act(self, observations, masks):
        return masks.argmax(axis=1)

    def reset(self, games=None):
        pass


class NeedsWidth(FirstLegal):
    def __init__(self, width):
        self.width = width


class Explodes(FirstLegal):
    def __init__(self, seed=None):
        raise RuntimeError("no cards today")


def not_a_class():
    return None


LOADS.append(1)
'''
"""A module of bots: ``FirstLegal`` (deterministic), ``RandomLegal`` (seeded) and classes
that each fail one way (no ``reset``, no ``name``, a required argument, a failing
constructor), a function, and ``LOADS``, which grows each time the file runs."""


def write_bot_file(folder: Path, name: str = "my_bots.py") -> Path:
    """``<folder>/<name>`` holding :data:`BOT_SOURCE`; returns its path."""
    path = folder / name
    path.write_text(BOT_SOURCE)
    return path
