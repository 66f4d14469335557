# One image, three roles: `npm run start:api`, `npm run start:worker` or `npm run start:render-worker`
# (see docker-compose.yml). Only the render worker uses Chromium (and the API, for previews).
FROM node:20-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium fonts-noto-cjk fonts-dejavu-core ca-certificates \
 && rm -rf /var/lib/apt/lists/*
ENV PUPPETEER_SKIP_DOWNLOAD=1 PUPPETEER_EXECUTABLE_PATH=/usr/bin/chromium NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
# Exactly the locked versions; fails if package-lock.json is out of sync with package.json.
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev
USER node
EXPOSE 3000
CMD ["node", "dist/api/main.js"]
