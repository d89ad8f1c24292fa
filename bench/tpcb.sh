#!/usr/bin/env bash
# bench/tpcb.sh -- pgbench's own built-in scripts with pgbench_accounts an ordinary table and a
# widecol wide table with an integer rowkey, side by side on one throw-away cluster.
#
#   bash bench/tpcb.sh [--scale N] [--seconds S] [--reps R] [--clients LIST] [--scripts LIST]
#
#   --scale N        pgbench's scale factor: N x 100,000 accounts [10]
#   --seconds S      length of each pgbench run [5]
#   --reps R         runs of every measurement, the two tables alternating; the median is kept [3]
#   --clients LIST   comma-separated pgbench client counts [1,8]
#   --scripts LIST   pgbench built-in scripts [select-only,simple-update,tpcb-like]
#   --no-pin         leave one-client runs where the scheduler puts them [pgbench and the server
#                    on CPU 0, as bench/ycsb.sh does: see there]
#
# About 4 minutes with the defaults on a 2-core machine.  pgbench -i makes its four tables; the
# accounts are copied into `accounts_wc (rowkey int, bid, abalance, filler: cells of family a)`,
# and pgbench_accounts becomes a view, over the ordinary table (accounts_heap, pgbench's own,
# with its primary key) or over the wide table (rowkey AS aid), switched between runs: the
# scripts run unchanged, `aid = :aid` a point read of the wide table (a view's conditions go to
# the table under it).  Tellers, branches and history stay ordinary tables for both.  After the
# runs every balance change must be in the history: sum(abalance) of both account tables =
# sum(delta) of pgbench_history.  Writes bench/results/tpcb-latest.txt.

set -eo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$(dirname "$0")/lib.sh"

SCALE=10
SECONDS_PER_RUN=5
REPS=3
CLIENTS=1,8
SCRIPTS=select-only,simple-update,tpcb-like
BENCH_PIN=1
ARGS="$*"
while [ $# -gt 0 ]; do
    case $1 in
        --scale)   SCALE=$2; shift 2 ;;
        --seconds) SECONDS_PER_RUN=$2; shift 2 ;;
        --reps)    REPS=$2; shift 2 ;;
        --clients) CLIENTS=$2; shift 2 ;;
        --scripts) SCRIPTS=$2; shift 2 ;;
        --no-pin)  BENCH_PIN=; shift ;;
        -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) wc_die "unknown option $1 (try --help)" ;;
    esac
done
[[ "$SCALE" =~ ^[0-9]+$ ]] && [ "$SCALE" -ge 1 ] && [ "$SCALE" -le 1000 ] || wc_die "--scale must be between 1 and 1000"
[[ "$SECONDS_PER_RUN" =~ ^[0-9]+$ ]] && [ "$SECONDS_PER_RUN" -ge 1 ] || wc_die "--seconds must be a positive integer"
[[ "$REPS" =~ ^[0-9]+$ ]] && [ "$REPS" -ge 1 ] || wc_die "--reps must be a positive integer"
IFS=, read -r -a CLIENT_LIST <<<"$CLIENTS"
for c in "${CLIENT_LIST[@]}"; do [[ "$c" =~ ^[0-9]+$ ]] && [ "$c" -ge 1 ] || wc_die "bad client count '$c'"; done
IFS=, read -r -a SCRIPT_LIST <<<"$SCRIPTS"
for s in "${SCRIPT_LIST[@]}"; do
    case $s in select-only|simple-update|tpcb-like) ;; *) wc_die "bad script '$s' (select-only, simple-update, tpcb-like)" ;; esac
done

OUT=$WC_ROOT/bench/results
mkdir -p "$OUT"
T0=$(date +%s)
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
wc_need_packages "${WC_BUILD_PACKAGES[@]}" postgresql-client-$WC_PGVERSION
PGBENCH=$WC_PGBIN/pgbench
bench_build tpcb

# bench/ycsb.sh's server: each table's cache holds it whole; fsync and synchronous_commit on
WC_EXTRA_CONF="shared_buffers = '1GB'
widecol_fdw.block_cache_size = '512MB'
max_wal_size = '8GB'
checkpoint_timeout = '30min'"
wc_cluster_start || wc_die "could not start a cluster"
wc_say "cluster in $WC_CLUSTER_DIR (port $PGPORT)"
sql() { wc_psql "$@"; }

wc_say "pgbench -i -s $SCALE, and the accounts copied into a wide table"
"$PGBENCH" -i -q -s "$SCALE" >"$WC_CLUSTER_DIR/init.log" 2>&1 || { cat "$WC_CLUSTER_DIR/init.log"; wc_die "pgbench -i failed"; }
sql <<'EOF' >/dev/null
CREATE EXTENSION widecol_fdw;
CREATE SERVER wide FOREIGN DATA WRAPPER widecol_fdw;
CREATE FOREIGN TABLE accounts_wc (
    rowkey   int,
    bid      int      OPTIONS (cell 'a:bid'),
    abalance int      OPTIONS (cell 'a:abalance'),
    filler   char(84) OPTIONS (cell 'a:filler')
) SERVER wide OPTIONS (families 'a', max_versions '1');
INSERT INTO accounts_wc SELECT aid, bid, abalance, filler FROM pgbench_accounts;
SELECT widecol_flush('accounts_wc');
SELECT widecol_compact('accounts_wc');
ANALYZE accounts_wc;
ALTER TABLE pgbench_accounts RENAME TO accounts_heap;
VACUUM ANALYZE accounts_heap;
CREATE VIEW pgbench_accounts AS SELECT aid, bid, abalance, filler FROM accounts_heap;
EOF
[ "$(sql -c "SELECT count(*) FROM accounts_wc")" = "$((SCALE * 100000))" ] || wc_die "the wide table does not hold every account"

