#!/usr/bin/env bash
# scripts/valgrind-suite.sh -- runs the PostgreSQL-side suites (pg_regress, t/) once with every
# server process under valgrind memcheck and widecol_fdw.so (engine included) built with -O0 -g,
# then lists every memcheck report whose stack touches our code.
#
#   scripts/valgrind-suite.sh [--no-regress] [--no-t] [--ref REF | --worktree] [--track-origins]
#                             [t/NNN_name.sh ...]
#
# -O0 (VG_OPT overrides it) keeps every local in memory, where memcheck sees an uninitialised
# one; with -Og/-O2 a local left in a register that held a defined value goes unnoticed.
# The extension is built from a snapshot of the repository, not from the working tree (which
# may be edited meanwhile): "git archive REF" (default HEAD) unpacked into $VG_DIR/src, or with
# --worktree the tracked and untracked (not ignored) files as they are now.  pg_regress and the
# t/ tests run from that snapshot too.
# Nothing is installed into the system's PostgreSQL (others may be using it): as in
# scripts/asan-suite.sh, /usr/lib/postgresql/15 and /usr/share/postgresql/15 are copied under
# $VG_DIR/pg, the build is installed there with DESTDIR, and that copy's bin/postgres becomes a
# wrapper that execs "valgrind --tool=memcheck ... postgres.real".  Backends are fork()ed, not
# exec()ed, so every backend and auxiliary process runs under memcheck too (each logs to its
# own $VG_DIR/vg/vg.PID).  lib.sh (untouched) starts its clusters with the system's pg_ctl
# through runuser when we are root: a wrapper named runuser first on PATH swaps in the copy's
# pg_ctl and raises its -t timeout to $VG_PGCTL_TIMEOUT (default 600 s), hence root is needed.
# initdb, psql, pgbench and pg_regress are the system's, not under valgrind.
# The server gets jit = off (WC_EXTRA_CONF): LLVM under memcheck is slow and noisy.
# PostgreSQL is not built with USE_VALGRIND (palloc is invisible to memcheck; it writes
# uninitialised padding to files): scripts/valgrind.supp silences what it reports with no frame
# of ours, and only reports whose stack (error or allocation/origin stack) has a frame in
# widecol_fdw.so or a file of the snapshot (src/, engine/) are counted.  Leak checking is off:
# backends exit without freeing, by design.  --track-origins adds --track-origins=yes (slower;
# also counts PostgreSQL's reports of uninitialised bytes that our code created).
# Logs in $VG_DIR/logs (default VG_DIR=/tmp/valgrind-wc); the valgrind logs stay in $VG_DIR/vg.
# WC_T_TIMEOUT (seconds per t/ script) defaults to 3600 here.
# The last line is "valgrind-suite: CLEAN" or "valgrind-suite: N report(s) in our code"; exit
# status 0 only when the suites passed and no report touches our code.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

run_regress=1 run_t=1 ttests=() ref=HEAD worktree= origins=no
while [ $# -gt 0 ]; do
    case "$1" in
        --no-regress) run_regress= ;;
        --no-t) run_t= ;;
        --ref) ref=$2; shift ;;
        --worktree) worktree=1 ;;
        --track-origins) origins=yes ;;
        -h|--help) sed -n '2,37p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) wc_die "unknown option $1 (see --help)" ;;
        *) ttests+=("$(basename "$1")") ;;
    esac
    shift
done

wc_is_root || wc_die "run this as root (pg_ctl is swapped through a runuser wrapper)"
wc_need_packages "${WC_BUILD_PACKAGES[@]}" valgrind git
t_start=$(date +%s)
elapsed() { echo "$(( $(date +%s) - t_start )) s"; }

VG_DIR=${VG_DIR:-/tmp/valgrind-wc}
case "$VG_DIR" in /|/tmp|/tmp/) wc_die "VG_DIR=$VG_DIR: give a directory of its own" ;; esac
rm -rf "$VG_DIR"
mkdir -p "$VG_DIR/bin" "$VG_DIR/logs" "$VG_DIR/vg" "$VG_DIR/src"
chmod 755 "$VG_DIR"; chmod 1777 "$VG_DIR/vg"
SRC=$VG_DIR/src
SUPP=$WC_ROOT/scripts/valgrind.supp
[ -f "$SUPP" ] || wc_die "no suppressions file $SUPP"
cp "$SUPP" "$VG_DIR/valgrind.supp"
jobs=$(nproc 2>/dev/null || echo 2)

