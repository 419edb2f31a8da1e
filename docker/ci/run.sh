#!/usr/bin/env bash
# The container checks CI runs (.ci/run), in order: the base images (cached), the image and
# its checks, then the compose stack. docker/README.md says what each proves.
source "$(dirname "$0")/lib.sh"
started=$(date +%s)
for step in base image compose; do
  log "== $step.sh"
  bash "$ci_dir/$step.sh"
done
log "all container checks passed in $(since "$started") s"
