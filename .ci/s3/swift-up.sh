#!/usr/bin/env bash
# Start a single-node OpenStack Swift (Debian bookworm packages, 2.30.x) with
# the s3api + tempauth middlewares, as an S3-compatible server for tests/CI.
#
# Idempotent: if an S3 endpoint already answers on 127.0.0.1:$S3_PORT it only
# prints the client env vars and exits 0.  Stop it with swift-down.sh.
#
# Env knobs (all optional):
#   S3_PORT              proxy (S3 API) port                 [8480]
#   SWIFT_STATE_DIR      configs, rings, data, logs, pids     [/tmp/uda-swift]
#   SWIFT_BACKEND_PORT   first of 3 backend ports (obj/cont/acct)  [S3_PORT+1]
#   SWIFT_MEMCACHE_PORT  private memcached port               [S3_PORT+4]
#   SWIFT_START_TIMEOUT  seconds to wait for readiness        [60]
set -euo pipefail
set +m # no job control: a background "setsid cmd &" must exec in place so $! is the server's pid

S3_PORT="${S3_PORT:-8480}"
STATE="${SWIFT_STATE_DIR:-/tmp/uda-swift}"
OBJ_PORT="${SWIFT_BACKEND_PORT:-$((S3_PORT + 1))}"
CONT_PORT="$((OBJ_PORT + 1))"
ACCT_PORT="$((OBJ_PORT + 2))"
MC_PORT="${SWIFT_MEMCACHE_PORT:-$((S3_PORT + 4))}"
TIMEOUT="${SWIFT_START_TIMEOUT:-60}"
ACCESS_KEY="test:tester" # tempauth "account:user" == S3 access key id
SECRET_KEY="testing"
REGION="us-east-1"
MARKER=".uda-swift-state" # only dirs holding this file are ever wiped
PY=/usr/bin/python3       # not a pyenv/venv shim: swift lives in Debian's python
RUN_USER="$(id -un)"

