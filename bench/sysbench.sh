#!/usr/bin/env bash
# bench/sysbench.sh -- sysbench's OLTP scripts against sysbench's own table and a widecol wide
# table of the same rows, side by side on one throw-away cluster.
#
#   bash bench/sysbench.sh [--table-size N] [--seconds S] [--reps R] [--threads T] [--scripts LIST]
#
#   --table-size N   rows of sbtest1 [100000]
#   --seconds S      length of each sysbench run [10]
#   --reps R         runs of every measurement, the two tables alternating; the median is kept [3]
#   --threads T      sysbench's client threads [4]
#   --scripts LIST   comma-separated sysbench scripts [oltp_point_select,oltp_read_only,
#                    oltp_update_index,oltp_update_non_index,oltp_write_only,oltp_read_write]
#   --hold           load the tables, then keep the cluster until interrupted (for profiling:
#                    it writes an env file to reach it and the commands to run sysbench)
#
# About 8 minutes with the defaults on a 2-core machine.  `sysbench oltp_common prepare` makes
# sbtest1 (id serial PRIMARY KEY, k int with an index, c char(120), pad char(60)); its rows are
# copied into `sbtest_wc (rowkey int, k, c, pad: cells of family f)`, max_versions 1, and
# sbtest1 becomes a view, over the ordinary table (sbtest_heap, sysbench's own) or over the wide
# table (rowkey AS id), switched between runs: sysbench's statements run unchanged (its point
# selects and `id BETWEEN` ranges are rowkey reads of the wide table; `k = k + 1` and `c = ?`
# updates, and the DELETE and INSERT of one id that oltp_write_only and oltp_read_write make in
# every transaction).  sysbench's default key distribution ("special": most requests to 1% of
# the ids) makes a few rows very hot: the wide table's deleted-and-written-again rows are what
# engine/DESIGN.md's tombstone runs are about.  After the runs both tables must still hold
# every id once.  Writes bench/results/sysbench-latest.txt.

set -eo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$(dirname "$0")/lib.sh"

TABLE_SIZE=100000
SECONDS_PER_RUN=10
REPS=3
THREADS=4
HOLD=
HOLD_SLEEP=
SCRIPTS=oltp_point_select,oltp_read_only,oltp_update_index,oltp_update_non_index,oltp_write_only,oltp_read_write
ARGS="$*"
while [ $# -gt 0 ]; do
    case $1 in
        --table-size) TABLE_SIZE=$2; shift 2 ;;
        --seconds)    SECONDS_PER_RUN=$2; shift 2 ;;
        --reps)       REPS=$2; shift 2 ;;
        --threads)    THREADS=$2; shift 2 ;;
        --scripts)    SCRIPTS=$2; shift 2 ;;
        --hold)       HOLD=1; shift ;;
        -h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) wc_die "unknown option $1 (try --help)" ;;
    esac
done
[[ "$TABLE_SIZE" =~ ^[0-9]+$ ]] && [ "$TABLE_SIZE" -ge 1000 ] || wc_die "--table-size must be at least 1000"
[[ "$SECONDS_PER_RUN" =~ ^[0-9]+$ ]] && [ "$SECONDS_PER_RUN" -ge 1 ] || wc_die "--seconds must be a positive integer"
[[ "$REPS" =~ ^[0-9]+$ ]] && [ "$REPS" -ge 1 ] || wc_die "--reps must be a positive integer"
[[ "$THREADS" =~ ^[0-9]+$ ]] && [ "$THREADS" -ge 1 ] || wc_die "--threads must be a positive integer"
IFS=, read -r -a SCRIPT_LIST <<<"$SCRIPTS"
for s in "${SCRIPT_LIST[@]}"; do
    case $s in
        oltp_point_select|oltp_read_only|oltp_update_index|oltp_update_non_index|oltp_write_only|oltp_read_write) ;;
        *) wc_die "bad script '$s'" ;;
    esac
done

OUT=$WC_ROOT/bench/results
mkdir -p "$OUT"
T0=$(date +%s)
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
wc_need_packages "${WC_BUILD_PACKAGES[@]}" postgresql-client-$WC_PGVERSION sysbench
bench_build sysbench

