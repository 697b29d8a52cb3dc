"""The scripted chat-completions server of the language-model tests.

The server ships with the benchmarks (:mod:`unolab.benchmarks.chat_server`), because
``uno-lab bench llm`` runs it from an installed wheel; the tests use that one
implementation, named here for them.
"""

from __future__ import annotations

from unolab.benchmarks.chat_server import (
    FORMS,
    ChatServer,
    Script,
    Served,
    chat_server,
    free_port,
    legal_moves,
    silent_port,
)

__all__ = [
    "FORMS",
    "ChatServer",
    "Script",
    "Served",
    "chat_server",
    "free_port",
    "legal_moves",
    "silent_port",
]
