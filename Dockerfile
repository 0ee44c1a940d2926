# chatferry as a container image: the packed npm tarball installed globally on Node 24, run as a
# non-root user. The two stages are the steps test/integration/repo/package-install.test.ts runs outside
# Docker on every `npm test` (`npm pack`, then `npm install -g` of the tarball), so what the image
# holds is what that test installs and runs (`--help` and the complete demo, on Node 22 and 24).
# test/integration/repo/deploy-files.test.ts compares this file's npm steps and copied files with it.
#
#   docker build -t chatferry .
#   docker run --rm chatferry demo --dir /data/demo
#   docker run --rm -v "$PWD:/data" -e CHATFERRY_API_KEY chatferry plan
FROM node:24-bookworm-slim AS pack
WORKDIR /src
COPY package.json package-lock.json ./
# --ignore-scripts: the checkout's `prepare` (bin/prepare.js, warming the sandbox template of a
# development checkout) has nothing to warm in a build stage, and bin/ is not copied yet.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts scripts
COPY bin bin
COPY src src
COPY connectors connectors
COPY mappings mappings
# `prepack` compiles the TypeScript into dist/; the tarball holds bin/ and dist/ only.
RUN npm pack --pack-destination /tmp && mv /tmp/chatferry-*.tgz /tmp/chatferry.tgz

FROM node:24-bookworm-slim
COPY --from=pack /tmp/chatferry.tgz /tmp/chatferry.tgz
# Production dependencies only (a global install never installs devDependencies).
RUN npm install -g --no-audit --no-fund /tmp/chatferry.tgz && rm /tmp/chatferry.tgz && npm cache clean --force \
  && mkdir /data && chown node:node /data
USER node
# The working directory holds chatferry.yaml (the default --config), the embedded ledger
# (`.chatferry/`, when state.url is absent) and the reports: mount a volume here, or point
# $CHATFERRY_CONFIG at a mounted file and state.url at Postgres (docker-compose.yml, deploy/k8s/).
WORKDIR /data
VOLUME /data
# NODE_OPTIONS holds chatferry's start-up V8 flags (bin/v8-flags.js; deploy-files.test.ts keeps them
# equal), so the installed command starts under them at once instead of re-executing itself to add
# them: V8's young generation capped at 16 MiB semi-spaces (docs/operators-guide.md "Memory": loader
# peak RSS 349-356 -> 270-272 MB at the same throughput). The flags V8 reads as it runs, chatferry
# sets itself.
ENV NODE_ENV=production CHATFERRY_SANDBOX_CACHE=/tmp/chatferry-sandbox NODE_OPTIONS=--max-semi-space-size=16
ENTRYPOINT ["chatferry"]
CMD ["--help"]
