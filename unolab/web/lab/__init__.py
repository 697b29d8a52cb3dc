"""The Lab tab: the tournament and training runs under the runs folder and the shipped
agents, read only.

Modules: ``files`` (the bounded walk of the runs folder and a run's files read confined to
it), ``tournaments`` (a leaderboard and its plots), ``training`` (a learning curve) and
``routes`` (what the tab lists and opens, by run id, and the shipped agents' cards).
"""
