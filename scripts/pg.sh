#!/usr/bin/env bash
# Private PostgreSQL 15 clusters for development and tests.
#
#   pg.sh start   DATADIR PORT   initdb on first use, start, wait until it answers (idempotent)
#   pg.sh stop    DATADIR        fast shutdown; no error if not running or absent
#   pg.sh destroy DATADIR        stop, then delete the cluster (and its relocated copy)
#   pg.sh status  DATADIR        exit 0 if running
#   pg.sh url     DATADIR PORT   print the libpq connection string
#   pg.sh clone   DATADIR SOURCE_PORT [standby]   pg_basebackup of the cluster on SOURCE_PORT into
#                                  DATADIR (absent or empty); `standby`: a streaming standby of it
#                                  (-R); then `pg.sh start DATADIR PORT` starts it
#
# Env: PG_EXTRA_OPTS   extra server options, e.g. "-c fsync=off -c synchronous_commit=off"
#      PGBIN           PostgreSQL binaries (default /usr/lib/postgresql/15/bin)
#
# The server refuses to run as root, so as root every server command runs as the `postgres`
# user; as any other user they run as that user. Clusters listen on 127.0.0.1 only, with trust
# authentication for user postgres: they are for local development and tests, never production.
#
# Unreachable checkouts: CI may clone the repo under a directory the postgres user cannot enter
# (e.g. /root). Opening up the permissions of such a directory (chmod o+x /root) would change the
# security of the whole machine, so instead the real cluster lives in
# /var/tmp/write-gateway-pg-<hash of DATADIR's path> (owned by postgres, mode 0700) and DATADIR
# becomes a symlink to it. The same happens when DATADIR's path is too long for a Unix socket
# or holds characters that pg_ctl's shell command line would misread. Debian does not clean
# /var/tmp, so a relocated cluster persists like one in DATADIR; `pg.sh destroy` removes both.
set -euo pipefail

PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
RELOCATE_PREFIX=/var/tmp/write-gateway-pg-

die() { echo "pg.sh: $*" >&2; exit 1; }
say() { echo "pg.sh: $*" >&2; }

usage() {
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

is_root() { [ "$(id -u)" -eq 0 ]; }

# Run a command as the server's user. `cd /` first: initdb and pg_ctl fail when the caller's
# working directory is one the postgres user cannot enter.
as_pg() {
  if is_root; then
    (cd / && runuser -u postgres -- "$@")
  else
    (cd / && "$@")
  fi
}

pg_user() { if is_root; then echo postgres; else id -un; fi; }

# Can the server's user use PATH as its data directory? Checks that every parent is enterable,
# that the socket path fits in sun_path (107 bytes: "<dir>/socket/.s.PGSQL.<port>") and that
# the path has no character pg_ctl's shell command line could misinterpret.
usable_path() {
  local path=$1
  [ "${#path}" -le 80 ] || return 1
  case $path in *[!A-Za-z0-9/._+-]*) return 1 ;; esac
  as_pg test -x "$(dirname -- "$path")" 2>/dev/null
}

# Absolute path of DATADIR without resolving DATADIR itself (it may be our symlink).
link_path() {
  local dir=$1 parent
  parent=$(realpath -m -- "$(dirname -- "$dir")")
  echo "${parent%/}/$(basename -- "$dir")"
}

relocated_path() {
  local hash
  hash=$(printf '%s' "$1" | sha256sum | cut -c1-16)
  echo "${RELOCATE_PREFIX}${hash}"
}

# The real cluster directory for DATADIR, without creating anything. Empty output: DATADIR
# does not exist and would need relocation that has not happened yet (or happened and was lost).
real_datadir() {
  local link=$1 target
  if [ -L "$link" ]; then
    realpath -m -- "$link"
  elif [ -e "$link" ] || usable_path "$link"; then
    echo "$link"
  else
    target=$(relocated_path "$link")
    if [ -d "$target" ]; then echo "$target"; fi
  fi
}

