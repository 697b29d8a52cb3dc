"""Warm starts by imitation: ``uno-lab train imitate --config imitate/<name>``.

An imitation run clones a teacher (any bot, an exported agent, or a weighted mix of them)
into a network of the PPO policy's architecture, so that a PPO run can start from a player
that is already strong instead of a random one (``init_from``). Read it top to bottom:

1. :func:`~unolab.train.imitate.data.generate_demonstrations` plays thousands of games
   side by side with the teachers and records (observation, legal mask, teacher action) at
   each of their decisions;
2. :func:`~unolab.train.imitate.fit.fit_clone` trains an MLP (``net_arch``, tanh:
   MaskablePPO's policy network) on them by minibatch Adam, minimising the cross-entropy of
   the masked logits (illegal actions get no probability, as in MaskablePPO), on all games
   but a held-out share;
3. :func:`~unolab.train.imitate.fit.agreement` scores the clone on the held-out games: how
   often it picks the teacher's action, overall and per kind of decision (play, draw, wild
   colour, challenge, ...);
4. the clone and each teacher play ``eval_games`` hands against each ``eval_bots`` bot on
   the same deals (:func:`unolab.agents.arena.evaluate_vs`, Wilson intervals);
5. everything is written to ``runs/<name>/``: the clone as a pickle-free policy
   (``<name>.safetensors`` + ``<name>.json``, algorithm ``imitation``, the teachers and the
   accuracy in its ``extra``), ``imitation_report.json`` (the table printed at the end) and
   ``config.yaml``.

A PPO run starts from the clone with ``init_from: runs/<name>/<name>.safetensors`` (same
rules and ``ppo.net_arch``): its policy branch and action head receive the clone's layers,
its value head starts fresh. A masked DQN run can start from a clone made with
``activation: relu`` and the DQN's ``net_arch``; the Q-values then start as the clone's
logits.

A refused run writes nothing. The clone is written as soon as it is fitted (then again with
its measured strength), and with ``keep_demonstrations: true`` the recording as soon as it
is made (``demonstrations.npz``, :mod:`unolab.train.imitate.files`): an interrupted run loses
neither an hour of search nor a fitted clone. Later runs train on kept recordings with
``include`` (``samples: 0`` records nothing new), and with ``value_targets`` imitate a search
teacher's estimates instead of its one noisy pick. An existing run is replaced only with
``--overwrite``.

The job's modules, in the order a run uses them: :mod:`unolab.train.imitate.config` (the
config and its bounds, and the ``imitate`` stage of a training config),
:mod:`unolab.train.imitate.data` (recording the teachers' decisions),
:mod:`unolab.train.imitate.files` (a kept recording's file), :mod:`unolab.train.imitate.fit`
(fitting and scoring the clone, the files it writes and the report table) and
:mod:`unolab.train.imitate.run` (the run and its command line).
"""
