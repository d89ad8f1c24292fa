#!/usr/bin/env bash
# bench/commit.sh -- what a writing commit costs: one-row INSERT transactions per second
# through pgbench, into an ordinary table (a btree on the cell key) and into a logged and an
# unlogged widecol table, 1 and 8 clients, on one throw-away cluster, side by side in one run.
# The logged table runs twice: as set up (widecol_fdw.log_sync = checkpoint: the store's log is
# made durable by the syncer before each checkpoint) and as "logged-fs" with log_sync = commit
# (every commit fsyncs the store's log, as before the syncer).
#
#   bash bench/commit.sh [--seconds S] [--reps R]
#
#   --seconds S   length of each pgbench run [10]
#   --reps R      runs of every measurement, alternating the tables; the median is kept [3]
#
# The cluster runs with fsync and synchronous_commit on (the defaults): every commit waits for
# its WAL flush (and, for logged-fs and unlogged, its store's fsync).  Builds and installs the
# extension (WC_DESTDIR=DIR for a private installation, see scripts/lib.sh).  Prints one line
# per table and client count, and the ratios to the ordinary table.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

SECONDS_RUN=10
REPS=3
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) SECONDS_RUN=$2; shift 2 ;;
        --reps) REPS=$2; shift 2 ;;
        -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) wc_die "unknown option $1 (try --help)" ;;
    esac
done

wc_need_packages "${WC_BUILD_PACKAGES[@]}" postgresql-client-$WC_PGVERSION
wc_build "$(mktemp /tmp/widecol-commit-build.XXXXXX)" || wc_die "the build failed"
wc_cluster_start || wc_die "could not start a cluster"
PGBENCH=$WC_PGBIN/pgbench
WORK=$(mktemp -d /tmp/widecol-commit.XXXXXX)
wc_on_exit "rm -rf '$WORK'"

wc_psql <<'SQL' >/dev/null
CREATE EXTENSION widecol_fdw;
CREATE SERVER wide FOREIGN DATA WRAPPER widecol_fdw;
CREATE TABLE heap (rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C",
                   ts bigint, value text, PRIMARY KEY (rowkey, family, qualifier, ts));
CREATE FOREIGN TABLE logged (rowkey text COLLATE "C", family text COLLATE "C",
                             qualifier text COLLATE "C", ts bigint, value text)
    SERVER wide OPTIONS (families 'f');
CREATE FOREIGN TABLE unlogged (rowkey text COLLATE "C", family text COLLATE "C",
                               qualifier text COLLATE "C", ts bigint, value text)
    SERVER wide OPTIONS (families 'f', logged 'false');
SQL

for t in heap logged unlogged; do
    cat >"$WORK/$t.sql" <<EOF
\\set k random(1, 100000000)
INSERT INTO $t VALUES ('user' || lpad(:k::text, 10, '0'), 'f', 'field0', :k, repeat('v', 100));
EOF
done

# tps TABLE CLIENTS: one pgbench run (logged-fs: the logged table, fsynced at each commit)
tps() {
    local sql=$1 opts=
    [ "$1" = logged-fs ] && sql=logged opts='-c widecol_fdw.log_sync=commit'
    PGOPTIONS=$opts "$PGBENCH" -n -f "$WORK/$sql.sql" -c "$2" -j "$2" -T "$SECONDS_RUN" 2>/dev/null |
        sed -nE 's/^tps = ([0-9.]+) .*/\1/p'
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

declare -A result
for c in 1 8; do
    for ((r = 1; r <= REPS; r++)); do
        order=(heap logged logged-fs unlogged)
        [ $((r % 2)) -eq 0 ] && order=(unlogged logged-fs logged heap)
        for t in "${order[@]}"; do
            echo "$(tps "$t" "$c")" >>"$WORK/$t-$c.tps"
            wc_psql -c "SELECT widecol_flush('logged'), widecol_flush('unlogged')" >/dev/null 2>&1
        done
    done
    for t in heap logged logged-fs unlogged; do
        result[$t-$c]=$(median <"$WORK/$t-$c.tps")
    done
done

printf '\none-row INSERT transactions per second (median of %d runs of %d s; fsync, synchronous_commit on)\n' \
    "$REPS" "$SECONDS_RUN"
printf '%-10s %8s %12s %12s\n' table clients tps "vs heap"
for c in 1 8; do
    for t in heap logged logged-fs unlogged; do
        printf '%-10s %8d %12.0f %11.2fx\n' "$t" "$c" "${result[$t-$c]}" \
            "$(awk -v a="${result[$t-$c]}" -v b="${result[heap-$c]}" 'BEGIN { print (b > 0) ? a / b : 0 }')"
    done
done
