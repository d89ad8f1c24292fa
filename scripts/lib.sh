# scripts/lib.sh -- shared by scripts/demo.sh, scripts/test.sh and the t/ tests.
#
# Source it from bash:  . "$(dirname "$0")/lib.sh"
#
#   wc_need_packages PKG...  install the Debian packages that are missing (apt-get, sudo if not root)
#   wc_build [LOG]           build the engine and the extension, install the extension
#   wc_cluster_start [initdb options...]
#                            a throw-away PostgreSQL 15 cluster in a temporary directory, run as
#                            user postgres when we are root, else as the current user; exports
#                            PGHOST PGPORT PGUSER PGDATABASE; stopped and removed on exit,
#                            Ctrl-C or TERM (set WC_KEEP_CLUSTER=1 to keep its directory)
#   wc_cluster_stop          stop it and remove its directory now
#   wc_cluster_kill9         kill -9 the postmaster and every backend (a crash)
#   wc_cluster_restart       start it again after a stop or a crash
#   wc_psql ARGS...          psql -X -v ON_ERROR_STOP=1 -qAt against that cluster
#   wc_on_exit 'COMMAND'     run COMMAND at exit too (before the cluster is stopped)
#
# The cluster has shared_preload_libraries = 'widecol_fdw' (WC_EXTRA_CONF="shared_preload_libraries
# = ''" takes it away: WC_EXTRA_CONF's lines come last) and is ready to be a primary (wal_level
# replica, WAL senders, slots).  Other clusters run beside it, each named; "main" names the first:
#   wc_standby_create NAME [FROM]   a streaming hot standby of FROM (main), slot wc_NAME, started
#   wc_wait_replay NAME [FROM] [S]  wait until NAME replayed FROM's WAL up to its current LSN
#   wc_basebackup FROM DEST [OPT..] pg_basebackup -X stream -c fast into DEST (output DEST.log)
#   wc_node_create NAME [OPT..]     a new empty cluster (initdb OPTs, main's settings), started
#   wc_node_from_backup NAME BACKUP a new cluster from a copy of a base backup (not started)
#   wc_archive_on NAME DIR          archive_mode = on, archive_command copying into DIR; restart
#   wc_archive_switch NAME DIR      pg_switch_wal, wait until the segment is in DIR
#   wc_node_pitr NAME BACKUP ARCHIVE SETTING...
#                                   restore BACKUP with recovery.signal, restore_command from
#                                   ARCHIVE and the target SETTINGs; started, promoted, waited for
#   wc_node_start/stop/restart/kill9/promote NAME, wc_node_running NAME,
#   wc_node_wait_primary NAME       wait until NAME is out of recovery
#   wc_node_psql NAME ARGS...       wc_psql against NAME
#   wc_node_conf NAME LINE...       append to NAME's postgresql.conf
#   wc_node_as_user NAME CMD...     CMD as the clusters' user, in NAME's directory
#   wc_node_dir/pgdata/port/log NAME, wc_node_remove NAME
# Every other cluster lives in $WC_CLUSTER_DIR/node-NAME and is stopped (before main) and removed
# by wc_cluster_stop, hence at exit, also on failure.
#
# Nothing here depends on what was installed by hand: the PostgreSQL binaries are the
# ones of the postgresql-15 package, found through its own pg_config.
#
# WC_DESTDIR=DIR (optional): a private installation.  The package's PostgreSQL is copied
# under DIR once (wc_copy_postgres), wc_build installs into it (make install DESTDIR=DIR)
# and every cluster runs its binaries; the system's PostgreSQL is left alone, so several
# builds can be tested at once on one machine.

WC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WC_PGVERSION=15
WC_DESTDIR=${WC_DESTDIR:-}
WC_PGBIN=$WC_DESTDIR/usr/lib/postgresql/$WC_PGVERSION/bin
PG_CONFIG=/usr/lib/postgresql/$WC_PGVERSION/bin/pg_config
export PG_CONFIG WC_DESTDIR

# What building and testing need, as Debian package names.
WC_BUILD_PACKAGES=(build-essential postgresql-$WC_PGVERSION postgresql-server-dev-$WC_PGVERSION
                   postgresql-contrib liblz4-dev libzstd-dev procps)
