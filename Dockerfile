# syntax=docker/dockerfile:1
# pricing-agent: build with the dev toolchain, run with production dependencies only, as a non-root user.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json config.example.yaml ./
RUN mkdir -p /var/lib/pricing-agent /srv/pricing-agent/inbox /srv/pricing-agent/outbox \
 && chown -R node:node /var/lib/pricing-agent /srv/pricing-agent
USER node
VOLUME ["/var/lib/pricing-agent", "/srv/pricing-agent/inbox", "/srv/pricing-agent/outbox"]
ENV PRICING_AGENT_CONFIG=/etc/pricing-agent/pricing-agent.yaml
ENTRYPOINT ["node", "/app/dist/cli/main.js"]
CMD ["check"]
