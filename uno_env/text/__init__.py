"""UNO as text, for language models: what one seat may know as a JSON-able view
(:mod:`uno_env.text.view`), the prompt built from it with its ``Legal moves:`` contract
(:mod:`uno_env.text.prompt`), and the reading of a model's answer into an action
(:mod:`uno_env.text.answers`). The text env on top of them is
:mod:`uno_env.envs.text_env`; ``docs/text.md`` describes the whole layer.

No rule of the game lives here: the view reads the state the way the observation does
(:mod:`uno_env.observation`) and names cards and actions in the lab's notation
(:mod:`uno_env.cards`).
"""
