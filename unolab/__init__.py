"""The ``uno-lab`` command line: training, tournaments, terminal play, benchmarks, rules, replays."""