# --- snapshot ------------------------------------------------------------------------------
if [ -n "$worktree" ]; then
    wc_say "snapshot: the working tree of $WC_ROOT (tracked + untracked files) -> $SRC"
    (cd "$WC_ROOT" && git ls-files -z -c -o --exclude-standard | tar --null --ignore-failed-read -T - -cf - 2>/dev/null) |
        tar -xf - -C "$SRC" || wc_die "could not copy the working tree"
    echo "worktree of $(git -C "$WC_ROOT" rev-parse HEAD) + changes" >"$VG_DIR/logs/snapshot"
else
    commit=$(git -C "$WC_ROOT" rev-parse --verify "$ref^{commit}") || wc_die "no commit $ref"
    wc_say "snapshot: git archive $ref ($commit) -> $SRC"
    git -C "$WC_ROOT" archive --format=tar "$commit" | tar -xf - -C "$SRC" || wc_die "git archive failed"
    echo "$commit" >"$VG_DIR/logs/snapshot"
fi
chmod -R a+rX "$SRC"

# --- a private copy of the server ----------------------------------------------------------
PGCOPY=$VG_DIR/pg
wc_copy_postgres "$PGCOPY" || wc_die "could not copy PostgreSQL"

# --- build -------------------------------------------------------------------------------
VG_OPT=${VG_OPT:-"-O0 -g -fno-omit-frame-pointer"}
wc_say "building engine + extension with $VG_OPT in $SRC (log $VG_DIR/logs/build.log)"
{
    # OPT reaches make -C engine, which the root Makefile runs again (engine/.flags)
    make -C "$SRC/engine" -j"$jobs" OPT="$VG_OPT" &&
    make -C "$SRC" -j"$jobs" with_llvm=no OPT="$VG_OPT" COPT="$VG_OPT" &&
    make -C "$SRC" install with_llvm=no OPT="$VG_OPT" DESTDIR="$PGCOPY"
} >"$VG_DIR/logs/build.log" 2>&1 || { tail -n 40 "$VG_DIR/logs/build.log" >&2; wc_die "the build failed"; }
inst=$PGCOPY$("$PG_CONFIG" --pkglibdir)/widecol_fdw.so
cmp -s "$SRC/widecol_fdw.so" "$inst" || wc_die "$inst is not the snapshot's build"
grep -q -- "$VG_OPT" "$SRC/engine/build/.flags" || wc_die "the engine was not built with -Og"
wc_say "installed $inst ($(elapsed))"

# --- postgres under valgrind ---------------------------------------------------------------
mv "$WC_PGCOPY_BIN/postgres" "$WC_PGCOPY_BIN/postgres.real" || wc_die "could not move postgres"
cat >"$WC_PGCOPY_BIN/postgres" <<EOF
#!/bin/sh
# scripts/valgrind-suite.sh: the postmaster and (by fork) every backend under memcheck
exec valgrind --tool=memcheck --trace-children=no --child-silent-after-fork=no \\
    --log-file=$VG_DIR/vg/vg.%p --num-callers=30 --error-limit=no --fullpath-after= \\
    --leak-check=no --track-origins=$origins --gen-suppressions=all --read-var-info=no \\
    --suppressions=$VG_DIR/valgrind.supp $WC_PGCOPY_BIN/postgres.real "\$@"
EOF
chmod 755 "$WC_PGCOPY_BIN/postgres"

