"""``make bench``: what tickwork costs and how accurate it is, measured (bench/bench.py)."""
