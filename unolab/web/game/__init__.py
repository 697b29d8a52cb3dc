"""The Play tab: a live game against the lab's agents.

Modules: ``table`` (one match seen from the human's seat, and the games held in memory),
``batching`` (the agents' moves of many games in one call), ``picture`` (the table as the
page draws it; the replays draw it the same way) and ``routes`` (dealing, the human's
moves, the next hand).
"""
