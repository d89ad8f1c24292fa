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
                   postgresql-contrib liblz4-dev procps)
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
max_prepared_transactions = 10
restart_after_crash = on
log_line_prefix = '%m [%p] '
${WC_EXTRA_CONF:-}
EOF
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
    local pm pids i
    pm=$(wc_postmaster_pid) || return 0
    pids="$pm $(pgrep -P "$pm" 2>/dev/null | tr '\n' ' ')"
    kill -9 $pids 2>/dev/null
    for ((i = 0; i < 300; i++)); do
        kill -0 $pids 2>/dev/null || return 0
        sleep 0.1
    done
    wc_warn "processes $pids still alive 30 s after kill -9"
    return 1
}

wc_cluster_stop() {
    [ -n "$WC_CLUSTER_DIR" ] || return 0
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
}

wc_psql() {
    "$WC_PGBIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 "$@"
}
