"""Who is calling: the App (an RS256 JWT) or an installation (a token the simulator issued)."""

from __future__ import annotations

import time
from dataclasses import dataclass

import jwt

from ghsim.state import SimulatorState, Token, utcnow

MAX_JWT_LIFETIME = 600


class AuthError(Exception):
    """The request's credentials are missing or wrong: 401 with ``message``."""


@dataclass(frozen=True)
class Caller:
    """The authenticated identity of one request."""

    kind: str  # app, installation or anonymous
    token: Token | None = None

    @property
    def installation_id(self) -> int | None:
        return self.token.installation_id if self.token else None

    @property
    def rate_identity(self) -> str:
        if self.kind == "installation" and self.token:
            return f"installation:{self.token.installation_id}"
        return self.kind


def _credential(header: str | None) -> str | None:
    if not header:
        return None
    scheme, _, value = header.partition(" ")
    if scheme.lower() not in ("token", "bearer") or not value.strip():
        raise AuthError("Bad credentials")
    return value.strip()


def verify_app_jwt(state: SimulatorState, encoded: str) -> None:
    """Check an App JWT as GitHub does: RS256 by the App key, ``iss`` the App id, short-lived."""
    try:
        claims = jwt.decode(
            encoded,
            state.app.public_key_pem,
            algorithms=["RS256"],
            options={"require": ["iat", "exp", "iss"]},
            leeway=60,
        )
    except jwt.ExpiredSignatureError as exc:
        raise AuthError(
            "'Expiration time' claim ('exp') must be a numeric value representing the future time "
            "at which the assertion expires"
        ) from exc
    except jwt.PyJWTError as exc:
        raise AuthError("A JSON web token could not be decoded") from exc
    if str(claims["iss"]) != str(state.app.id):
        raise AuthError(f"'Issuer' claim ('iss') must be an Integer: the App id, not {claims['iss']!r}")
    if int(claims["exp"]) - int(time.time()) > MAX_JWT_LIFETIME + 60:
        raise AuthError("'Expiration time' claim ('exp') is too far in the future")


def authenticate(state: SimulatorState, header: str | None, *, app_endpoint: bool, required: bool) -> Caller:
    """The caller behind an ``Authorization`` header; App endpoints take a JWT, the rest a token."""
    credential = _credential(header)
    if credential is None:
        if required:
            raise AuthError("Requires authentication")
        return Caller("anonymous")
    if app_endpoint:
        if credential.count(".") != 2:
            raise AuthError("A JSON web token could not be decoded")
        verify_app_jwt(state, credential)
        return Caller("app")
    with state.lock:
        token = state.tokens.get(credential)
    if token is None or token.expires_at <= utcnow():
        raise AuthError("Bad credentials")
    return Caller("installation", token)
