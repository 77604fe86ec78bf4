#!/usr/bin/env bash
# Stop what swift-up.sh started (pids in $SWIFT_STATE_DIR/run/*.pid) and
# remove the state dir. Safe to run when nothing is running.
set -euo pipefail
STATE="${SWIFT_STATE_DIR:-/tmp/uda-swift}"
MARKER=".uda-swift-state"
log() { echo "[swift-down] $*" >&2; }

[[ -d "$STATE" ]] || { log "no state dir $STATE; nothing to do"; exit 0; }
[[ -f "$STATE/$MARKER" ]] || { log "ERROR: $STATE has no $MARKER; refusing to touch it"; exit 1; }

pids=()
for pf in "$STATE"/run/*.pid; do
  [[ -f "$pf" ]] || continue
  pid="$(cat "$pf")"
  [[ "$pid" =~ ^[0-9]+$ ]] || continue
  # only signal it if the pid still is one of ours (guards against pid reuse)
  cmd="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null || true)"
  [[ "$cmd" == *"$STATE/etc/"* || "$cmd" == "memcached -l 127.0.0.1 -p "* ]] || continue
  # started via setsid: pid == process group id, so the group signal also
  # reaches the forked swift workers.
  if kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null; then
    pids+=("$pid")
    log "stopping $(basename "$pf" .pid) (pid $pid)"
  fi
done
for _ in $(seq 1 50); do # up to 10 s for a graceful exit
  alive=0
  for pid in "${pids[@]}"; do kill -0 -- "-$pid" 2>/dev/null && alive=1; done
  ((alive)) || break
  sleep 0.2
done
for pid in "${pids[@]}"; do kill -KILL -- "-$pid" 2>/dev/null || true; done
rm -rf "$STATE"
log "stopped and removed $STATE"