use() {   # use heap|wc: what pgbench_accounts shows
    if [ "$1" = heap ]; then
        sql -c "CREATE OR REPLACE VIEW pgbench_accounts AS SELECT aid, bid, abalance, filler FROM accounts_heap" >/dev/null
    else
        sql -c "CREATE OR REPLACE VIEW pgbench_accounts AS SELECT rowkey AS aid, bid, abalance, filler FROM accounts_wc" >/dev/null
    fi
}
tps() {   # tps heap|wc SCRIPT CLIENTS SECONDS
    local log=$WC_CLUSTER_DIR/pgbench.log
    use "$1"
    if ! bench_pgbench "$3" -n -M prepared -b "$2" -c "$3" -j "$3" -T "$4" >"$log" 2>&1; then
        tail -n 20 "$log" >&2
        wc_die "pgbench, $2 on $1, $3 client(s), failed"
    fi
    sql -c "CHECKPOINT" -c "SELECT widecol_flush('accounts_wc')" >/dev/null
    awk '/^tps = / { printf "%.0f\n", $3 }' "$log"
}

RESULTS=()
RUNS=()
for s in "${SCRIPT_LIST[@]}"; do
    for c in "${CLIENT_LIST[@]}"; do
        check_so
        wc_say "$s, $c client(s): $REPS x ${SECONDS_PER_RUN}s per table"
        tps heap "$s" "$c" 2 >/dev/null; tps wc "$s" "$c" 2 >/dev/null   # warm-up
        hs=(); ws=()
        for ((r = 1; r <= REPS; r++)); do
            if [ $((r % 2)) -eq 1 ]; then
                h=$(tps heap "$s" "$c" "$SECONDS_PER_RUN"); x=$(tps wc "$s" "$c" "$SECONDS_PER_RUN")
            else
                x=$(tps wc "$s" "$c" "$SECONDS_PER_RUN"); h=$(tps heap "$s" "$c" "$SECONDS_PER_RUN")
            fi
            echo "    run $r: ordinary $h tps, widecol $x tps"
            hs+=("$h"); ws+=("$x")
        done
        RUNS+=("$s, $c client(s), runs (tps): ordinary ${hs[*]}; widecol ${ws[*]}")
        RESULTS+=("$s|$c|$(median "${hs[@]}")|$(median "${ws[@]}")")
    done
done

check_so
read -r BH BW BD < <(sql -F ' ' -c "SELECT (SELECT sum(abalance) FROM accounts_heap), (SELECT sum(abalance) FROM accounts_wc),
                                          (SELECT coalesce(sum(delta), 0) FROM pgbench_history)")
[ "$((BH + BW))" = "$BD" ] ||
    wc_die "balances and history disagree: ordinary $BH + widecol $BW <> history $BD"
ELAPSED=$(( $(date +%s) - T0 ))
{
    echo "widecol_fdw pgbench benchmark -- $(date -u '+%Y-%m-%d %H:%M UTC'), commit $BENCH_COMMIT"
    echo "machine: $(nproc) CPUs, $(free -g | awk '/^Mem:/ { print $2 }') GiB RAM, PostgreSQL $(sql -c "SHOW server_version")"
    echo "load average at the start: $LOAD_START; at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "command: bash bench/tpcb.sh --scale $SCALE --seconds $SECONDS_PER_RUN --reps $REPS --clients $CLIENTS --scripts $SCRIPTS$([ -n "$BENCH_PIN" ] || echo " --no-pin")  (run time ${ELAPSED}s)"
    echo "pgbench -n -M prepared -b SCRIPT -c C -j C -T $SECONDS_PER_RUN; pgbench_accounts a view over"
    echo "  ordinary: accounts_heap, pgbench's own table (aid int PRIMARY KEY, bid, abalance, filler)"
    echo "  widecol:  accounts_wc (rowkey int, bid, abalance, filler: cells 'a:...'), max_versions 1, as rowkey AS aid"
    echo "tellers, branches, history: ordinary tables for both; each tps the median of $REPS runs, tables alternating"
    [ -n "$BENCH_PIN" ] && echo "one client: pgbench and its backend on CPU 0 (taskset; --no-pin: where the scheduler puts them)"
    echo
    printf '%-16s %8s %12s %12s %7s\n' script clients ordinary widecol ratio
    printf '%-16s %8s %12s %12s %7s\n' ------ ------- -------- ------- -----
    for r in "${RESULTS[@]}"; do
        IFS='|' read -r s c h x <<<"$r"
        awk -v s="$s" -v c="$c" -v h="$h" -v x="$x" 'BEGIN { printf "%-16s %8d %12.0f %12.0f %6.2fx\n", s, c, h, x, (h > 0) ? x / h : 0 }'
    done
    echo
    echo "every balance change is in the history: ordinary $BH + widecol $BW = history $BD"
    echo
    echo "runs:"
    printf '  %s\n' "${RUNS[@]}"
} | tee "$OUT/tpcb-latest.txt"
wc_say "wrote $OUT/tpcb-latest.txt (run time ${ELAPSED}s)"