# bench/ycsb.sh's server: each table's cache holds it whole; fsync and synchronous_commit on
WC_EXTRA_CONF="shared_buffers = '1GB'
widecol_fdw.block_cache_size = '512MB'
max_wal_size = '8GB'
checkpoint_timeout = '30min'"
wc_cluster_start || wc_die "could not start a cluster"
wc_say "cluster in $WC_CLUSTER_DIR (port $PGPORT)"
sql() { wc_psql "$@"; }
SB=(--db-driver=pgsql --pgsql-host="$PGHOST" --pgsql-port="$PGPORT" --pgsql-user="$PGUSER"
    --pgsql-db="$PGDATABASE" --tables=1 --table-size="$TABLE_SIZE")

wc_say "sysbench prepare ($TABLE_SIZE rows), and the rows copied into a wide table"
sysbench oltp_common "${SB[@]}" prepare >"$WC_CLUSTER_DIR/prepare.log" 2>&1 ||
    { cat "$WC_CLUSTER_DIR/prepare.log"; wc_die "sysbench prepare failed"; }
sql <<'EOF' >/dev/null
CREATE EXTENSION widecol_fdw;
CREATE SERVER wide FOREIGN DATA WRAPPER widecol_fdw;
CREATE FOREIGN TABLE sbtest_wc (
    rowkey int,
    k      int       OPTIONS (cell 'f:k') NOT NULL DEFAULT 0,
    c      char(120) OPTIONS (cell 'f:c') NOT NULL DEFAULT '',
    pad    char(60)  OPTIONS (cell 'f:pad') NOT NULL DEFAULT ''
) SERVER wide OPTIONS (families 'f', max_versions '1');
INSERT INTO sbtest_wc SELECT id, k, c, pad FROM sbtest1;
SELECT widecol_flush('sbtest_wc');
SELECT widecol_compact('sbtest_wc');
ANALYZE sbtest_wc;
ALTER TABLE sbtest1 RENAME TO sbtest_heap;
VACUUM ANALYZE sbtest_heap;
CREATE VIEW sbtest1 AS SELECT id, k, c, pad FROM sbtest_heap;
EOF
[ "$(sql -c "SELECT count(*) FROM sbtest_wc")" = "$TABLE_SIZE" ] || wc_die "the wide table does not hold every row"

use() {   # use heap|wc: what sbtest1 shows
    if [ "$1" = heap ]; then
        sql -c "CREATE OR REPLACE VIEW sbtest1 AS SELECT id, k, c, pad FROM sbtest_heap" >/dev/null
    else
        sql -c "CREATE OR REPLACE VIEW sbtest1 AS SELECT rowkey AS id, k, c, pad FROM sbtest_wc" >/dev/null
    fi
}
tps() {   # tps heap|wc SCRIPT SECONDS: transactions per second, and the errors sysbench ignored
    local log=$WC_CLUSTER_DIR/sysbench.log
    use "$1"
    if ! sysbench "$2" "${SB[@]}" --threads="$THREADS" --time="$3" --report-interval=0 run >"$log" 2>&1; then
        tail -n 20 "$log" >&2
        grep -E 'ERROR|FATAL|PANIC' "$WC_CLUSTER_DIR/server.log" | tail -n 10 >&2
        wc_die "sysbench $2 on $1 failed"
    fi
    sql -c "CHECKPOINT" -c "SELECT widecol_flush('sbtest_wc')" >/dev/null
    awk '/transactions:/ { gsub(/\(/, "", $3); t = $3 } /ignored errors:/ { e = $3 }
         END { printf "%.0f %d\n", t, e }' "$log"
}

if [ -n "$HOLD" ]; then
    # sbtest1 shows the ordinary table; `use wc` in the env file switches it to the wide table
    cat >"$WC_CLUSTER_DIR/env" <<HOLDENV
export PGHOST='$PGHOST' PGPORT='$PGPORT' PGUSER='$PGUSER' PGDATABASE='$PGDATABASE'
export PATH='$WC_PGBIN':\$PATH PGDATA='$WC_PGDATA'
SB=(${SB[*]})
use() { if [ "\$1" = heap ]; then t='id, k, c, pad FROM sbtest_heap'; else t='rowkey AS id, k, c, pad FROM sbtest_wc'; fi
        psql -qAtX -c "CREATE OR REPLACE VIEW sbtest1 AS SELECT \$t"; }
