#!/usr/bin/env bash
# scripts/asan-suite.sh -- runs the PostgreSQL-side suites (pg_regress, t/) once with the
# engine and widecol_fdw.so built under AddressSanitizer + UndefinedBehaviorSanitizer, then
# puts the normal build back and reports every sanitizer finding.
#
#   scripts/asan-suite.sh [--ubsan-only] [--no-t] [--no-restore] [t/NNN_name.sh ...]
#
# --ubsan-only builds with -fsanitize=undefined only and preloads the standalone UBSan runtime.
# On Debian 12 (glibc 2.36, clang 14) the ASan runtime preloaded into the uninstrumented
# postgres binary deadlocks at start (postgres -V hangs in a libc rwlock after the
# constructors of libgnutls/libp11-kit, which postgres pulls in through libldap): the script
# checks for that first and stops with a message; then only --ubsan-only can run.
#
# PostgreSQL itself is not instrumented: the ASan runtime (which carries the UBSan handlers
# too) is preloaded into the postmaster with LD_PRELOAD, so every backend has it when it
# loads widecol_fdw.so.  The t/ tests start their own clusters through scripts/lib.sh, which
# has no hook for the server's environment; so that lib.sh stays untouched, a wrapper named
# runuser is put first on PATH, and it adds the preload to "pg_ctl ..." commands only
# (lib.sh runs pg_ctl through runuser when we are root, so this needs root).
# Nothing is installed into the system's PostgreSQL (others may be using widecol_fdw there):
# /usr/lib/postgresql/15 and /usr/share/postgresql/15 are copied under $ASAN_DIR/pg (PostgreSQL
# finds its lib and share directories relative to its binaries), the sanitizer build is
# installed there with DESTDIR, and the wrapper runs that copy's pg_ctl instead.
# Leak detection is off: backends exit without freeing, by design.
# Reports go to $ASAN_DIR (default /tmp/asan-wc): asan.PID, ubsan.PID; logs in $ASAN_DIR/logs.
# The last line is "asan-suite: CLEAN" or "asan-suite: N sanitizer report(s)"; exit status 0
# only when the suites passed and no report was written.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

run_t=1 restore=1 ttests=() mode=asan
while [ $# -gt 0 ]; do
    case "$1" in
        --no-t) run_t= ;;
        --ubsan-only) mode=ubsan ;;
        --no-restore) restore= ;;
        -h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) ttests+=("$1") ;;
    esac
    shift
done

wc_is_root || wc_die "run this as root (the preload reaches pg_ctl through a runuser wrapper)"
wc_need_packages "${WC_TEST_PACKAGES[@]}"
cd "$WC_ROOT" || exit 1

ASAN_DIR=${ASAN_DIR:-/tmp/asan-wc}
rm -rf "$ASAN_DIR"
mkdir -p "$ASAN_DIR/bin" "$ASAN_DIR/logs"
chmod 1777 "$ASAN_DIR"
if [ "$mode" = asan ]; then
    ASAN_RT=$(clang -print-file-name=libclang_rt.asan-x86_64.so)
    SAN="-fsanitize=address,undefined -fno-omit-frame-pointer"
else
    ASAN_RT=$(clang -print-file-name=libclang_rt.ubsan_standalone-x86_64.so)
    SAN="-fsanitize=undefined -fno-omit-frame-pointer"
fi
[ -f "$ASAN_RT" ] || wc_die "no sanitizer runtime at $ASAN_RT (package libclang-rt-14-dev)"
# Pre-flight: can the uninstrumented server start at all with the runtime preloaded?
if ! timeout 20 env LD_PRELOAD="$ASAN_RT" ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0 \
        "$WC_PGBIN/postgres" -V >/dev/null 2>&1; then
    wc_die "'LD_PRELOAD=$ASAN_RT $WC_PGBIN/postgres -V' hangs or fails here (see the header of $0); try --ubsan-only"
fi
jobs=$(nproc 2>/dev/null || echo 2)

restore_build() {
    # make clean does not clean engine/: without make -C engine clean, the sanitized engine
    # objects would be linked into the "normal" widecol_fdw.so
    wc_say "restoring the normal build in $WC_ROOT (make -C engine clean, make clean, make engine, make)"
    { make -C engine clean && make clean && make engine && make -j"$jobs"; } >"$ASAN_DIR/logs/restore.log" 2>&1 ||
        { tail -n 30 "$ASAN_DIR/logs/restore.log" >&2; wc_warn "could not restore the normal build"; }
}
# a private copy of the server to install the sanitizer build into
PGCOPY=$ASAN_DIR/pg
wc_copy_postgres "$PGCOPY" || wc_die "could not copy PostgreSQL"
[ -n "$restore" ] && wc_on_exit 'cd "$WC_ROOT" && restore_build'

