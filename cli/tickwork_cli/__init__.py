"""The ``tickwork`` command line: drive a local or a deployed tickwork stack."""
