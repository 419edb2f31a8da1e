#!/usr/bin/env bash
# The base images CI builds its containers on, since no registry serves images here:
#   bookworm  a Debian minbase made with mmdebstrap and imported into podman;
#   node      bookworm + this machine's Node and npm (the Dockerfile's NODE_IMAGE in CI);
#   postgres  bookworm + Debian's PostgreSQL (compose.yaml's POSTGRES_IMAGE in CI);
#   nginx     bookworm + Debian's nginx (compose.yaml's NGINX_IMAGE in CI).
# Each is kept as a cache and rebuilt only when what it is made of changes: its Containerfile,
# the image below it, this machine's Node; the Debian base after a week (security updates), or
# any of them with ACP_AGUI_CI_REBUILD=1.
source "$(dirname "$0")/lib.sh"

BASE_MAX_AGE_DAYS=7

label_of() { podman image inspect --format '{{index .Labels "acp-agui-ci.key"}}' "$1" 2>/dev/null || true; }
id_of() { podman image inspect --format '{{.Id}}' "$1"; }

# The Debian base: rebuilt when missing, older than a week, or asked for.
base_age_days() {
  local created
  created="$(podman image inspect --format '{{.Created.Unix}}' "$BASE_IMAGE" 2>/dev/null)" || {
    echo 9999
    return
  }
  echo $((($(date +%s) - created) / 86400))
}
if [ "${ACP_AGUI_CI_REBUILD:-}" = 1 ] || [ "$(base_age_days)" -ge "$BASE_MAX_AGE_DAYS" ]; then
  started=$(date +%s)
  log "making the Debian bookworm base with mmdebstrap"
  scratch="$(mktemp -d)"
  trap 'rm -rf "$scratch"' EXIT
  # minbase without manuals, docs and translations: the slim images' recipe.
  mmdebstrap --quiet --variant=minbase \
    --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    bookworm "$scratch/base.tar"
  podman import --quiet "$scratch/base.tar" "$BASE_IMAGE" >/dev/null
  rm -rf "$scratch"
  trap - EXIT
  log "base made in $(since "$started") s"
else
  log "Debian base: cached ($(base_age_days) days old)"
fi
base_id="$(id_of "$BASE_IMAGE")"

# Builds image $1 from docker/ci/$2 with context $3 unless its key (its Containerfile, the base
# and $4) is the one it was built with.
build_cached() {
  local image="$1" file="$ci_dir/$2" context="$3" extra="${4:-}" key
  key="$( (cat "$file"; echo "$base_id $extra") | sha256sum | cut -c1-32)"
  if [ "$(label_of "$image")" = "$key" ] && [ "${ACP_AGUI_CI_REBUILD:-}" != 1 ]; then
    log "$(basename "$image"): cached"
    return
  fi
  local started
  started=$(date +%s)
  log "building $(basename "$image")"
  bud --build-arg BASE="$BASE_IMAGE" --label "acp-agui-ci.key=$key" -f "$file" -t "$image" "$context" >/dev/null
  log "$(basename "$image") built in $(since "$started") s"
}

# Node: the context holds this machine's node and npm (node.Containerfile copies them).
node_context="$(mktemp -d)"
trap 'rm -rf "$node_context"' EXIT
node_bin="$(readlink -f "$(command -v node)")"
node_prefix="$(dirname "$(dirname "$node_bin")")"
cp "$node_bin" "$node_context/node"
cp -r "$node_prefix/lib/node_modules/npm" "$node_context/npm"
build_cached "$NODE_BASE_IMAGE" node.Containerfile "$node_context" \
  "$(sha256sum "$node_bin" | cut -c1-64) npm $(npm --version)"

# PostgreSQL and nginx: their context is docker/ci (the entrypoint script).
build_cached "$POSTGRES_CI_IMAGE" postgres.Containerfile "$ci_dir" \
  "$(sha256sum "$ci_dir/postgres-entrypoint.sh")"
build_cached "$NGINX_CI_IMAGE" nginx.Containerfile "$ci_dir"
