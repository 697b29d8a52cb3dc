"""The browser table: ``uno-lab serve`` (play against agents, replay recorded games).

Modules: ``settings`` (the server's options), ``catalogue`` (the agents a browser may
choose), ``batching`` (agents' moves of many games in one call), ``table`` (one live game
seen from the human's seat), ``frames`` (a game as a list of table pictures, for replay),
``runs`` (tournament games replayed), ``store`` (saved games on disk), ``app`` (the JSON API
and the page) and ``server`` (the command). The page is plain HTML, CSS and JavaScript in
``static/``; nothing is built or fetched from elsewhere.
"""