# A directory we create in world-writable /var/tmp must be ours: a real directory (not a
# symlink someone planted) owned by the server's user.
check_relocated_dir() {
  local dir=$1
  if [ -L "$dir" ] || [ ! -d "$dir" ]; then die "$dir exists but is not a directory"; fi
  [ "$(stat -c %U -- "$dir")" = "$(pg_user)" ] || die "$dir is not owned by $(pg_user); refusing to use it"
}

# Make sure an empty (or initialised) data directory exists and is owned by the server's user.
# Prints the real directory.
prepare_datadir() {
  local link=$1 real
  if [ -L "$link" ]; then
    real=$(realpath -m -- "$link")
    case $real in
      "$RELOCATE_PREFIX"*) if [ -e "$real" ] || [ -L "$real" ]; then check_relocated_dir "$real"; else mkdir -m 0700 -- "$real"; fi ;;
    esac
  elif usable_path "$link"; then
    real=$link
  else
    # DATADIR is absent or an empty directory here (a non-empty one we cannot relocate), so the
    # caller expects a fresh cluster: discard any cluster left behind at the relocated path.
    if [ -d "$link" ] && [ -n "$(ls -A -- "$link")" ]; then
      die "$link is not usable by user $(pg_user) (parent not enterable, path too long or unusual characters) and is not empty, so it cannot be relocated"
    fi
    real=$(relocated_path "$link")
    if [ -e "$real" ] || [ -L "$real" ]; then
      check_relocated_dir "$real"
      as_pg "$PGBIN/pg_ctl" -D "$real" stop -m immediate >/dev/null 2>&1 || true
      rm -rf -- "$real"
    fi
    # Plain mkdir (not -p) fails if someone created the name since the check above.
    mkdir -m 0700 -- "$real"
    say "$link: path not usable by user $(pg_user) (parent not enterable, too long for a socket or unusual characters); real cluster in $real (symlinked)"
    mkdir -p -- "$(dirname -- "$link")"
    [ ! -d "$link" ] || rmdir -- "$link"
    ln -s -- "$real" "$link"
  fi

  if [ ! -e "$real" ]; then
    mkdir -p -- "$real"
  elif [ ! -f "$real/PG_VERSION" ] && [ -n "$(ls -A -- "$real")" ]; then
    die "$real exists, is not empty and is not a PostgreSQL cluster"
  fi
  if is_root && [ "$(stat -c %U -- "$real")" != postgres ]; then
    [ ! -f "$real/PG_VERSION" ] || die "$real is a cluster not owned by postgres; refusing to chown it"
    chown postgres:postgres -- "$real"
  fi
  chmod 0700 -- "$real"
  echo "$real"
}

# Serialise start/stop/destroy of one DATADIR (parallel callers on different DATADIRs do not
# contend). The lock sits beside DATADIR, where the caller can always write.
take_lock() {
  local link=$1
  mkdir -p -- "$(dirname -- "$link")"
  exec 9>"$(dirname -- "$link")/.$(basename -- "$link").lock"
  flock 9
}

running() { [ -n "$1" ] && [ -f "$1/PG_VERSION" ] && as_pg "$PGBIN/pg_ctl" -D "$1" status >/dev/null 2>&1; }

# Port of a running cluster: line 4 of postmaster.pid.
running_port() { as_pg sed -n 4p "$1/postmaster.pid"; }

