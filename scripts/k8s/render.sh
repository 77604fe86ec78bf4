#!/usr/bin/env bash
# Renders charts/uda into k8s/ (kustomize base + dev overlay). Usage: scripts/k8s/render.sh [OUT_DIR]
# Re-run after every chart change; CI fails when k8s/ differs from a fresh render.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
exec "$repo/node_modules/.bin/node" "$repo/scripts/k8s/render.ts" "$@"
