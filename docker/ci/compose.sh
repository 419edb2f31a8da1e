#!/usr/bin/env bash
# Runs docker/compose.yaml with podman-compose: PostgreSQL, two replicas of the image image.sh
# built, and nginx in front of them, on the CI stand-ins for the official postgres and nginx
# images (base.sh). Checks the stack as a client would, through nginx's published port.
source "$(dirname "$0")/lib.sh"

project=acp-agui-ci
port="$(free_port)"
url="http://127.0.0.1:$port"
export ACP_AGUI_PORT="$port" ACP_AGUI_IMAGE="$APP_IMAGE" \
  POSTGRES_IMAGE="$POSTGRES_CI_IMAGE" NGINX_IMAGE="$NGINX_CI_IMAGE"

# podman-compose 1.0.3 says "Error" where nothing is wrong: when it looks for a volume before
# making it, and when `up` of some services tries to make the already running postgres again
# (it ignores --no-deps). Those lines go too.
compose() {
  podman-compose -p "$project" -f "$repo/docker/compose.yaml" "$@" 2> >(quiet_podman |
    grep -v --line-buffered -e "no such volume ${project}_pgdata" \
      -e "name \"${project}_postgres_1\" is already in use" >&2 || true)
}
container_of() {
  pm ps -a --format '{{.Names}}' \
    --filter "label=io.podman.compose.project=$project" \
    --filter "label=com.docker.compose.service=$1" | head -n 1
}

cleanup() {
  local status=$?
  if [ "$status" -ne 0 ]; then
    for service in postgres server-a server-b lb; do
      name="$(container_of "$service")"
      [ -n "$name" ] || continue
      echo "---- $name logs"
      pm logs --tail 30 "$name" 2>&1 || true
    done
  fi
  compose down -v -t 5 >/dev/null 2>&1 || true
  pm volume rm -f "${project}_pgdata" >/dev/null 2>&1 || true
  pm network rm -f "${project}_default" >/dev/null 2>&1 || true
}
trap cleanup EXIT
cleanup

pm image exists "$APP_IMAGE" || fail "no $APP_IMAGE: run docker/ci/image.sh first"
started=$(date +%s)

# podman-compose does not wait for depends_on's service_healthy: start PostgreSQL first and
# wait for its healthcheck (compose.yaml's pg_isready) to pass.
compose up -d --no-build postgres >/dev/null
postgres="$(container_of postgres)"
[ -n "$postgres" ] || fail "compose made no postgres container"
health=""
# Once seen here, podman's healthcheck run kept failing while the server was ready; asking
# pg_isready inside the container directly is the same question, so either answer will do.
pg_ready() {
  health="$(pm healthcheck run "$postgres" 2>&1)" || health="$health; $(pm exec "$postgres" pg_isready -h 127.0.0.1 2>&1)"
}
for _ in $(seq 1 120); do
  pg_ready && break
  sleep 1
done
pg_ready || fail "PostgreSQL never became healthy: $health"
log "compose: PostgreSQL is healthy"

compose up -d --no-build --no-deps server-a server-b lb >/dev/null
wait_http "$url/readyz" 90 || fail "/readyz did not answer through nginx on port $port"
for service in server-a server-b; do
  name="$(container_of "$service")"
  # nginx answers once either replica is up: give the other a little longer.
  for _ in $(seq 1 30); do pm healthcheck run "$name" >/dev/null 2>&1 && break; sleep 1; done
  pm healthcheck run "$name" >/dev/null || fail "$service is not healthy"
  logs="$(pm logs "$name" 2>&1)" # not piped: grep -q would fail the pipe (pipefail)
  grep -q '"acp-agui listening"' <<<"$logs" || fail "$service did not start"
done
log "compose: both replicas are healthy, nginx answers /readyz on port $port"

acp ui "$url"
log "compose: ACP run through nginx: $(acp run "$url" echo "hello through the proxy")"
# A run made through the proxy and read back through it: whichever replica answers, the
# shared PostgreSQL has it.
read -r thread run < <(acp thread-run "$url" word-count "two replicas one database")
for _ in 1 2 3 4; do acp check-run "$url" "$thread" "$run"; done
log "compose: thread $thread and run $run read back through nginx"
log "compose checks passed in $(since "$started") s"