# e.g.: use wc; sysbench oltp_read_write "\${SB[@]}" --threads=$THREADS --time=5 run
HOLDENV
    chmod 644 "$WC_CLUSTER_DIR/env"
    wc_say "holding the cluster: . $WC_CLUSTER_DIR/env (Ctrl-C or kill $$ stops it)"
    cat "$WC_CLUSTER_DIR/env"
    wc_on_exit '[ -z "$HOLD_SLEEP" ] || kill "$HOLD_SLEEP"'
    while :; do
        sleep 3600 &
        HOLD_SLEEP=$!
        wait "$HOLD_SLEEP" || true
    done
fi

RESULTS=()
RUNS=()
for s in "${SCRIPT_LIST[@]}"; do
    check_so
    wc_say "$s, $THREADS threads: $REPS x ${SECONDS_PER_RUN}s per table"
    tps heap "$s" 2 >/dev/null; tps wc "$s" 2 >/dev/null   # warm-up
    hs=(); ws=(); he=0; we=0
    for ((r = 1; r <= REPS; r++)); do
        if [ $((r % 2)) -eq 1 ]; then
            read -r h e1 < <(tps heap "$s" "$SECONDS_PER_RUN"); read -r x e2 < <(tps wc "$s" "$SECONDS_PER_RUN")
        else
            read -r x e2 < <(tps wc "$s" "$SECONDS_PER_RUN"); read -r h e1 < <(tps heap "$s" "$SECONDS_PER_RUN")
        fi
        echo "    run $r: ordinary $h tps, widecol $x tps"
        hs+=("$h"); ws+=("$x"); he=$((he + e1)); we=$((we + e2))
    done
    RUNS+=("$s, runs (tps): ordinary ${hs[*]}; widecol ${ws[*]}; errors sysbench ignored (deadlocks, 40001): ordinary $he, widecol $we")
    RESULTS+=("$s|$(median "${hs[@]}")|$(median "${ws[@]}")")
done

check_so
read -r NH DH NW DW < <(sql -F ' ' -c "SELECT (SELECT count(*) FROM sbtest_heap), (SELECT count(DISTINCT id) FROM sbtest_heap),
                                              (SELECT count(*) FROM sbtest_wc), (SELECT count(DISTINCT rowkey) FROM sbtest_wc)")
[ "$NH $DH $NW $DW" = "$TABLE_SIZE $TABLE_SIZE $TABLE_SIZE $TABLE_SIZE" ] ||
    wc_die "a table lost or doubled rows: ordinary $NH rows ($DH ids), widecol $NW rows ($DW ids), of $TABLE_SIZE"
ELAPSED=$(( $(date +%s) - T0 ))
{
    echo "widecol_fdw sysbench benchmark -- $(date -u '+%Y-%m-%d %H:%M UTC'), commit $BENCH_COMMIT"
    echo "machine: $(nproc) CPUs, $(free -g | awk '/^Mem:/ { print $2 }') GiB RAM, PostgreSQL $(sql -c "SHOW server_version"), $(sysbench --version)"
    echo "load average at the start: $LOAD_START; at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "command: bash bench/sysbench.sh --table-size $TABLE_SIZE --seconds $SECONDS_PER_RUN --reps $REPS --threads $THREADS --scripts $SCRIPTS  (run time ${ELAPSED}s)"
    echo "sysbench SCRIPT --tables=1 --table-size=$TABLE_SIZE --threads=$THREADS --time=$SECONDS_PER_RUN run (its default key distribution); sbtest1 a view over"
    echo "  ordinary: sbtest_heap, sysbench's own table (id serial PRIMARY KEY, k int with an index, c char(120), pad char(60))"
    echo "  widecol:  sbtest_wc (rowkey int, k, c, pad: cells 'f:...'), max_versions 1, as rowkey AS id"
    echo "each tps the median of $REPS runs, tables alternating; after each run a CHECKPOINT and widecol_flush"
    echo
    printf '%-24s %12s %12s %7s\n' script ordinary widecol ratio
    printf '%-24s %12s %12s %7s\n' ------ -------- ------- -----
    for r in "${RESULTS[@]}"; do
        IFS='|' read -r s h x <<<"$r"
        awk -v s="$s" -v h="$h" -v x="$x" 'BEGIN { printf "%-24s %12.0f %12.0f %6.2fx\n", s, h, x, (h > 0) ? x / h : 0 }'
    done
    echo
    echo "after the runs both tables hold every id once: $TABLE_SIZE rows"
    echo
    echo "runs:"
    printf '  %s\n' "${RUNS[@]}"
} | tee "$OUT/sysbench-latest.txt"
wc_say "wrote $OUT/sysbench-latest.txt (run time ${ELAPSED}s)"
