"""GitHub I/O: the port handlers talk to, its PyGithub and local adapters, and the effect ledger."""
