"""The emulated AWS stack for development and tests: built from template.yaml, never a copy.

Development only: not part of the Lambda layer (which ships ``src/``).
"""
