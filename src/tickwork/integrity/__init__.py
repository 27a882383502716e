"""Integrity: every HMAC tickwork makes or checks, in one place, pure (keys are passed in).

- ``canonical`` — the one canonical JSON form every MAC is computed over;
- ``signature`` — the ``t=<unix>,v1=<hex>`` signature of outbound HTTP requests, and its check
  for receivers;
- ``signed_events`` and ``start_signature`` — signatures on inbound control events (Start,
  Stop, Pause, Resume, Run Now), made by publishers and checked before anything is written;
- ``seal`` — the seal on each action record over what its fires do, checked before each fire;
- ``calendar_seal`` — the seal on each stored calendar, checked by every fire that reads it;
- ``fire_proof`` — the proof on each tick and failure report, made only by the fulfill step and
  checked by the tick handler;
- ``order_proof`` — the proof on each execution's input, made by the code that starts it and
  checked by the fulfill step before anything fires.

Reading the keys and recording which signatures were spent is the use cases' part
(fire/sealing.py, fire/proofs.py, fire/orders.py, steering/intake.py).
"""