log() { echo "[swift-up] $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

print_env() {
  echo "S3_ENDPOINT=http://127.0.0.1:${S3_PORT} S3_ACCESS_KEY_ID=${ACCESS_KEY} S3_SECRET_ACCESS_KEY=${SECRET_KEY} S3_REGION=${REGION} S3_FORCE_PATH_STYLE=true"
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# SigV4-signed S3 probe, stdlib only. Mode "list": ListBuckets must be 200.
# Mode "smoke": create bucket, put/get/delete an object, delete bucket.
s3_probe() {
  "$PY" - "$1" "$S3_PORT" "$ACCESS_KEY" "$SECRET_KEY" "$REGION" <<'PYEOF'
import datetime, hashlib, hmac, sys, urllib.error, urllib.request
mode, port, ak, sk, region = sys.argv[1:6]
host = '127.0.0.1:%s' % port
def req(method, path, body=b''):
    t = datetime.datetime.now(datetime.timezone.utc)
    amz, day = t.strftime('%Y%m%dT%H%M%SZ'), t.strftime('%Y%m%d')
    ph = hashlib.sha256(body).hexdigest()
    sh = 'host;x-amz-content-sha256;x-amz-date'
    canon = '\n'.join([method, path, '', 'host:' + host,
                       'x-amz-content-sha256:' + ph, 'x-amz-date:' + amz, '', sh, ph])
    scope = '%s/%s/s3/aws4_request' % (day, region)
    sts = '\n'.join(['AWS4-HMAC-SHA256', amz, scope,
                     hashlib.sha256(canon.encode()).hexdigest()])
    k = ('AWS4' + sk).encode()
    for part in (day, region, 's3', 'aws4_request'):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    sig = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
    hdrs = {'Host': host, 'x-amz-date': amz, 'x-amz-content-sha256': ph,
            'Authorization': 'AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, '
                             'Signature=%s' % (ak, scope, sh, sig)}
    r = urllib.request.Request('http://' + host + path, data=body if body else None,
                               headers=hdrs, method=method)
    try:
        with urllib.request.urlopen(r, timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
try:
    if mode == 'list':
        code, body = req('GET', '/')
        ok = code == 200 and b'ListAllMyBucketsResult' in body
        if not ok: print(code, body[:300])
        sys.exit(0 if ok else 1)
    b, payload = '/swift-up-probe', b'hello swift s3api'
    steps = [('PUT', b, b'', 200), ('PUT', b + '/o', payload, 200), ('GET', b + '/o', b'', 200),
             ('DELETE', b + '/o', b'', 204), ('DELETE', b, b'', 204)]
    for m, p, data, want in steps:
        code, body = req(m, p, data)
        if code != want or (m == 'GET' and body != payload):
            print('smoke %s %s -> %s %r' % (m, p, code, body[:300])); sys.exit(1)
except Exception as e:  # connection refused etc.
    print('probe error: %s' % e); sys.exit(2)
PYEOF
}

# ---------------------------------------------------------------- fast path
if port_open "$S3_PORT"; then
  if [[ -x "$PY" ]] && s3_probe list >/dev/null 2>&1; then
    log "S3 endpoint already answering on 127.0.0.1:${S3_PORT}"
    print_env
    exit 0
  fi
  die "something listens on 127.0.0.1:${S3_PORT} but a signed ListBuckets as ${ACCESS_KEY} fails; not touching it"
fi

T0=$SECONDS

# ---------------------------------------------------------------- packages
PKGS=(swift-proxy swift-object swift-account swift-container python3-swift memcached)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  log "installing: ${missing[*]}"
  SUDO=""; [[ "$(id -u)" == 0 ]] || SUDO="sudo"
  apt_install() { $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"; }
  if ! apt_install >/tmp/uda-swift-apt.log 2>&1; then
    log "apt-get install failed; running apt-get update and retrying"
    $SUDO apt-get update -q >>/tmp/uda-swift-apt.log 2>&1 || true
    apt_install >>/tmp/uda-swift-apt.log 2>&1 || { tail -30 /tmp/uda-swift-apt.log >&2; die "apt-get install failed"; }
  fi
  log "packages installed ($((SECONDS - T0))s)"
fi
command -v swift-proxy-server >/dev/null || die "swift-proxy-server not found after install"

# ---------------------------------------------------------------- stale state
if [[ -d "$STATE" ]]; then
  [[ -f "$STATE/$MARKER" || -z "$(ls -A "$STATE")" ]] ||
    die "$STATE exists and is not a swift-up state dir (no $MARKER); refusing to wipe it"
  log "endpoint down but $STATE exists: stopping its leftovers and starting clean"
  if [[ -f "$STATE/$MARKER" ]]; then
    SWIFT_STATE_DIR="$STATE" bash "$(dirname "${BASH_SOURCE[0]}")/swift-down.sh"
  fi
  rm -rf "$STATE"
fi
for port in "$OBJ_PORT" "$CONT_PORT" "$ACCT_PORT" "$MC_PORT"; do
  if port_open "$port"; then
    die "port $port is already in use (set SWIFT_BACKEND_PORT / SWIFT_MEMCACHE_PORT)"
  fi
done

ETC="$STATE/etc"; RUN="$STATE/run"; LOGS="$STATE/log"; DEV="$STATE/srv"
mkdir -p "$ETC" "$RUN" "$LOGS" "$DEV/d1"
touch "$STATE/$MARKER"

# ---------------------------------------------------------------- swift.conf
# Swift reads swift.conf (hash prefix/suffix + storage policies) from the
# hard-coded /etc/swift/swift.conf before any swift_dir setting is honoured.
# Keep an existing one if it is compatible (hash set, only policy 0).
SWIFT_CONF=/etc/swift/swift.conf
swift_conf_ok() {
  [[ -f "$SWIFT_CONF" ]] &&
    grep -Eq '^[[:space:]]*swift_hash_path_(suffix|prefix)[[:space:]]*=[[:space:]]*[^[:space:]]' "$SWIFT_CONF" &&
    ! grep -Eq '^\[storage-policy:[1-9]' "$SWIFT_CONF"
}
if ! swift_conf_ok; then
  if [[ -f "$SWIFT_CONF" ]]; then cp -n "$SWIFT_CONF" "$SWIFT_CONF.uda-orig" || true; fi
  mkdir -p /etc/swift
  cat >"$SWIFT_CONF" <<'EOF'
# written by .ci/s3/swift-up.sh (single-node test Swift)
[swift-hash]
swift_hash_path_prefix = uda-ci-prefix
swift_hash_path_suffix = uda-ci-suffix

[storage-policy:0]
name = Policy-0
default = yes
EOF
fi
cp "$SWIFT_CONF" "$ETC/swift.conf" # for reference only

# ---------------------------------------------------------------- server configs
common_default() { # $1 = port
  cat <<EOF
[DEFAULT]
bind_ip = 127.0.0.1
bind_port = $1
workers = 1
user = ${RUN_USER}
swift_dir = ${ETC}
devices = ${DEV}
mount_check = false
disable_fallocate = true
log_level = INFO
EOF
}
{ common_default "$OBJ_PORT"; cat <<EOF

[pipeline:main]
pipeline = healthcheck object-server

[filter:healthcheck]
use = egg:swift#healthcheck

[app:object-server]
use = egg:swift#object
EOF
} >"$ETC/object-server.conf"
{ common_default "$CONT_PORT"; cat <<EOF

[pipeline:main]
pipeline = healthcheck container-server

[filter:healthcheck]
use = egg:swift#healthcheck

[app:container-server]
use = egg:swift#container
EOF
} >"$ETC/container-server.conf"
{ common_default "$ACCT_PORT"; cat <<EOF

[pipeline:main]
pipeline = healthcheck account-server

[filter:healthcheck]
use = egg:swift#healthcheck

[app:account-server]
use = egg:swift#account
EOF
} >"$ETC/account-server.conf"

cat >"$ETC/proxy-server.conf" <<EOF
[DEFAULT]
bind_ip = 127.0.0.1
bind_port = ${S3_PORT}
workers = 1
user = ${RUN_USER}
swift_dir = ${ETC}
log_level = INFO

# Order per swift's proxy-server.conf-sample: s3api just before tempauth,
# slo after s3api (s3api's auth_pipeline_check enforces this).
[pipeline:main]
pipeline = catch_errors gatekeeper healthcheck proxy-logging cache listing_formats bulk tempurl s3api tempauth copy container-quotas account-quotas slo dlo versioned_writes symlink proxy-logging proxy-server

[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true

[filter:s3api]
use = egg:swift#s3api
location = ${REGION}
s3_acl = false
max_upload_part_num = 10000
max_multi_delete_objects = 1000
cors_preflight_allow_origin = *

[filter:tempauth]
use = egg:swift#tempauth
user_admin_admin = admin .admin .reseller_admin
user_test_tester = ${SECRET_KEY} .admin
user_test2_tester2 = testing2 .admin

[filter:cache]
use = egg:swift#memcache
memcache_servers = 127.0.0.1:${MC_PORT}

[filter:catch_errors]
use = egg:swift#catch_errors
[filter:gatekeeper]
use = egg:swift#gatekeeper
[filter:healthcheck]
use = egg:swift#healthcheck
[filter:proxy-logging]
use = egg:swift#proxy_logging
[filter:listing_formats]
use = egg:swift#listing_formats
[filter:bulk]
use = egg:swift#bulk
[filter:tempurl]
use = egg:swift#tempurl
[filter:copy]
use = egg:swift#copy
[filter:container-quotas]
use = egg:swift#container_quotas
[filter:account-quotas]
use = egg:swift#account_quotas
[filter:slo]
use = egg:swift#slo
max_manifest_segments = 10000
[filter:dlo]
use = egg:swift#dlo
[filter:versioned_writes]
use = egg:swift#versioned_writes
allow_versioned_writes = true
allow_object_versioning = true
[filter:symlink]
use = egg:swift#symlink
EOF

# ---------------------------------------------------------------- rings
# Part power 8, 1 replica, min_part_hours 1, one directory "device" d1 per
# ring. Same RingBuilder code that swift-ring-builder runs, but in one python
# process: 9 swift-ring-builder invocations cost ~5.5 s of interpreter startup.
# Inspect afterwards with: swift-ring-builder $STATE/etc/object.builder
"$PY" - "$ETC" "$ACCT_PORT" "$CONT_PORT" "$OBJ_PORT" >"$LOGS/ring-builder.log" 2>&1 <<'PYEOF' ||
import sys
from swift.common.ring import RingBuilder
etc = sys.argv[1]
for name, port in zip(('account', 'container', 'object'), map(int, sys.argv[2:5])):
    b = RingBuilder(8, 1, 1)
    b.add_dev({'region': 1, 'zone': 1, 'ip': '127.0.0.1', 'port': port,
               'replication_ip': '127.0.0.1', 'replication_port': port,
               'device': 'd1', 'weight': 100.0, 'meta': ''})
    b.rebalance()
    b.validate()
    b.get_ring().save('%s/%s.ring.gz' % (etc, name))
    b.save('%s/%s.builder' % (etc, name))
    print('%s ring: 127.0.0.1:%d/d1, %d partitions' % (name, port, b.parts))
PYEOF
  { cat "$LOGS/ring-builder.log" >&2; die "ring build failed"; }

# ---------------------------------------------------------------- start
start() { # name cmd...
  local name="$1"; shift
  setsid "$@" </dev/null >>"$LOGS/$name.log" 2>&1 &
  echo $! >"$RUN/$name.pid"
}
start memcached memcached -l 127.0.0.1 -p "$MC_PORT" -U 0 -m 64 -u "$RUN_USER"
start account swift-account-server "$ETC/account-server.conf" -v
start container swift-container-server "$ETC/container-server.conf" -v
start object swift-object-server "$ETC/object-server.conf" -v
start proxy swift-proxy-server "$ETC/proxy-server.conf" -v

dump_logs() {
  for f in "$LOGS"/*.log; do echo "----- $f" >&2; tail -20 "$f" >&2; done
}

deadline=$((SECONDS + TIMEOUT))
for name in memcached account container object proxy; do
  case $name in
    memcached) port=$MC_PORT ;; account) port=$ACCT_PORT ;; container) port=$CONT_PORT ;;
    object) port=$OBJ_PORT ;; proxy) port=$S3_PORT ;;
  esac
  until port_open "$port"; do
    kill -0 "$(cat "$RUN/$name.pid")" 2>/dev/null || { dump_logs; die "$name exited during startup"; }
    ((SECONDS < deadline)) || { dump_logs; die "timeout waiting for $name on port $port"; }
    sleep 0.2
  done
done
until s3_probe list >/dev/null 2>&1; do
  ((SECONDS < deadline)) || { s3_probe list >&2 || true; dump_logs; die "timeout waiting for S3 ListBuckets"; }
  sleep 0.3
done
s3_probe smoke >&2 || { dump_logs; die "S3 smoke test (put/get/delete) failed"; }

log "Swift s3api ready on 127.0.0.1:${S3_PORT} in $((SECONDS - T0))s (state: $STATE, logs: $LOGS)"
log "credentials: access key '${ACCESS_KEY}', secret '${SECRET_KEY}', region ${REGION}, path-style"
print_env