# --- build -------------------------------------------------------------------------------
wc_say "building engine + extension with $SAN (log $ASAN_DIR/logs/build.log)"
{
    make -C engine clean &&
    make -C engine -j"$jobs" CC=clang OPT="-O1 -g $SAN" &&
    make clean &&
    make -j"$jobs" CC=clang with_llvm=no COPT="$SAN" &&
    make install with_llvm=no DESTDIR="$PGCOPY"
} >"$ASAN_DIR/logs/build.log" 2>&1 || { tail -n 40 "$ASAN_DIR/logs/build.log" >&2; wc_die "the sanitizer build failed"; }
nasan=$(nm -D --undefined-only widecol_fdw.so | grep -c ' __asan_')
[ "$mode" = ubsan ] && nasan=-
nubsan=$(nm -D --undefined-only widecol_fdw.so | grep -c ' __ubsan_')
inst=$PGCOPY$("$PG_CONFIG" --pkglibdir)/widecol_fdw.so
cmp -s widecol_fdw.so "$inst" || wc_die "$inst is not the sanitizer build"
wc_say "widecol_fdw.so references $nasan __asan_* and $nubsan __ubsan_* symbols (installed: $inst)"
{ [ "$nasan" = - ] || [ "$nasan" -gt 0 ]; } && [ "$nubsan" -gt 0 ] || wc_die "widecol_fdw.so is not instrumented"

# --- the preload, for pg_ctl only ----------------------------------------------------------
export WC_ASAN_RT=$ASAN_RT
export WC_ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:log_path=$ASAN_DIR/asan:verify_asan_link_order=0"
export WC_UBSAN_OPTIONS="print_stacktrace=1:log_path=$ASAN_DIR/ubsan"
cat >"$ASAN_DIR/bin/runuser" <<'EOF'
#!/bin/bash
# scripts/asan-suite.sh: adds the ASan preload to pg_ctl commands, passes all else through.
args=() done=
for a in "$@"; do
    if [ -z "$done" ] && [[ "$a" == */pg_ctl ]]; then
        args+=(env "LD_PRELOAD=$WC_ASAN_RT" "ASAN_OPTIONS=$WC_ASAN_OPTIONS" "UBSAN_OPTIONS=$WC_UBSAN_OPTIONS")
        done=1
        args+=("$WC_PGCOPY_BIN/pg_ctl")
        continue
    fi
    args+=("$a")
done
exec /usr/sbin/runuser "${args[@]}"
EOF
chmod 755 "$ASAN_DIR/bin/runuser"
export PATH="$ASAN_DIR/bin:$PATH"

# --- pg_regress ----------------------------------------------------------------------------
wc_say "pg_regress: make installcheck"
wc_cluster_start || wc_die "the cluster did not start"
pm=$(wc_postmaster_pid)
if grep -q "$(basename "$ASAN_RT")" "/proc/$pm/maps" && [ "$(readlink "/proc/$pm/exe")" = "$WC_PGCOPY_BIN/postgres" ] &&
   grep -q "$(basename "$ASAN_RT")" "/proc/$pm/maps"; then
    wc_say "postmaster $pm has $(basename "$ASAN_RT") mapped"
else
    wc_die "postmaster $pm does not have $(basename "$ASAN_RT") loaded"
fi
rm -f regression.diffs regression.out
timeout -k 10 1500 make --no-print-directory installcheck with_llvm=no ISOLATION= 2>&1 | tee "$ASAN_DIR/logs/installcheck.log"
[ -f regression.diffs ] && cp regression.diffs "$ASAN_DIR/logs/"
cp "$WC_CLUSTER_DIR/server.log" "$ASAN_DIR/logs/installcheck-server.log"
wc_cluster_stop

# --- t/ ------------------------------------------------------------------------------------
if [ -n "$run_t" ]; then
    wc_say "t/: bash t/run.sh ${ttests[*]}"
    # keep the t/ clusters (in $ASAN_DIR/clusters) to read their server logs afterwards
    mkdir -p "$ASAN_DIR/clusters" && chmod 755 "$ASAN_DIR/clusters"
    WC_TMPDIR="$ASAN_DIR/clusters" WC_KEEP_CLUSTER=1 WC_LOGDIR="$ASAN_DIR/logs" timeout -k 10 3000 bash t/run.sh "${ttests[@]}" 2>&1 | tee "$ASAN_DIR/logs/t.log"
fi

# --- reports -------------------------------------------------------------------------------
wc_say "server crashes in the logs"
grep -hE 'terminated by signal|was terminated|exited with exit code [^0]' \
    "$ASAN_DIR"/logs/*server*.log "$ASAN_DIR"/clusters/*/server.log 2>/dev/null | head -n 20 || true
for f in "$ASAN_DIR"/clusters/*/server.log; do
    [ -e "$f" ] && cp "$f" "$ASAN_DIR/logs/t-server-$(basename "$(dirname "$f")").log"
done
rm -rf "$ASAN_DIR/clusters"
reports=$(ls "$ASAN_DIR"/asan.* "$ASAN_DIR"/ubsan.* 2>/dev/null | wc -l)
for f in "$ASAN_DIR"/asan.* "$ASAN_DIR"/ubsan.*; do
    [ -e "$f" ] || continue
    echo "---- $f"
    head -n 60 "$f"
done
grep -E '(All [0-9]+ tests passed|[0-9]+ of [0-9]+ tests failed)' "$ASAN_DIR/logs/installcheck.log" | sed 's/^/pg_regress: /'
[ -n "$run_t" ] && grep -E '^t: ' "$ASAN_DIR/logs/t.log"
if [ "$reports" -eq 0 ]; then echo "asan-suite: CLEAN"; else echo "asan-suite: $reports sanitizer report(s) in $ASAN_DIR"; fi
[ "$reports" -eq 0 ] && grep -q 'All [0-9]* tests passed' "$ASAN_DIR/logs/installcheck.log" &&
    { [ -z "$run_t" ] || grep -qE '^t: [0-9]+ passed, 0 failed' "$ASAN_DIR/logs/t.log"; }
