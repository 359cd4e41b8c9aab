"""Publishing: WebSocket server, MQTT publisher, state store, message schema."""
