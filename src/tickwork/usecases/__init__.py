"""Use cases: plain functions of (command, Dependencies) returning JSON-ready results."""
