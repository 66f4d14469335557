# One image, three roles: `npm run start:api`, `npm run start:worker` or `npm run start:render-worker`
# (see docker-compose.yml). Only the render worker uses Chromium (and the API, for previews).
# Built in two stages: the builder installs and compiles the TypeScript; the image keeps only the built service.
# npm ci compiles nothing (package.json `allowScripts`): the agent workspace's SQLite driver stays unbuilt, as the
# service never loads it (scripts/sqlite-driver.sh builds it on an agent host).
FROM node:20-bookworm-slim AS build
ENV PUPPETEER_SKIP_DOWNLOAD=1
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
COPY agent/package.json agent/
COPY packages/wire/package.json packages/wire/
COPY packages/query-runners/package.json packages/query-runners/
COPY web/package.json web/
# Exactly the locked versions; fails if package-lock.json is out of sync with package.json.
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium poppler-utils qpdf fonts-noto-cjk fonts-dejavu-core ca-certificates \
 && rm -rf /var/lib/apt/lists/*
ENV PUPPETEER_SKIP_DOWNLOAD=1 PUPPETEER_EXECUTABLE_PATH=/usr/bin/chromium NODE_ENV=production
WORKDIR /app
COPY --from=build /app /app
USER node
# 3000: the API; 9464: /metrics of every role (METRICS_PORT); 9465: the workers' Temporal SDK metrics (TEMPORAL_METRICS_BIND).
EXPOSE 3000 9464 9465
CMD ["node", "dist/api/main.js"]