WC_TEST_PACKAGES=("${WC_BUILD_PACKAGES[@]}" clang libclang-rt-14-dev)

wc_say()  { printf '==> %s\n' "$*"; }
wc_warn() { printf 'widecol: %s\n' "$*" >&2; }
wc_die()  { printf 'widecol: error: %s\n' "$*" >&2; exit 1; }

wc_is_root() { [ "$(id -u)" -eq 0 ]; }

# Runs a command as root: directly when we are root, else through sudo.
wc_as_root() {
    if wc_is_root; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        wc_die "'$*' needs root, and sudo is not installed: run it as root, or install sudo"
    fi
}

wc_package_installed() {
    [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}

# wc_need_packages PKG...: installs those of PKG... that are not installed.  apt-get update runs
# first when the package lists are empty, and again when an install fails (a package unknown
# to old lists, or a version no longer on the mirror).
wc_need_packages() {
    local p missing=()
    for p in "$@"; do
        wc_package_installed "$p" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    command -v apt-get >/dev/null 2>&1 ||
        wc_die "missing packages ${missing[*]}, and this is not a Debian system (no apt-get)"
    wc_say "installing ${missing[*]} (apt-get)"
    local apt=(env DEBIAN_FRONTEND=noninteractive apt-get -y -q -o DPkg::Lock::Timeout=300)
    if [ -z "$(ls -A /var/lib/apt/lists 2>/dev/null | grep -v -e '^lock$' -e '^partial$' -e '^auxfiles$')" ]; then
        wc_as_root "${apt[@]}" update >/dev/null || wc_die "apt-get update failed"
    fi
    if ! wc_as_root "${apt[@]}" install --no-install-recommends "${missing[@]}" </dev/null; then
        wc_say "apt-get install failed; running apt-get update and trying again"
        wc_as_root "${apt[@]}" update >/dev/null || wc_die "apt-get update failed"
        wc_as_root "${apt[@]}" install --no-install-recommends "${missing[@]}" </dev/null ||
            wc_die "could not install ${missing[*]}"
    fi
    for p in "${missing[@]}"; do
        wc_package_installed "$p" || wc_die "package $p is still not installed"
    done
}

# wc_build [LOG]: make -C engine, make, make install (as root).  With LOG the compiler's output
# goes there and only its tail is shown on failure.  Returns non-zero if any step fails.
wc_build() {
    local log=${1:-} jobs
    jobs=$(nproc 2>/dev/null || echo 2)
    [ -x "$PG_CONFIG" ] || { wc_warn "$PG_CONFIG not found: is postgresql-$WC_PGVERSION installed?"; return 1; }
    (
        cd "$WC_ROOT" || exit 1
        [ -z "$log" ] || exec >"$log" 2>&1
        # (no set -e: it does not work in a subshell whose status is tested)
        if [ -n "$WC_DESTDIR" ] && [ ! -x "$WC_PGBIN/postgres" ]; then
            wc_copy_postgres "$WC_DESTDIR" || exit 1
        fi
        make -C engine -j"$jobs" &&
        make -j"$jobs" PG_CONFIG="$PG_CONFIG" &&
        if [ -n "$WC_DESTDIR" ]; then
            make install PG_CONFIG="$PG_CONFIG" DESTDIR="$WC_DESTDIR"
        else
            wc_as_root make install PG_CONFIG="$PG_CONFIG"
        fi
    )
    local rc=$?
    if [ $rc -ne 0 ] && [ -n "$log" ]; then
        wc_warn "the build failed; the end of $log:"
        tail -n 40 "$log" >&2
    fi
    return $rc
}

# --- cleanup on exit, Ctrl-C and TERM -------------------------------------------------------

WC_ON_EXIT=()
WC_TRAPS_SET=

wc_on_exit() {
    WC_ON_EXIT+=("$1")
    wc_set_traps
}

wc_set_traps() {
    [ -n "$WC_TRAPS_SET" ] && return 0
    WC_TRAPS_SET=1
    trap 'wc_exit_trap' EXIT
    trap 'wc_warn "interrupted; cleaning up"; exit 130' INT
    trap 'wc_warn "terminated; cleaning up"; exit 143' TERM
    trap 'exit 129' HUP
}

wc_exit_trap() {
    local rc=$? i
    set +e
    trap '' INT TERM          # a second Ctrl-C must not leave the cluster behind
    for ((i = ${#WC_ON_EXIT[@]} - 1; i >= 0; i--)); do
        eval "${WC_ON_EXIT[$i]}" >/dev/null 2>&1
    done
    wc_cluster_stop
    exit $rc
}

# wc_copy_postgres DIR: a private copy of this PostgreSQL installation under DIR/usr (binaries,
# libraries, share), without any widecol_fdw, to install a special build into with DESTDIR=DIR
# (scripts/asan-suite.sh, scripts/valgrind-suite.sh); sets WC_PGCOPY_BIN to its bin directory.
wc_copy_postgres() {
    local dir=$1
    mkdir -p "$dir/usr/lib/postgresql" "$dir/usr/share/postgresql" &&
    cp -a "/usr/lib/postgresql/$WC_PGVERSION" "$dir/usr/lib/postgresql/" &&
    cp -a "/usr/share/postgresql/$WC_PGVERSION" "$dir/usr/share/postgresql/" || return 1
    rm -f "$dir/usr/lib/postgresql/$WC_PGVERSION/lib/widecol_fdw.so"
    rm -rf "$dir/usr/lib/postgresql/$WC_PGVERSION/lib/bitcode/widecol_fdw"*
    rm -f "$dir/usr/share/postgresql/$WC_PGVERSION/extension/widecol_fdw"*
    export WC_PGCOPY_BIN=$dir/usr/lib/postgresql/$WC_PGVERSION/bin
}

# --- a throw-away cluster --------------------------------------------------------------------

WC_CLUSTER_DIR=
WC_PGDATA=
WC_CLUSTER_PORT=

# The user that runs the cluster: initdb and postgres refuse to run as root.
wc_cluster_user() {
    if wc_is_root; then echo postgres; else id -un; fi
}

# Runs a command as the cluster's user, from the cluster's directory (root's current directory
# may not be readable by postgres).
wc_as_cluster_user() {
    if wc_is_root; then
        (cd "${WC_CLUSTER_DIR:-/}" && runuser -u postgres -- "$@")
    else
        (cd "${WC_CLUSTER_DIR:-/}" && "$@")
    fi
}

# A port nobody listens on, from 5433 up.  The server listens on a Unix socket in its own
# directory only, so the port merely names that socket; still, keep clear of others.
wc_free_port() {
    local p
    for ((p = ${WC_PORT_BASE:-5433}; p < 5433 + 500; p++)); do
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null &&
           ! ls /tmp/.s.PGSQL."$p" /var/run/postgresql/.s.PGSQL."$p" >/dev/null 2>&1; then
            echo "$p"; return 0
        fi
    done
    return 1
}

wc_cluster_start() {
    if [ -n "$WC_CLUSTER_DIR" ]; then
        wc_warn "wc_cluster_start: a cluster already runs in $WC_CLUSTER_DIR"; return 1
    fi
    local user port
    user=$(wc_cluster_user)
    if wc_is_root && ! id postgres >/dev/null 2>&1; then
        wc_warn "user postgres does not exist (it comes with the postgresql-$WC_PGVERSION package)"
        return 1
    fi
    [ -x "$WC_PGBIN/initdb" ] || { wc_warn "$WC_PGBIN/initdb not found: install postgresql-$WC_PGVERSION"; return 1; }
    port=$(wc_free_port) || { wc_warn "no free port found from 5433 up"; return 1; }
    wc_set_traps
    WC_CLUSTER_DIR=$(mktemp -d "${WC_TMPDIR:-/tmp}/widecol-pg.XXXXXX") || { wc_warn "mktemp failed"; return 1; }
    WC_PGDATA=$WC_CLUSTER_DIR/data
    wc_is_root && chown postgres: "$WC_CLUSTER_DIR"

    if ! wc_as_cluster_user "$WC_PGBIN/initdb" -D "$WC_PGDATA" -U "$user" -A trust \
            --encoding=UTF8 --locale=C -N "$@" >"$WC_CLUSTER_DIR/initdb.log" 2>&1; then
        cat "$WC_CLUSTER_DIR/initdb.log" >&2
        wc_warn "initdb failed"
        wc_cluster_stop
        return 1
    fi
    wc_as_cluster_user tee -a "$WC_PGDATA/postgresql.conf" >/dev/null <<EOF

# widecol_fdw throw-away cluster (scripts/lib.sh)
listen_addresses = ''
port = $port
unix_socket_directories = '$WC_CLUSTER_DIR'
fsync = on
max_connections = 50
max_prepared_transactions = 64
restart_after_crash = on
log_line_prefix = '%m [%p] '
# the extension's WAL resource manager must be there from the start (and in every copy)
shared_preload_libraries = 'widecol_fdw'
# streaming standbys and base backups (wc_standby_create, wc_basebackup)
wal_level = replica
max_wal_senders = 10
max_replication_slots = 10
hot_standby = on
hot_standby_feedback = on
wal_receiver_status_interval = 1s
${WC_EXTRA_CONF:-}
EOF
    WC_CLUSTER_PORT=$port
    export PGHOST=$WC_CLUSTER_DIR PGPORT=$port PGUSER=$user PGDATABASE=postgres
    unset PGSERVICE PGSERVICEFILE PGHOSTADDR PGPASSWORD PGOPTIONS PGSSLMODE PGTARGETSESSIONATTRS
    wc_cluster_restart || { wc_cluster_stop; return 1; }
}

# Starts the cluster (again): after wc_cluster_start's initdb, a stop or wc_cluster_kill9.
wc_cluster_restart() {
    if ! wc_as_cluster_user "$WC_PGBIN/pg_ctl" -D "$WC_PGDATA" -l "$WC_CLUSTER_DIR/server.log" \
            -w -t 120 start >/dev/null 2>&1; then
        tail -n 30 "$WC_CLUSTER_DIR/server.log" >&2
        wc_warn "the PostgreSQL server did not start (the end of its log is above)"
        return 1
    fi
}

wc_postmaster_pid() {
    [ -f "$WC_PGDATA/postmaster.pid" ] && head -n 1 "$WC_PGDATA/postmaster.pid"
}

# Kills the postmaster and all its processes with SIGKILL at once, as a power cut would
# (less the loss of what the kernel had not yet written), and waits until they are gone.
wc_cluster_kill9() {
    wc__kill9 "$WC_PGDATA"
}

# wc__kill9 PGDATA: kill -9 of the postmaster of PGDATA and of its children, waiting until they
# are gone; nothing when no postmaster.pid is there.
wc__kill9() {
    local pm pids i
    pm=$(wc__postmaster_pid "$1") || return 0
    pids="$pm $(pgrep -P "$pm" 2>/dev/null | tr '\n' ' ')"
    kill -9 $pids 2>/dev/null
    for ((i = 0; i < 300; i++)); do
        kill -0 $pids 2>/dev/null || return 0
        sleep 0.1
    done
    wc_warn "processes $pids still alive 30 s after kill -9"
    return 1
}

wc__postmaster_pid() {
    [ -f "$1/postmaster.pid" ] && head -n 1 "$1/postmaster.pid"
}

wc_cluster_stop() {
    [ -n "$WC_CLUSTER_DIR" ] || return 0
    wc__nodes_stop_all
    if [ -n "$(wc_postmaster_pid)" ] && kill -0 "$(wc_postmaster_pid)" 2>/dev/null; then
        wc_as_cluster_user "$WC_PGBIN/pg_ctl" -D "$WC_PGDATA" -m fast -w -t 30 stop >/dev/null 2>&1 ||
            wc_cluster_kill9
    fi
    if [ -n "${WC_KEEP_CLUSTER:-}" ]; then
        wc_warn "kept the cluster's directory $WC_CLUSTER_DIR"
    else
        rm -rf "$WC_CLUSTER_DIR"
    fi
    WC_CLUSTER_DIR=
    WC_PGDATA=
    WC_CLUSTER_PORT=
}

wc_psql() {
    "$WC_PGBIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 "$@"
}

# --- more clusters beside the first: standbys, restored base backups -------------------------
#
# Every cluster has a name (letters, digits, _).  "main" is the one of wc_cluster_start (PGHOST
# and PGPORT keep pointing at it, and wc_psql and the wc_cluster_* functions still act on it);
# the others live in $WC_CLUSTER_DIR/node-NAME/ (data/, server.log, their Unix socket), each
# with a port of its own, and are stopped by wc_cluster_stop before "main", hence at exit too,
# and removed with its directory (WC_KEEP_CLUSTER=1 keeps them all there).

WC_NODES=()                    # the names of the other clusters, in the order they were made
declare -gA WC_NODE_PORT=()    # NAME -> port

wc__node_known() {
    if [ "$1" = main ]; then
        [ -n "$WC_CLUSTER_DIR" ] || { wc_warn "no cluster runs (wc_cluster_start first)"; return 1; }
    else
        [ -n "${WC_NODE_PORT[$1]:-}" ] || { wc_warn "no cluster named '$1'"; return 1; }
    fi
}

# wc_node_dir / wc_node_pgdata / wc_node_port / wc_node_log NAME: where NAME lives.
wc_node_dir() {
    wc__node_known "$1" || return 1
    if [ "$1" = main ]; then echo "$WC_CLUSTER_DIR"; else echo "$WC_CLUSTER_DIR/node-$1"; fi
}
wc_node_pgdata() { local d; d=$(wc_node_dir "$1") || return 1; echo "$d/data"; }
wc_node_log() { local d; d=$(wc_node_dir "$1") || return 1; echo "$d/server.log"; }
wc_node_port() {
    wc__node_known "$1" || return 1
    if [ "$1" = main ]; then echo "$WC_CLUSTER_PORT"; else echo "${WC_NODE_PORT[$1]}"; fi
}

# wc_node_as_user NAME CMD...: CMD as the clusters' user, from NAME's directory.
wc_node_as_user() {
    local d
    d=$(wc_node_dir "$1") || return 1
    shift
    if wc_is_root; then
        (cd "$d" && runuser -u postgres -- "$@")
    else
        (cd "$d" && "$@")
    fi
}

# wc_node_psql NAME ARGS...: wc_psql (psql -X -v ON_ERROR_STOP=1 -qAt) against NAME.
wc_node_psql() {
    local d p
    d=$(wc_node_dir "$1") && p=$(wc_node_port "$1") || return 1
    shift
    PGHOST=$d PGPORT=$p wc_psql "$@"
}

# wc_node_conf NAME LINE...: appends the lines to NAME's postgresql.conf (they win over what is
# above them; read at the next start, or at a reload for what a reload changes).
wc_node_conf() {
    local name=$1 data
    data=$(wc_node_pgdata "$name") || return 1
    shift
    printf '%s\n' "$@" | wc_node_as_user "$name" tee -a "$data/postgresql.conf" >/dev/null
}

# A port that neither wc_free_port's checks nor a cluster of ours uses.
wc__node_new_port() {
    local p base=${WC_PORT_BASE:-5433} used=" $WC_CLUSTER_PORT ${WC_NODE_PORT[*]} "
    while p=$(WC_PORT_BASE=$base wc_free_port); do
        [[ "$used" == *" $p "* ]] || { echo "$p"; return 0; }
        base=$((p + 1))
    done
    return 1
}

# wc__node_new NAME: registers NAME, with a port and an empty directory (no data/ yet).
wc__node_new() {
    local name=$1 port d
    [ -n "$WC_CLUSTER_DIR" ] || { wc_warn "wc_cluster_start first: other clusters live in its directory"; return 1; }
    [[ "$name" =~ ^[A-Za-z0-9_]+$ ]] && [ "$name" != main ] || { wc_warn "bad cluster name '$name'"; return 1; }
    [ -z "${WC_NODE_PORT[$name]:-}" ] || { wc_warn "a cluster named '$name' exists already"; return 1; }
    port=$(wc__node_new_port) || { wc_warn "no free port found"; return 1; }
    d=$WC_CLUSTER_DIR/node-$name
    rm -rf "$d"
    mkdir "$d" || return 1
    if wc_is_root; then chown postgres: "$d" || return 1; fi
    WC_NODE_PORT[$name]=$port
    WC_NODES+=("$name")
}

# What a new cluster's copied postgresql.conf gets appended: its own port, socket directory and
# name, and no archiving (a copy must not write into the archive of the cluster it came from;
# wc_archive_on turns it on).
wc__node_own_conf() {
    wc_node_conf "$1" "" "# cluster '$1' (scripts/lib.sh)" "port = ${WC_NODE_PORT[$1]}" \
        "unix_socket_directories = '$WC_CLUSTER_DIR/node-$1'" "cluster_name = '$1'" "archive_mode = off"
}

# wc_node_start NAME: pg_ctl start, waiting until it takes connections (a standby: once it is
# consistent); shows the end of its log on failure.
wc_node_start() {
    local data log
    data=$(wc_node_pgdata "$1") && log=$(wc_node_log "$1") || return 1
    if ! wc_node_as_user "$1" "$WC_PGBIN/pg_ctl" -D "$data" -l "$log" -w -t 120 start >/dev/null 2>&1; then
        tail -n 30 "$log" >&2
        wc_warn "cluster '$1' did not start (the end of its log is above)"
        return 1
    fi
}

# wc_node_running NAME: its postmaster is alive.
wc_node_running() {
    local data pm
    data=$(wc_node_pgdata "$1") || return 1
    pm=$(wc__postmaster_pid "$data") && kill -0 "$pm" 2>/dev/null
}

# wc_node_stop NAME [MODE]: pg_ctl stop -m MODE (fast), a kill -9 if that fails; keeps its data.
wc_node_stop() {
    local data
    data=$(wc_node_pgdata "$1") || return 1
    wc_node_running "$1" || return 0
    wc_node_as_user "$1" "$WC_PGBIN/pg_ctl" -D "$data" -m "${2:-fast}" -w -t 60 stop >/dev/null 2>&1 ||
        wc__kill9 "$data"
}

wc_node_restart() { wc_node_stop "$1" && wc_node_start "$1"; }

# wc_node_kill9 NAME: kill -9 of NAME's postmaster and every process of it at once (a crash).
wc_node_kill9() {
    local data
    data=$(wc_node_pgdata "$1") || return 1
    wc__kill9 "$data"
}

# wc_node_wait_primary NAME [SECONDS]: waits until NAME is out of recovery (120 s); fails at
# once if its postmaster is gone (recovery failed: the end of its log is shown).
wc_node_wait_primary() {
    local i secs=${2:-120}
    for ((i = 0; i < secs * 10; i++)); do
        [ "$(wc_node_psql "$1" -c "SELECT pg_is_in_recovery()" 2>/dev/null)" = f ] && return 0
        if ! wc_node_running "$1"; then
            tail -n 20 "$(wc_node_log "$1")" >&2
            wc_warn "cluster '$1' stopped before the end of its recovery (the end of its log is above)"
            return 1
        fi
        sleep 0.1
    done
    wc_warn "cluster '$1' is still in recovery after $secs s"
    return 1
}

# wc_node_promote NAME: pg_ctl promote (waits for it), then until NAME is out of recovery.
wc_node_promote() {
    local data
    data=$(wc_node_pgdata "$1") || return 1
    if ! wc_node_as_user "$1" "$WC_PGBIN/pg_ctl" -D "$data" -w -t 120 promote >/dev/null 2>&1; then
        tail -n 20 "$(wc_node_log "$1")" >&2
        wc_warn "cluster '$1' was not promoted (the end of its log is above)"
        return 1
    fi
    wc_node_wait_primary "$1" 60
}

# wc_standby_create NAME [FROM]: a streaming hot standby of FROM (main): pg_basebackup -X stream
# -R with a new replication slot wc_NAME on FROM (so FROM keeps the WAL the standby has not
# received, however far behind it falls), started, and waited for until its WAL receiver
# streams.  The backup's output is in its directory, basebackup.log.
wc_standby_create() {
    local name=$1 from=${2:-main} fdir fport data blog i
    fdir=$(wc_node_dir "$from") && fport=$(wc_node_port "$from") || return 1
    wc__node_new "$name" || return 1
    data=$(wc_node_pgdata "$name")
    blog=$(wc_node_dir "$name")/basebackup.log
    if ! wc_node_as_user "$name" "$WC_PGBIN/pg_basebackup" -h "$fdir" -p "$fport" -U "$(wc_cluster_user)" \
            -D "$data" -X stream -c fast -R -C -S "wc_$name" >"$blog" 2>&1; then
        tail -n 20 "$blog" >&2
        wc_warn "pg_basebackup of '$from' for the standby '$name' failed"
        return 1
    fi
    wc__node_own_conf "$name" && wc_node_start "$name" || return 1
    for ((i = 0; i < 600; i++)); do
        [ "$(wc_node_psql "$name" -c "SELECT status FROM pg_stat_wal_receiver" 2>/dev/null)" = streaming ] &&
            return 0
        sleep 0.1
    done
    tail -n 20 "$(wc_node_log "$name")" >&2
    wc_warn "the standby '$name' does not stream from '$from' after 60 s"
    return 1
}

# wc_wait_replay NAME [FROM] [SECONDS]: waits until standby NAME has replayed FROM's WAL (main)
# up to FROM's pg_current_wal_lsn() of now (120 s); fails saying where it stands.
wc_wait_replay() {
    local name=$1 from=${2:-main} secs=${3:-120} target i
    target=$(wc_node_psql "$from" -c "SELECT pg_current_wal_lsn()") || return 1
    for ((i = 0; i < secs * 10; i++)); do
        [ "$(wc_node_psql "$name" -c "SELECT pg_last_wal_replay_lsn() >= '$target'::pg_lsn" 2>/dev/null)" = t ] &&
            return 0
        sleep 0.1
    done
    wc_warn "standby '$name' replayed up to $(wc_node_psql "$name" -c "SELECT pg_last_wal_replay_lsn()" 2>&1) in $secs s, not to $target ('$from')"
    return 1
}

# wc_basebackup FROM DEST [pg_basebackup options...]: a plain base backup of FROM with the WAL it
# needs (-X stream, -c fast) into DEST, which must not exist and whose parent the clusters' user
# can write (a DEST under $WC_CLUSTER_DIR goes away with the cluster); its output in DEST.log.
wc_basebackup() {
    local from=$1 dest=$2 fdir fport
    shift 2
    fdir=$(wc_node_dir "$from") && fport=$(wc_node_port "$from") || return 1
    if ! wc_node_as_user "$from" "$WC_PGBIN/pg_basebackup" -h "$fdir" -p "$fport" -U "$(wc_cluster_user)" \
            -D "$dest" -X stream -c fast "$@" >"$dest.log" 2>&1; then
        tail -n 20 "$dest.log" >&2
        wc_warn "pg_basebackup of '$from' into $dest failed"
        return 1
    fi
}

# wc_node_create NAME [initdb options...]: a new empty cluster NAME (initdb as main's, and main's
# postgresql.conf with NAME's own port and socket), started: a data node beside a coordinator.
wc_node_create() {
    local name=$1 data
    shift
    wc__node_new "$name" || return 1
    data=$(wc_node_pgdata "$name")
    if ! wc_node_as_user "$name" "$WC_PGBIN/initdb" -D "$data" -U "$(wc_cluster_user)" -A trust \
            --encoding=UTF8 --locale=C -N "$@" >"$(wc_node_dir "$name")/initdb.log" 2>&1; then
        cat "$(wc_node_dir "$name")/initdb.log" >&2
        wc_warn "initdb of cluster '$name' failed"
        return 1
    fi
    wc_node_as_user "$name" cp "$WC_PGDATA/postgresql.conf" "$data/postgresql.conf" &&
        wc__node_own_conf "$name" && wc_node_start "$name"
}

# wc_node_from_backup NAME BACKUP: a new cluster NAME whose data directory is a copy of the base
# backup BACKUP (left as it is, to be restored again), with its own port and socket; not started
# (add settings with wc_node_conf, then wc_node_start: it recovers from the backup's WAL).
wc_node_from_backup() {
    local name=$1 backup=$2 data
    [ -f "$backup/backup_label" ] || { wc_warn "$backup is not a base backup (no backup_label)"; return 1; }
    wc__node_new "$name" || return 1
    data=$(wc_node_pgdata "$name")
    cp -a "$backup" "$data" || return 1
    if wc_is_root; then chown -R postgres: "$data" || return 1; fi
    chmod 700 "$data" && wc__node_own_conf "$name"
}

# wc_archive_on NAME DIR: archive_mode = on, archive_command copying each finished WAL segment
# into DIR (made, for the clusters' user), then a restart of NAME.
wc_archive_on() {
    local name=$1 dir=$2
    mkdir -p "$dir" || return 1
    if wc_is_root; then chown postgres: "$dir" || return 1; fi
    wc_node_conf "$name" "archive_mode = on" \
        "archive_command = 'if test -f \"$dir/%f\"; then cmp -s \"%p\" \"$dir/%f\"; else cp \"%p\" \"$dir/%f.part\" && mv \"$dir/%f.part\" \"$dir/%f\"; fi'" &&
        wc_node_restart "$name"
}

# wc_archive_switch NAME DIR [SECONDS]: ends NAME's current WAL segment (pg_switch_wal) and waits
# until it is in the archive DIR (120 s).
wc_archive_switch() {
    local name=$1 dir=$2 secs=${3:-120} seg i
    seg=$(wc_node_psql "$name" -c "SELECT pg_walfile_name(pg_switch_wal())") || return 1
    for ((i = 0; i < secs * 10; i++)); do
        [ -f "$dir/$seg" ] && return 0
        sleep 0.1
    done
    wc_warn "WAL segment $seg of '$name' not archived into $dir after $secs s: $(wc_node_psql "$name" -c "SELECT last_failed_wal, last_failed_time FROM pg_stat_archiver" 2>&1)"
    return 1
}

# wc_node_pitr NAME BACKUP ARCHIVE SETTING...: point-in-time recovery: a new cluster NAME from
# a copy of BACKUP with recovery.signal, restore_command copying from ARCHIVE and the SETTINGs,
# the recovery target (e.g. "recovery_target_name = 'before_x'"); recovery_target_action is
# 'promote' unless a SETTING says otherwise.  Started, and waited for until its recovery ended.
wc_node_pitr() {
    local name=$1 backup=$2 archive=$3 data
    shift 3
    wc_node_from_backup "$name" "$backup" || return 1
    data=$(wc_node_pgdata "$name")
    wc_node_conf "$name" "restore_command = 'cp \"$archive/%f\" \"%p\"'" "$@" || return 1
    if ! printf '%s\n' "$@" | grep -q '^ *recovery_target_action'; then
        wc_node_conf "$name" "recovery_target_action = 'promote'" || return 1
    fi
    wc_node_as_user "$name" touch "$data/recovery.signal" || return 1
    wc_node_start "$name" && wc_node_wait_primary "$name" 120
}

# wc_node_remove NAME: stops NAME (not main) and removes its directory now.
wc_node_remove() {
    local name=$1 d i keep=()
    [ "$name" != main ] || { wc_warn "wc_node_remove: main goes with wc_cluster_stop"; return 1; }
    d=$(wc_node_dir "$name") || return 1
    wc_node_stop "$name"
    [ -n "${WC_KEEP_CLUSTER:-}" ] || rm -rf "$d"
    unset 'WC_NODE_PORT[$name]'
    for i in "${WC_NODES[@]}"; do [ "$i" = "$name" ] || keep+=("$i"); done
    WC_NODES=("${keep[@]}")
}

# Stops every cluster but main, the newest first (wc_cluster_stop, before main).
wc__nodes_stop_all() {
    local i
    for ((i = ${#WC_NODES[@]} - 1; i >= 0; i--)); do
        wc_node_stop "${WC_NODES[$i]}"
    done
    WC_NODES=()
    WC_NODE_PORT=()
}
