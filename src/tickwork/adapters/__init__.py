"""Adapters: the ports of ``tickwork.ports`` over AWS services, each with an injectable client."""
