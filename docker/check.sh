#!/usr/bin/env bash
# What docker/Dockerfile does, without a Docker engine: copy the tracked sources to a scratch
# directory, install, build, prune to production dependencies, then start the server there as
# an unprivileged user with the image's environment and probe /readyz. Run by .ci/run.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
data="$(mktemp -d)"
port="${CHECK_PORT:-18080}"
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  rm -rf "$work" "$data"
}
trap cleanup EXIT

echo "docker-check: build stage in $work"
(cd "$repo" && git ls-files -z | xargs -0 tar -cf - ) | tar -xf - -C "$work"
cd "$work"
npm ci --no-audit --no-fund --loglevel=error
npm run build --silent
npm prune --omit=dev --no-audit --no-fund --loglevel=error
rm -rf src test scripts bench ui   # the runtime stage copies only package.json, node_modules, dist, schemas, config

echo "docker-check: runtime stage as user nobody"
chmod -R a+rX "$work"
chown nobody "$data"
# setpriv execs the server itself (runuser would sit in between and turn SIGTERM into a kill).
setpriv --reuid=nobody --regid=nogroup --clear-groups -- env NODE_ENV=production HOST=127.0.0.1 PORT="$port" \
  ACP_AGUI_CONFIG="$work/config/sample.yaml" DATABASE_URL="$data/acp-agui.db" \
  node dist/cli.js serve > "$data/server.log" 2>&1 &
server_pid=$!

for _ in $(seq 1 50); do
  if curl -fsS "http://127.0.0.1:$port/readyz" > /dev/null 2>&1; then
    echo "docker-check: /readyz answered: $(curl -fsS "http://127.0.0.1:$port/readyz")"
    # The inspector ships in dist/ui: its page must be served by the pruned install.
    curl -fsS "http://127.0.0.1:$port/ui/" -o "$data/ui.html"
    grep -q "acp-agui inspector" "$data/ui.html"
    echo "docker-check: /ui/ serves the inspector"
    # The image's HEALTHCHECK command, verbatim.
    PORT="$port" node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8000)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
    kill -TERM "$server_pid"
    status=0
    wait "$server_pid" || status=$?
    if [ "$status" -ne 0 ]; then
      echo "docker-check: the server exited with $status on SIGTERM"
      cat "$data/server.log"
      exit 1
    fi
    server_pid=""
    echo "docker-check: ok"
    exit 0
  fi
  sleep 0.2
done
echo "docker-check: the server never became ready"
cat "$data/server.log"
exit 1
