# syntax=docker/dockerfile:1
# The CRM service as one image (docs/operations.md §1, §3; docs/deployment.md):
#   docker build -t crm .
#   docker run -d -p 8080:8080 -v crm-data:/data --name crm crm
# Stage 1 installs exactly what CI installs (npm ci: Bun, Litestream) and compiles the
# single binary; stage 2 is a slim glibc image with two static-ish binaries and no toolchain.

ARG NODE_VERSION=22

FROM node:${NODE_VERSION}-bookworm-slim AS builder
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json bunfig.toml ./
COPY db ./db
COPY src ./src
# Build, prove the migrations are embedded (run from a folder without db/), and pick the
# Litestream binary of this architecture (x64 or arm64) from its npm package.
RUN npm run build \
 && mkdir -p /out \
 && cd /tmp \
 && CRM_DB_PATH=/tmp/smoke/crm.db /src/dist/crm project list --json \
 && rm -rf /tmp/smoke \
 && cd /src \
 && install -m 0755 dist/crm /out/crm \
 && install -m 0755 "node_modules/@flydotio/litestream-linux-$(node -p process.arch)/litestream" /out/litestream \
 && /out/litestream version

FROM debian:bookworm-slim AS runtime
# ca-certificates: Litestream's TLS to S3/GCS/Azure (the Bun binary carries its own roots).
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 crm \
 && useradd --system --uid 10001 --gid crm --home-dir /data --no-create-home --shell /usr/sbin/nologin crm \
 && mkdir -p /data \
 && chown crm:crm /data
COPY --from=builder /out/crm /out/litestream /usr/local/bin/
COPY litestream.yml /etc/litestream.yml
COPY --chmod=0755 scripts/docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh

ENV HOST=0.0.0.0 \
    PORT=8080 \
    CRM_DB_PATH=/data/crm.db \
    LITESTREAM_CONFIG=/etc/litestream.yml
USER crm:crm
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8080
# No curl in the image: the binary checks its own /healthz (exit 0/1).
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 CMD ["crm", "healthcheck"]
# SIGTERM drains in-flight requests and webhook attempts (up to 10 s): give `docker stop` 15 s.
STOPSIGNAL SIGTERM
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["serve"]
