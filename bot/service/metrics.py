"""Prometheus metrics, in a registry of their own per app (so tests can build many apps)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_WORK_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)


class _QueueDepth(Collector):
    def __init__(self, counts: Callable[[], dict[str, int]]) -> None:
        self._counts = counts

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily("rocmbot_deliveries_by_status",
                                   "Stored deliveries by status (queued is the queue depth)",
                                   labels=["status"])
        try:
            counts = self._counts()
        except Exception:  # the database is down: /readyz says so; keep /metrics answering
            counts = {}
        for status, count in sorted(counts.items()):
            family.add_metric([status], count)
        yield family


class Metrics:
    """The service's metrics."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.deliveries = Counter("rocmbot_deliveries_total", "Webhook deliveries received, by outcome",
                                  ["event", "outcome"], registry=self.registry)
        self.ack_seconds = Histogram("rocmbot_ack_seconds", "Time to answer a webhook delivery",
                                     buckets=_LATENCY_BUCKETS, registry=self.registry)
        self.processing_seconds = Histogram("rocmbot_processing_seconds",
                                            "Time handlers spent on a delivery", ["event"],
                                            buckets=_WORK_BUCKETS, registry=self.registry)
        self.delivery_to_done_seconds = Histogram("rocmbot_delivery_latency_seconds",
                                                  "Time from receipt to the end of processing",
                                                  ["event"], buckets=_WORK_BUCKETS, registry=self.registry)
        self.outcomes = Counter("rocmbot_processed_total", "Processing attempts by outcome",
                                ["event", "outcome"], registry=self.registry)
        self.retries = Counter("rocmbot_retries_total", "Deliveries scheduled for another attempt",
                               registry=self.registry)
        self.dead_letters = Counter("rocmbot_dead_letters_total", "Deliveries given up on",
                                    registry=self.registry)
        self.reenable_passes = Counter("rocmbot_reenable_passes_total",
                                       "Passes of this process's worker over the repositories whose "
                                       "re-enable sweep may be due", registry=self.registry)

    def watch_queue(self, counts: Callable[[], dict[str, int]]) -> None:
        self.registry.register(_QueueDepth(counts))

    def processed(self, event: str, outcome: str, seconds: float, since_receipt: float) -> None:
        self.outcomes.labels(event, outcome).inc()
        self.processing_seconds.labels(event).observe(seconds)
        if outcome == "retry":
            self.retries.inc()
        elif outcome == "dead":
            self.dead_letters.inc()
        else:
            self.delivery_to_done_seconds.labels(event).observe(since_receipt)

    def render(self) -> bytes:
        return generate_latest(self.registry)