cmd_start() {
  local link=$1 port=$2 real log
  case $port in '' | *[!0-9]*) die "bad port: $port" ;; esac
  take_lock "$link"
  real=$(prepare_datadir "$link")
  log=$real/postgres.log

  if running "$real"; then
    local have
    have=$(running_port "$real")
    [ "$have" = "$port" ] || die "$link is already running on port $have, not $port"
    say "$link already running on port $port"
  else
    if [ ! -f "$real/PG_VERSION" ]; then
      # C locale: no dependence on the caller's LANG or on which locales are generated.
      as_pg "$PGBIN/initdb" -D "$real" --auth=trust -U postgres --locale=C -E UTF8 >/dev/null \
        || die "initdb failed for $real"
      # Also any other address of this host: a test that adds one (a private network namespace,
      # with PG_EXTRA_OPTS widening listen_addresses) connects through it. Nothing outside the
      # host matches, and by default the server listens on 127.0.0.1 only.
      echo "host all all samehost trust" | as_pg tee -a "$real/pg_hba.conf" >/dev/null
    fi
    as_pg mkdir -p "$real/socket"
    # Close the lock descriptor for pg_ctl: the postmaster would otherwise inherit it and hold
    # the lock for its whole life, blocking a later `stop`.
    # PG_EXTRA_OPTS is deliberately unquoted inside -o: it is a list of server options.
    if ! as_pg "$PGBIN/pg_ctl" -D "$real" -l "$log" -s -w -t 60 \
      -o "-p $port -k $real/socket -c listen_addresses=127.0.0.1 -c max_connections=300 ${PG_EXTRA_OPTS:-}" \
      start >&2 9>&-; then
      as_pg tail -n 20 "$log" >&2 || true
      die "could not start $link on port $port (log: $log)"
    fi
  fi

  local _
  for _ in $(seq 1 100); do
    if "$PGBIN/pg_isready" -q -h 127.0.0.1 -p "$port" -t 1; then
      return 0
    fi
    sleep 0.1
  done
  die "$link started but 127.0.0.1:$port does not answer (log: $log)"
}

cmd_stop() {
  local link=$1 real
  real=$(real_datadir "$link")
  [ -n "$real" ] || return 0 # nothing was ever created: nothing to stop, no lock file left
  take_lock "$link"
  if running "$real"; then
    as_pg "$PGBIN/pg_ctl" -D "$real" stop -s -m fast -w -t 60 >&2
  fi
}

cmd_destroy() {
  local link=$1 real
  cmd_stop "$link"
  real=$(real_datadir "$link")
  if [ -n "$real" ] && [ "$real" != "$link" ]; then
    case $real in
      "$RELOCATE_PREFIX"*) if [ -e "$real" ]; then check_relocated_dir "$real"; rm -rf -- "$real"; fi ;;
      *) die "$link points outside $RELOCATE_PREFIX*; remove it yourself" ;;
    esac
  fi
  rm -rf -- "$link"
  rm -f -- "$(dirname -- "$link")/.$(basename -- "$link").lock"
}

# A copy of a running cluster, as an operator makes a backup or a new standby: the restore and
# lagging-standby tests of the authority guard (tests/store/authority_guard_tests.cpp) start it.
cmd_clone() {
  local link=$1 source=$2 mode=${3:-backup} real
  case $source in '' | *[!0-9]*) die "bad port: $source" ;; esac
  case $mode in backup | standby) ;; *) die "clone mode must be backup or standby, not $mode" ;; esac
  take_lock "$link"
  real=$(prepare_datadir "$link")
  [ ! -f "$real/PG_VERSION" ] || die "$link is already a cluster"
  local standby=()
  if [ "$mode" = standby ]; then standby=(-R); fi
  as_pg "$PGBIN/pg_basebackup" -h 127.0.0.1 -p "$source" -U postgres -D "$real" -X stream -c fast "${standby[@]}" \
    9>&- >&2 || die "pg_basebackup from port $source into $real failed"
}

cmd_url() {
  local port=$2
  case $port in '' | *[!0-9]*) die "bad port: $port" ;; esac
  echo "host=127.0.0.1 port=$port user=postgres dbname=postgres"
}

[ $# -ge 2 ] || usage
command=$1
datadir=$(link_path "$2")
case $command in
  start) [ $# -eq 3 ] || usage; cmd_start "$datadir" "$3" ;;
  stop) [ $# -eq 2 ] || usage; cmd_stop "$datadir" ;;
  destroy) [ $# -eq 2 ] || usage; cmd_destroy "$datadir" ;;
  status) [ $# -eq 2 ] || usage; running "$(real_datadir "$datadir")" ;;
  url) [ $# -eq 3 ] || usage; cmd_url "$datadir" "$3" ;;
  clone) [ $# -ge 3 ] && [ $# -le 4 ] || usage; cmd_clone "$datadir" "$3" "${4:-backup}" ;;
  *) usage ;;
esac
