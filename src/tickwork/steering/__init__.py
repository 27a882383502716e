"""Steering: what users and publishers ask of their actions."""