export VG_PGCTL_TIMEOUT=${VG_PGCTL_TIMEOUT:-600}
cat >"$VG_DIR/bin/runuser" <<'EOF'
#!/bin/bash
# scripts/valgrind-suite.sh: runs the private copy's pg_ctl (whose postgres is the valgrind
# wrapper) instead of the system's, with a longer -t; passes all else through.
args=() done= next_t=
for a in "$@"; do
    if [ -n "$next_t" ]; then
        next_t=
        [ "$a" -lt "$VG_PGCTL_TIMEOUT" ] 2>/dev/null && a=$VG_PGCTL_TIMEOUT
    elif [ -z "$done" ] && [[ "$a" == */pg_ctl ]]; then
        done=1
        a=$WC_PGCOPY_BIN/pg_ctl
    elif [ -n "$done" ] && [ "$a" = -t ]; then
        next_t=1
    fi
    args+=("$a")
done
[ -n "$done" ] && export PGCTLTIMEOUT=$VG_PGCTL_TIMEOUT
exec /usr/sbin/runuser "${args[@]}"
EOF
chmod 755 "$VG_DIR/bin/runuser"
export PATH="$VG_DIR/bin:$PATH"
export WC_EXTRA_CONF="jit = off"

# --- pg_regress ----------------------------------------------------------------------------
# (also a check that the server runs under valgrind and loads our build: with --no-regress
# only that check runs)
wc_say "pg_regress: make installcheck in $SRC ($(elapsed))"
wc_cluster_start || wc_die "the cluster did not start"
pm=$(wc_postmaster_pid)
if [[ "$(readlink "/proc/$pm/exe")" == */memcheck-*-linux ]] &&
   tr '\0' ' ' <"/proc/$pm/cmdline" | grep -q "$WC_PGCOPY_BIN/postgres.real"; then
    wc_say "postmaster $pm runs $WC_PGCOPY_BIN/postgres.real under $(readlink "/proc/$pm/exe")"
else
    wc_die "postmaster $pm is not under valgrind"
fi
maps=$(wc_psql -c "LOAD 'widecol_fdw'" -c "SELECT pg_read_file('/proc/self/maps')" 2>&1)
if grep -q "$inst" <<<"$maps"; then
    wc_say "a backend loads $inst"
else
    printf '%s\n' "$maps" | tail -n 5 >&2; wc_die "a backend does not load $inst"
fi
rm -f "$SRC/regression.diffs" "$SRC/regression.out"
[ -n "$run_regress" ] && (cd "$SRC" && timeout -k 10 "${VG_REGRESS_TIMEOUT:-5400}" make --no-print-directory installcheck with_llvm=no ISOLATION=) 2>&1 |
    tee "$VG_DIR/logs/installcheck.log"
[ -f "$SRC/regression.diffs" ] && cp "$SRC/regression.diffs" "$VG_DIR/logs/"
cp "$WC_CLUSTER_DIR/server.log" "$VG_DIR/logs/installcheck-server.log"
wc_cluster_stop
wc_say "pg_regress done ($(elapsed))"

# --- t/ ------------------------------------------------------------------------------------
if [ -n "$run_t" ]; then
    wc_say "t/: bash t/run.sh ${ttests[*]}"
    # keep the t/ clusters (in $VG_DIR/clusters) to read their server logs afterwards
    mkdir -p "$VG_DIR/clusters" && chmod 755 "$VG_DIR/clusters"
    WC_TMPDIR="$VG_DIR/clusters" WC_KEEP_CLUSTER=1 WC_LOGDIR="$VG_DIR/logs" \
        WC_T_TIMEOUT=${WC_T_TIMEOUT:-3600} bash "$SRC/t/run.sh" "${ttests[@]}" 2>&1 | tee "$VG_DIR/logs/t.log"
    wc_say "t/ done ($(elapsed))"
fi

