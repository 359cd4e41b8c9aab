"""livegain: live chess broadcast analyzer.

Engine evaluations become the gain of each move, gains become each player's
perceived Elo rating (move by move), and everything is pushed to broadcast
overlays over WebSockets and MQTT.
"""

__version__ = "0.1.0"
