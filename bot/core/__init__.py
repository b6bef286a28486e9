"""The ground floor of the service side: value types and per-thread state that the store, the
GitHub port and the service all take (the delivery's `Event`, its deadline, log redaction)."""
