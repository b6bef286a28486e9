"""Service settings from the environment (`ROCMBOT_*`); built by the caller, never at import."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_DATABASE_URL = "sqlite:///rocmbot.db"


class SettingsError(ValueError):
    """The settings cannot run the service; the message says which variable to set."""


class Settings(BaseSettings):
    """Everything the service reads from its environment."""

    model_config = SettingsConfigDict(env_prefix="ROCMBOT_", extra="ignore", frozen=True)

    webhook_secret: SecretStr | None = Field(
        default=None, description="HMAC secret(s) of the App's webhook; comma-separated to rotate"
    )
    dry_run: bool | None = Field(
        default=None, description="record effects without sending them (default: on without App credentials)"
    )
    database_url: str = DEFAULT_DATABASE_URL
    auto_migrate: bool | None = Field(
        default=None, description="apply migrations on start (default: on for SQLite)"
    )
    app_id: int | None = None
    local_repo: Path | None = Field(
        default=None, description="without App credentials: a clone of the repository to read each "
        "PR from, at the base and head its delivery names (effects are recorded, in dry-run)",
    )
    private_key: SecretStr | None = None
    private_key_path: Path | None = None
    github_api_url: str = "https://api.github.com"
    github_retries: int = Field(default=2, ge=0, le=20)
    github_backoff_seconds: float = Field(default=0.5, ge=0)
    secondary_rate_wait_seconds: float = Field(
        default=60.0, ge=0, description="wait after a secondary rate limit that names none (no Retry-After)"
    )
    github_timeout_seconds: int = Field(default=30, ge=1, le=600, description="timeout of one GitHub request")
    delivery_deadline_seconds: float = Field(
        default=300.0, gt=0, description="the longest a worker thread spends on one delivery attempt: "
        "no GitHub request starts, and no rate limit is waited out, past it",
    )
    seconds_between_writes: float = Field(
        default=1.0, ge=0, description="pace of content-creating requests per installation"
    )
    max_body_bytes: int = Field(default=25 * 1024 * 1024, ge=1024)
    body_buffer_bytes: int = Field(
        default=80 * 1024 * 1024, ge=1024,
        description="bytes of bodies read at once before their signature is checked; more get 503",
    )
    body_read_seconds: float = Field(
        default=10.0, gt=0, description="time any body has before the minimum rate applies: by "
        "this plus N / body_min_bytes_per_second, N bytes of it must have come; else 408",
    )
    body_min_bytes_per_second: int = Field(
        default=256 * 1024, ge=1, description="the slowest a body may arrive once body_read_seconds "
        "are over (so the whole body is due by then plus its size over this)",
    )
    body_chunk_seconds: float = Field(
        default=5.0, gt=0, description="the longest wait for the next piece of a body; longer gets 408",
    )
    body_reads_per_client: int = Field(
        default=32, ge=1, description="bodies read at once from one client address; more get 503",
    )
    max_attempts: int = Field(default=8, ge=1, le=100)
    lease_seconds: float = Field(default=60.0, gt=0)
    backoff_base_seconds: float = Field(default=2.0, gt=0)
    backoff_max_seconds: float = Field(default=600.0, gt=0)
    poll_seconds: float = Field(default=0.5, gt=0)
    worker_concurrency: int = Field(default=2, ge=1, le=64)
    analyse_drafts: bool = Field(default=False, description="analyse draft PRs too")
    reconcile_minutes: float = Field(
        default=0.0, ge=0, description="`rocmbot serve` asks GitHub to redeliver missed deliveries "
        "this often, and once shortly after it starts (0: never; needs App credentials)"
    )
    reconcile_window_minutes: float = Field(
        default=180.0, gt=0, le=3 * 24 * 60,
        description="how far back the reconciler looks (GitHub keeps deliveries three days)"
    )
    pending_effect_seconds: float = Field(
        default=300.0, ge=0, description="a worker completes or retries GitHub writes left pending "
        "this long (a dispatch in doubt, a run without its check, a write whose delivery gave up; 0: never)"
    )
    reenable_seconds: float = Field(
        default=300.0, ge=0, description="how often each worker looks for repositories whose "
        "re-enable sweep (`reenable.sweep`) is due (0: never)",
    )
    dispatch_lookup_seconds: float = Field(
        default=180.0, ge=0, description="how long after a dispatch GitHub did not answer (a timeout, "
        "a lost connection) or answered 5xx its run is looked for, before it is sent again (after a "
        "5xx) or recorded `unknown` (no answer): GitHub may finish a request after its client gave up "
        "and list the new run some seconds after it answered",
    )
    dispatch_lookup_first_seconds: float = Field(
        default=15.0, gt=0, description="the first lookup of such a dispatch's run this long after it "
        "was sent; each next one waits twice as long, the last at the end of the window",
    )
    log_format: Literal["json", "text"] = "json"
    log_level: str = "INFO"

    @field_validator("log_level")
    @classmethod
    def _level(cls, value: str) -> str:
        value = value.upper()
        if value not in {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}:
            raise ValueError("one of DEBUG, INFO, WARNING, ERROR, CRITICAL")
        return value

    @model_validator(mode="after")
    def _key_source(self) -> Settings:
        if self.private_key is not None and self.private_key_path is not None:
            raise ValueError("set ROCMBOT_PRIVATE_KEY or ROCMBOT_PRIVATE_KEY_PATH, not both")
        return self

    @property
    def secrets(self) -> list[bytes]:
        """The webhook secrets in rotation order (the first signs replays)."""
        if self.webhook_secret is None:
            return []
        raw = self.webhook_secret.get_secret_value()
        return [s.strip().encode() for s in raw.split(",") if s.strip()]

    @property
    def has_app_credentials(self) -> bool:
        return self.app_id is not None and (self.private_key is not None or self.private_key_path is not None)

    @property
    def effective_dry_run(self) -> bool:
        """Dry-run when asked, or when there are no App credentials to act with."""
        return bool(self.dry_run) if self.dry_run is not None else not self.has_app_credentials

    @property
    def request_margin(self) -> float:
        """The longest one GitHub request may take: the write pacing before it, then its timeout."""
        return self.github_timeout_seconds + self.seconds_between_writes

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")

    @property
    def migrate_on_start(self) -> bool:
        return self.auto_migrate if self.auto_migrate is not None else self.is_sqlite

    def app_private_key(self) -> str | None:
        """The App's PEM private key, from the variable or the file."""
        if self.private_key is not None:
            return self.private_key.get_secret_value().replace("\\n", "\n")
        if self.private_key_path is not None:
            try:
                return self.private_key_path.read_text(encoding="utf-8")
            except OSError as exc:
                raise SettingsError(
                    f"ROCMBOT_PRIVATE_KEY_PATH: cannot read {self.private_key_path}: {exc.strerror}"
                ) from exc
        return None

    def check_servable(self) -> None:
        """Refuse to serve webhooks that nothing could authenticate, unless dry-run is explicit."""
        if not self.secrets and self.dry_run is not True:
            raise SettingsError(
                "ROCMBOT_WEBHOOK_SECRET is not set: refusing to accept unsigned webhooks. "
                "Set it to the App's webhook secret, or set ROCMBOT_DRY_RUN=1 to run without one."
            )
