# The rocmbot service: webhook ingress with an in-process worker (SQLite by default).
# Build: docker build -t rocmbot .
# Run:   docker run -p 8000:8000 -e ROCMBOT_WEBHOOK_SECRET=... -e ROCMBOT_APP_ID=... \
#          -e ROCMBOT_PRIVATE_KEY_PATH=/keys/app.pem -v $PWD/keys:/keys:ro -v rocmbot-data:/data rocmbot
FROM python:3.11-slim

# git is whatever the base's Debian release ships: a pinned version would break the build when
# Debian replaces it with its next security fix.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 rocmbot \
    && mkdir /data && chown rocmbot /data

WORKDIR /app
# The runtime dependencies as locked, every file checked against its hash (CONTRIBUTING.md:
# refreshing the lock), in a layer of their own that a change to rocmbot's code leaves cached.
COPY requirements.lock ./
RUN pip install --no-cache-dir --require-hashes -r requirements.lock
COPY pyproject.toml README.md ./
COPY bot ./bot
COPY handlers ./handlers
COPY config ./config
RUN pip install --no-cache-dir --no-deps .

# rocmbot, by the uid useradd gave it: a number needs no passwd lookup on the host
USER 10001
ENV ROCMBOT_DATABASE_URL=sqlite:////data/rocmbot.db \
    PYTHONUNBUFFERED=1
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=3s \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz')"]
CMD ["rocmbot", "serve", "--host", "0.0.0.0", "--port", "8000"]