# --- reports -------------------------------------------------------------------------------
wc_say "server processes that died, from the server logs"
for f in "$VG_DIR"/clusters/*/server.log; do
    [ -e "$f" ] && cp "$f" "$VG_DIR/logs/t-server-$(basename "$(dirname "$f")").log"
done
rm -rf "$VG_DIR/clusters"
# (t/010_crash kills backends with signal 9 on purpose; the logical replication launcher exits
# with code 1 at every shutdown)
grep -hE 'terminated by signal|was terminated|exited with exit code [^0]' "$VG_DIR"/logs/*server*.log 2>/dev/null |
    grep -v 'logical replication launcher' | head -n 20 || true
left=$(pgrep -f "$WC_PGCOPY_BIN/postgres.real" | tr '\n' ' ')
[ -n "$left" ] && wc_warn "valgrind'ed server processes still running: $left"

# Every error paragraph of every vg.PID; "ours" when a frame is in widecol_fdw.so or in a file
# of the snapshot.  Identical stacks (addresses masked) are listed once, with a count.
# With --fullpath-after= frames show full source paths; the snapshot's are under $SRC/.
awk -v src="$SRC/" -v ours_out="$VG_DIR/logs/ours.txt" -v other_out="$VG_DIR/logs/other.txt" '
function flush(   key, isours, i) {
    if (n > 0 && frames > 0 && par[1] !~ /^(HEAP SUMMARY|LEAK SUMMARY|ERROR SUMMARY|Memcheck,|Warning:)/) {
        isours = 0
        for (i = 1; i <= n; i++)
            if (index(par[i], "widecol_fdw.so") || index(par[i], src)) isours = 1
        key = ""
        for (i = 1; i <= n; i++) { line = par[i]; gsub(/0x[0-9A-Fa-f]+/, "0x", line); key = key line "\n" }
        if (isours) { nours++; if (!(key in seen_o)) { order_o[++no] = key; where_o[key] = FILENAME } seen_o[key]++ }
        else        { nother++; if (!(key in seen_x)) { order_x[++nx] = key; where_x[key] = FILENAME } seen_x[key]++ }
    }
    n = 0; frames = 0
}
FNR == 1 { flush() }
/^==[0-9]+==/ {
    line = $0; sub(/^==[0-9]+== ?/, "", line)
    if (line == "") { flush(); next }
    par[++n] = line
    if (line ~ /^ +(at|by) 0x/) frames++
    next
}
{ flush() }
END {
    flush()
    for (i = 1; i <= no; i++) printf "---- %d x, first in %s\n%s\n", seen_o[order_o[i]], where_o[order_o[i]], order_o[i] > ours_out
    for (i = 1; i <= nx; i++) printf "---- %d x, first in %s\n%s\n", seen_x[order_x[i]], where_x[order_x[i]], order_x[i] > other_out
    printf "%d %d %d %d\n", nours + 0, no + 0, nother + 0, nx + 0
}' /dev/null "$VG_DIR"/vg/vg.* >"$VG_DIR/logs/counts" 2>/dev/null
read -r nours uours nother uother <"$VG_DIR/logs/counts"
touch "$VG_DIR/logs/ours.txt" "$VG_DIR/logs/other.txt"
nlogs=$(ls "$VG_DIR"/vg/vg.* 2>/dev/null | wc -l)
nsupp=$(grep -h 'ERROR SUMMARY' "$VG_DIR"/vg/vg.* 2>/dev/null |
        sed -n 's/.*suppressed: \([0-9]*\) from.*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
wc_say "valgrind: $nlogs process logs in $VG_DIR/vg; $nsupp errors suppressed (scripts/valgrind.supp)"
wc_say "reports not touching our code: $nother ($uother distinct stacks, in $VG_DIR/logs/other.txt)"
wc_say "reports touching our code: $nours ($uours distinct stacks, in $VG_DIR/logs/ours.txt)"
head -n 400 "$VG_DIR/logs/ours.txt"
[ -n "$run_regress" ] && grep -E '(All [0-9]+ tests passed|[0-9]+ of [0-9]+ tests failed)' "$VG_DIR/logs/installcheck.log" | sed 's/^/pg_regress: /'
[ -n "$run_t" ] && grep -E '^ +t/|^t: ' "$VG_DIR/logs/t.log"
wc_say "snapshot $(cat "$VG_DIR/logs/snapshot"); wall time $(elapsed)"
if [ "$nours" -eq 0 ]; then echo "valgrind-suite: CLEAN"; else echo "valgrind-suite: $nours report(s) in our code"; fi
[ "$nours" -eq 0 ] && { [ -z "$run_regress" ] || grep -q 'All [0-9]* tests passed' "$VG_DIR/logs/installcheck.log"; } &&
    { [ -z "$run_t" ] || grep -qE '^t: [0-9]+ passed, 0 failed' "$VG_DIR/logs/t.log"; }
