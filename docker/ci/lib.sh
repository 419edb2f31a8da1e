# Shared by docker/ci/*.sh (sourced, not run): names, podman settings and small helpers.
set -euo pipefail

ci_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$ci_dir/../.." && pwd)"

# podman and podman-compose read their runtime, cgroup manager and ulimits from here.
export CONTAINERS_CONF="$ci_dir/containers.conf"

# Images built on this machine. Everything CI creates is named acp-agui-ci* so it can be found
# and removed; the images are kept between runs as a cache (see base.sh for when they rebuild).
BASE_IMAGE=localhost/acp-agui-ci/bookworm
NODE_BASE_IMAGE=localhost/acp-agui-ci/node
POSTGRES_CI_IMAGE=localhost/acp-agui-ci/postgres
NGINX_CI_IMAGE=localhost/acp-agui-ci/nginx
APP_IMAGE=localhost/acp-agui-ci/app

# podman sets healthcheck timers up with systemd and logs to syslog, both absent here: it says
# so at every container's start and removal, and goes on. Those lines go; every other one stays.
quiet_podman() { grep -v --line-buffered -e 'unable to get systemd connection' -e 'failed to connect to syslog' || true; }
pm() { podman "$@" 2> >(quiet_podman >&2); }

log() { echo "docker-ci: $*"; }
fail() {
  echo "docker-ci: FAILED: $*" >&2
  exit 1
}

# buildah as it works here: chroot isolation (podman's default fails), the docker format (OCI
# drops HEALTHCHECK) and layer caching.
bud() { buildah bud --isolation chroot --format docker --layers --quiet "$@"; }

# A free TCP port on 127.0.0.1, asked of the kernel.
free_port() {
  node -e 's=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

# Waits until URL answers 2xx (up to $2 seconds, default 60).
wait_http() {
  local url="$1" limit="${2:-60}"
  for _ in $(seq 1 $((limit * 5))); do
    curl -fsS -o /dev/null "$url" 2>/dev/null && return 0
    sleep 0.2
  done
  return 1
}

# The ACP calls the checks make (docker/ci/acp.mjs), against a base URL.
acp() { node "$ci_dir/acp.mjs" "$@"; }

# Seconds since $1 (a `date +%s`).
since() { echo $(($(date +%s) - $1)); }
