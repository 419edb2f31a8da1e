#!/usr/bin/env bash
# Builds docker/Dockerfile from a clean copy of the tracked files with buildah, on the CI node
# base (base.sh) as NODE_IMAGE, then runs it with podman and checks what a user would: /readyz
# and the inspector through a published port, an ACP run, a non-root process, the SQLite file
# kept in its volume across a restart, a clean stop on SIGTERM that lets a running run finish
# (and ends, stored, one that outlasts the grace period),
# and the HEALTHCHECK. Leaves the image tagged $APP_IMAGE for compose.sh.
source "$(dirname "$0")/lib.sh"

container=acp-agui-ci-app
volume=acp-agui-ci-data
grace=10      # the server's SHUTDOWN_GRACE_SECONDS (the image's default)
stop_wait=25  # what podman stop gives it before SIGKILL: more than the grace, so a kill shows

context=""
cleanup() {
  local status=$?
  if [ "$status" -ne 0 ] && pm container exists "$container" 2>/dev/null; then
    echo "---- $container logs"
    pm logs --tail 30 "$container" 2>&1 || true
  fi
  pm rm -f -t 0 "$container" >/dev/null 2>&1 || true
  pm volume rm -f "$volume" >/dev/null 2>&1 || true
  [ -z "$context" ] || rm -rf "$context"
}
trap cleanup EXIT
cleanup # what an interrupted run may have left

context="$(mktemp -d)"
# ---- build, from what a clone holds and nothing else
(cd "$repo" && git ls-files -z | xargs -0 tar -cf -) | tar -xf - -C "$context"
started=$(date +%s)
log "building docker/Dockerfile (NODE_IMAGE=$NODE_BASE_IMAGE)"
# The CA bundle, the npm settings and Node's headers are mounted for the build's RUN steps,
# never copied in.
node_headers="$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")/include/node"
bud --build-arg NODE_IMAGE="$NODE_BASE_IMAGE" \
  -v /etc/ssl/certs:/etc/ssl/certs:ro \
  -v "$ci_dir/npmrc:/usr/local/etc/npmrc:ro" \
  -v "$node_headers:/usr/local/include/node:ro" \
  -f docker/Dockerfile -t "$APP_IMAGE" "$context" >/dev/null
size="$(pm image inspect --format '{{.Size}}' "$APP_IMAGE")"
log "image built in $(since "$started") s: $APP_IMAGE, $((size / 1000000)) MB"
healthcheck="$(pm image inspect --format '{{json .HealthCheck}}' "$APP_IMAGE")"
case "$healthcheck" in *readyz*) ;; *) fail "the image has no HEALTHCHECK (got $healthcheck)" ;; esac

# ---- run
port="$(free_port)"
url="http://127.0.0.1:$port"
start() {
  pm run -d --name "$container" -p "127.0.0.1:$port:8000" -v "$volume:/data" "$APP_IMAGE" >/dev/null
}
start
wait_http "$url/readyz" 60 || fail "/readyz did not answer through port $port"
log "/readyz answers through the published port $port"
acp ui "$url"
log "/ui/ serves the inspector"
log "ACP run: $(acp run "$url" echo "hello from the image")"
log "ACP run: $(acp run "$url" word-count "one two three")"

# The server is PID 1 in the container; its owner as the host sees it (no user namespace).
pid="$(pm inspect --format '{{.State.Pid}}' "$container")"
uid="$(stat -c %u "/proc/$pid")"
[ "$uid" != 0 ] || fail "the server runs as root"
log "the server runs as uid $uid ($(pm exec "$container" id -un))"

pm healthcheck run "$container" || fail "the HEALTHCHECK command failed"
log "the HEALTHCHECK command passes"

# ---- the SQLite file outlives the container process
read -r thread run < <(acp thread-run "$url" echo "kept across a restart")
pm restart -t "$stop_wait" "$container" >/dev/null
wait_http "$url/readyz" 60 || fail "/readyz did not answer after the restart"
acp check-run "$url" "$thread" "$run" "kept across a restart"
log "thread $thread and its run are there after a restart"

# ---- SIGTERM: a running run finishes within the grace period, then the process exits 0
# 250 words at the echo agent's 20 ms each: about 5 s of a run, within the grace period.
long="$(for i in $(seq 1 250); do printf 'word%s ' "$i"; done)"
read -r thread run < <(acp start-run "$url" echo "$long")
started=$(date +%s)
pm stop -t "$stop_wait" "$container" >/dev/null
took=$(since "$started")
code="$(pm inspect --format '{{.State.ExitCode}}' "$container")"
[ "$code" = 0 ] || fail "the server exited with $code on SIGTERM"
[ "$took" -le "$((grace + 2))" ] || fail "the stop took ${took} s, beyond the ${grace} s grace"
# Into a variable first: grep -q stopping at the first match would fail the pipe (pipefail).
logs="$(pm logs "$container" 2>&1)"
grep -q '"shutting down"' <<<"$logs" || fail "no shutdown line in the log"
pm start "$container" >/dev/null
wait_http "$url/readyz" 60 || fail "/readyz did not answer after the stop"
acp check-run "$url" "$thread" "$run" "word250"
log "SIGTERM: exit 0 after ${took} s, the running run $run finished as a success"

# ---- SIGTERM with a run that outlasts the grace period: ended as the shutdown's, stored, exit 0
# 1,000 words at 20 ms each: about 20 s, twice the grace period.
long="$(for i in $(seq 1 1000); do printf 'word%s ' "$i"; done)"
read -r thread run < <(acp start-run "$url" echo "$long")
started=$(date +%s)
pm stop -t "$stop_wait" "$container" >/dev/null
took=$(since "$started")
code="$(pm inspect --format '{{.State.ExitCode}}' "$container")"
[ "$code" = 0 ] || fail "the server exited with $code on SIGTERM with a run beyond the grace"
[ "$took" -lt "$stop_wait" ] || fail "the stop took ${took} s: podman had to kill the server"
pm start "$container" >/dev/null
wait_http "$url/readyz" 60 || fail "/readyz did not answer after the stop"
acp check-shut-down "$url" "$thread" "$run"
log "SIGTERM mid-run: exit 0 after ${took} s, the run $run stored as ended by the shutdown"

log "image checks passed ($((size / 1000000)) MB)"
