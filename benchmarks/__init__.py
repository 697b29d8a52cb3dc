"""The lab's benchmarks, each measured side by side with a peer in the same run.

* :mod:`unolab.benchmarks.core`: random legal play of the batched core at several batch sizes,
  against RLCard's bare ``env.step`` loop (``uno-lab bench engine``, ``make bench``);
* :mod:`unolab.benchmarks.envs`: the PettingZoo AEC env against RLCard, the SB3 VecEnv, and
  MaskablePPO on the VecEnv against a zero-cost env (``uno-lab bench envs``);
* :mod:`unolab.benchmarks.tournament`: tournament games per second against RLCard
  (``uno-lab bench tournament``);
* :mod:`unolab.benchmarks.llm`: a language-model player's cost outside the model, and a
  tournament's throughput against a model server (``uno-lab bench llm``), with its scripted
  chat-completions server :mod:`unolab.benchmarks.chat_server` (also the tests' model);
* :mod:`unolab.benchmarks.rlcard`: the RLCard 1.2.0 peer, loaded safely on current NumPy,
  and its throughput.

They sit above every layer of the lab (they may import all of it) and below the CLI. None of
them runs in ``make test`` except as smoke tests with tiny budgets.
"""
