"""Hyper-parameter sweeps on Ray Tune: ``uno-lab sweep --config sweep/<name>``.

Each trial is a normal training run of the sweep's training config with the trial's values,
and Tune's ASHA scheduler stops the trials that fall behind. :mod:`unolab.train.sweep.config`
loads the sweep's YAML (its search space, scheduler and training config);
:mod:`unolab.train.sweep.run` runs (or resumes) the sweep in its folder and writes its
results table and plot.
"""
