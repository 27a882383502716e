"""The fire protocol: what happens to a fire once it is planned (docs/protocol.md)."""
