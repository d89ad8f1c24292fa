#!/usr/bin/env bash
# bench/parallel.sh -- parallel scans (issue 17): count(*) and a sum over a 1M-cell tall
# table with 0, 1 and 2 parallel workers, against an ordinary table's (parallel) seq scan,
# side by side in one run on one cluster.
#
#   bash bench/parallel.sh [--rows N] [--seconds S] [--reps R]
#
#   --rows N      rowkeys [200000], 5 cells each (one family, 5 qualifiers): 5N cells
#   --seconds S   length of each pgbench run [5]; each figure is the median of R runs [3]
#
# The widecol table is loaded in one INSERT ... SELECT and major-compacted into sorted
# files; the same rows go into an ordinary table (vacuumed, in shared_buffers).  Each
# pgbench run sets max_parallel_workers_per_gather through PGOPTIONS, and
# parallel_setup_cost = 0 so that the plan is parallel whenever workers are allowed (the
# figures measure the execution, not the planner's choice).  Writes
# bench/results/parallel-latest.txt.

set -eo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$(dirname "$0")/lib.sh"

ROWS=200000
SECONDS_PER_RUN=5
REPS=3
while [ $# -gt 0 ]; do
    case $1 in
        --rows)    ROWS=$2; shift 2 ;;
        --seconds) SECONDS_PER_RUN=$2; shift 2 ;;
        --reps)    REPS=$2; shift 2 ;;
        -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) wc_die "unknown option $1 (try --help)" ;;
    esac
done

OUT=$WC_ROOT/bench/results
mkdir -p "$OUT"
REPORT=$OUT/parallel-latest.txt

wc_need_packages "${WC_BUILD_PACKAGES[@]}" postgresql-client-$WC_PGVERSION
PGBENCH=$WC_PGBIN/pgbench
bench_build parallel
WC_EXTRA_CONF="shared_buffers = '512MB'
max_wal_size = '8GB'
max_worker_processes = 8
max_parallel_workers = 8"
wc_cluster_start || wc_die "could not start a cluster"
sql() { wc_psql "$@"; }

median() {
    printf '%s\n' "$@" | sort -g |
        awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

wc_say "loading $ROWS rowkeys x 5 cells"
sql -v rows="$ROWS" >/dev/null <<'EOF'
CREATE EXTENSION widecol_fdw;
CREATE SERVER wide FOREIGN DATA WRAPPER widecol_fdw;
CREATE FOREIGN TABLE t_wc (rowkey text COLLATE "C", family text, qualifier text, ts bigint, value text)
    SERVER wide OPTIONS (families 'f');
CREATE TABLE t_heap (rowkey text COLLATE "C", family text, qualifier text, ts bigint, value text);
CREATE TABLE src AS
SELECT 'row' || lpad(r::text, 8, '0') AS rowkey, 'f' AS family, 'q' || q AS qualifier,
       1700000000000 + r AS ts, repeat(md5(r::text || q), 1 + (r + q) % 3) AS value
  FROM generate_series(1, :rows) r, generate_series(1, 5) q;
INSERT INTO t_wc SELECT * FROM src;
SELECT widecol_compact('t_wc');
INSERT INTO t_heap SELECT * FROM src;
VACUUM ANALYZE t_heap;
ANALYZE t_wc;
DROP TABLE src;
CHECKPOINT;
EOF

declare -A Q
Q[count]="SELECT count(*) FROM %s"
Q[sum]="SELECT sum(length(value)), max(ts) FROM %s"

{
    echo "bench/parallel.sh: $ROWS rowkeys x 5 = $((ROWS * 5)) cells, commit $BENCH_COMMIT, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "pgbench -n -c 1 -T $SECONDS_PER_RUN, median of $REPS runs; milliseconds per query (1000 / tps)"
    echo
} >"$REPORT"

for q in count sum; do
    for tab in t_wc t_heap; do
        for w in 0 1 2; do
            check_so
            f=$(mktemp /tmp/widecol-parallel-q.XXXXXX)
            # shellcheck disable=SC2059
            printf "${Q[$q]};\n" "$tab" >"$f"
            runs=()
            for ((i = 1; i <= REPS; i++)); do
                t=$(PGOPTIONS="-c max_parallel_workers_per_gather=$w -c parallel_setup_cost=0" \
                    "$PGBENCH" -n -c 1 -T "$SECONDS_PER_RUN" -f "$f" 2>/dev/null |
                    sed -nE 's/^tps = ([0-9.]+).*/\1/p')
                runs+=("$(awk -v t="$t" 'BEGIN { printf "%.1f", 1000 / t }')")
            done
            rm -f "$f"
            m=$(median "${runs[@]}")
            printf '%-6s %-7s workers=%d %8.1f ms  (runs: %s)\n' "$q" "$tab" "$w" "$m" "${runs[*]}" |
                tee -a "$REPORT"
        done
    done
done

{
    echo
    echo "the planner's choice with the default costs (max_parallel_workers_per_gather = 2):"
    for tab in t_wc t_heap; do
        # shellcheck disable=SC2059
        q=$(printf "${Q[count]}" "$tab")
        echo "--- $q"
        sql -c "EXPLAIN $q"
    done
    echo
    echo "plans (EXPLAIN ANALYZE VERBOSE: per-worker rows and times), 2 workers:"
    for tab in t_wc t_heap; do
        # shellcheck disable=SC2059
        q=$(printf "${Q[sum]}" "$tab")
        echo "--- $q"
        PGOPTIONS="-c max_parallel_workers_per_gather=2 -c parallel_setup_cost=0" \
            sql -c "EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, SUMMARY OFF) $q"
    done
} >>"$REPORT"
wc_say "wrote $REPORT"
cat "$REPORT"
