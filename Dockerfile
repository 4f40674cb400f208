# syntax=docker/dockerfile:1
# Production image of the gateway, the worker and the builder (README "Operating" > Containers).
# One image, three commands: `node dist/gateway.js` (default), `node dist/worker.js`, `node dist/builder.js`.

# 1. build: install everything, bundle the apps (tsup bundles the @acg/* workspaces into dist/,
#    with the Lua scripts in dist/lua), then keep only the production dependencies
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsup.config.ts ./
COPY scripts ./scripts
COPY packages ./packages
COPY apps ./apps
RUN npm ci --ignore-scripts --no-audit --no-fund \
 && npm run build \
 && npm prune --omit=dev --ignore-scripts \
 && rm -rf node_modules/@acg node_modules/.cache

# 2. runtime: dist/ and the production node_modules only, as the unprivileged `node` user
FROM node:20-slim
ENV NODE_ENV=production \
    GATEWAY_HOST=0.0.0.0 \
    BUILDER_HOST=0.0.0.0 \
    WORKER_METRICS_HOST=0.0.0.0
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json ./package.json
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
USER node
EXPOSE 8080 8081 9464
CMD ["node", "dist/gateway.js"]
