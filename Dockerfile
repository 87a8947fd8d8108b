# syntax=docker/dockerfile:1
# pricing-agent in a container: `pricing-agent run` as a non-root user, production dependencies only.
# Build: docker build -t pricing-agent .        Run: compose.yaml (docs/deployment.md, "Deploying with Docker").
# Lint: npm test runs dockerfile-utils on this file (test/packaging/dockerfile.test.ts).

# The one place that names the base image: Node.js 24 LTS on Debian 12, slim.
FROM node:24-bookworm-slim AS base

# Stage 1: compile TypeScript to dist/ with the development toolchain.
FROM base AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.sh ./scripts/
COPY src ./src
RUN npm run build

# Stage 2: production dependencies only (better-sqlite3 ships prebuilt binaries: no compiler needed).
FROM base AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

# Stage 3: the runtime image.
FROM base
# A fixed uid/gid, so files in bind-mounted inbox and outbox folders have a known owner on the host
# (chown them to it); above the range of host accounts. Change at build time with --build-arg.
ARG AGENT_UID=10001
ARG AGENT_GID=10001
RUN groupadd --system --gid "${AGENT_GID}" pricing-agent \
 && useradd --system --uid "${AGENT_UID}" --gid pricing-agent --home-dir /var/lib/pricing-agent \
      --no-create-home --shell /usr/sbin/nologin pricing-agent \
 && mkdir -p /etc/pricing-agent /var/lib/pricing-agent /srv/pricing-agent/inbox /srv/pricing-agent/outbox \
 && chown pricing-agent:pricing-agent /var/lib/pricing-agent /srv/pricing-agent/inbox /srv/pricing-agent/outbox \
 && chmod 0750 /var/lib/pricing-agent \
 && printf '%s\n' '#!/bin/sh' \
      '# pricing-agent in the container. umask 0027: files it creates are not readable by others.' \
      'umask 0027' 'exec node --max-semi-space-size=8 --max-old-space-size=1536 /app/dist/cli/main.js "$@"' > /usr/local/bin/pricing-agent \
 && chmod 0755 /usr/local/bin/pricing-agent

# MALLOC_ARENA_MAX: two glibc malloc arenas, as the systemd unit sets (a large push peaks about 20 MB lower).
ENV NODE_ENV=production \
    MALLOC_ARENA_MAX=2 \
    PRICING_AGENT_CONFIG=/etc/pricing-agent/pricing-agent.yaml
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json config.example.yaml README.md ./

USER pricing-agent
# State (the SQLite database with the outbox), the inbox folders and the per-store export files.
VOLUME ["/var/lib/pricing-agent", "/srv/pricing-agent/inbox", "/srv/pricing-agent/outbox"]
# /healthz, /readyz, /metrics. The config must set http.host: 0.0.0.0 for a published port to reach it.
EXPOSE 9464

# /healthz answers while the process is alive (readiness, /readyz, is for monitoring, not for restarts).
# Slim images have no curl: Node's own fetch. HEALTH_URL only if http.port was changed.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(process.env.HEALTH_URL || 'http://127.0.0.1:9464/healthz', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

# SIGTERM (docker stop) drains within daemon.shutdown_timeout_ms (30 s): give `docker stop -t 45` / compose
# stop_grace_period: 45s. Node runs as PID 1 and handles SIGTERM, SIGINT and SIGHUP itself.
STOPSIGNAL SIGTERM
# /usr/local/bin/pricing-agent (above) sets the umask and `exec`s node, so node is PID 1 and receives the
# signals. Arguments are the command: `docker run IMAGE status` runs `pricing-agent status`, and so does
# `docker compose exec pricing-agent pricing-agent status` in a running container.
ENTRYPOINT ["pricing-agent"]
CMD ["run"]
