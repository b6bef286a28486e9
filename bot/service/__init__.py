"""The web service: webhook ingress, the durable queue's worker, the router and what a handler receives."""
