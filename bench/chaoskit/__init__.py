"""The parts of the fault-injection run ``bench/chaos.py`` (``make chaos``)."""
