"""Tournaments: rank bots and agents with duplicate deals, ratings and honest error bars."""
