"""The browser table: ``uno-lab serve`` (play against agents, replay recorded games, look
at the lab's runs).

One sub-package per tab, each with its own router (``<tab>/routes.py``): ``game`` (Play: a
live game), ``replay`` (Replay: games already played, frame by frame) and ``lab`` (Lab: the
runs and the shipped agents, read only). ``replay`` draws the table as ``game`` does and
lists the tournament runs that ``lab``'s walk finds; nothing else crosses between them.

What they share lies here: ``app`` (the app: the page, the routers, the error answers),
``server`` (the command), ``settings`` (its options), ``guard`` (the host check, the
security headers, the body limit), ``errors`` (the refusals), ``untrusted`` (bounded
reading of files and uploads), ``warming`` (the engine's first compile behind the page),
``catalogue`` (the agents a browser may seat) and ``store`` (finished web games on disk).
The page is plain HTML, CSS and JavaScript modules in ``static/``; nothing is built or
fetched from elsewhere.
"""
