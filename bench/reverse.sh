#!/usr/bin/env bash
# bench/reverse.sh -- ORDER BY rowkey DESC LIMIT 10 (issue 17): the reversed scan, the plan
# before it (a top-N Sort over a forward scan of the whole range), and an ordinary table with a
# btree primary key (an Index Scan Backward), side by side in one run on one cluster.
#
#   bash bench/reverse.sh [--users U] [--messages M] [--seconds S] [--reps R]
#
#   --users U      rowkey prefixes ("users") [100]
#   --messages M   rows per user, one cell each [10000]: U*M cells in all
#   --seconds S    length of each pgbench run [5]; each figure is the median of R runs [3]
#
# The rows are an inbox (DOMAIN.md): rowkey user<4 digits>-<7 digits>, one 100-byte cell
# each, loaded in one INSERT ... SELECT (a bulk write) and major-compacted.  "before" is the
# same query with the reversed path out of reach (ORDER BY rowkey || '' DESC: the same order,
# on an expression no path provides), which is the plan every build before the reversed scan
# made.  Writes bench/results/reverse-latest.txt.

set -eo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$(dirname "$0")/lib.sh"

USERS=100
MESSAGES=10000
SECONDS_PER_RUN=5
REPS=3
while [ $# -gt 0 ]; do
    case $1 in
        --users)    USERS=$2; shift 2 ;;
        --messages) MESSAGES=$2; shift 2 ;;
        --seconds)  SECONDS_PER_RUN=$2; shift 2 ;;
        --reps)     REPS=$2; shift 2 ;;
        -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) wc_die "unknown option $1 (try --help)" ;;
    esac
done

OUT=$WC_ROOT/bench/results
mkdir -p "$OUT"
REPORT=$OUT/reverse-latest.txt

wc_need_packages "${WC_BUILD_PACKAGES[@]}" postgresql-client-$WC_PGVERSION
PGBENCH=$WC_PGBIN/pgbench
bench_build reverse
WC_EXTRA_CONF="shared_buffers = '512MB'
max_wal_size = '8GB'
work_mem = '64MB'"
wc_cluster_start || wc_die "could not start a cluster"
sql() { wc_psql "$@"; }

median() {
    printf '%s\n' "$@" | sort -g |
        awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

wc_say "loading $USERS users x $MESSAGES messages"
sql -v users="$USERS" -v messages="$MESSAGES" >/dev/null <<'EOF'
CREATE EXTENSION widecol_fdw;
CREATE SERVER wide FOREIGN DATA WRAPPER widecol_fdw;
CREATE FOREIGN TABLE inbox_wc (rowkey text COLLATE "C", family text, qualifier text, ts bigint, value text)
    SERVER wide OPTIONS (families 'm');
CREATE TABLE inbox_heap (rowkey text COLLATE "C", family text, qualifier text, ts bigint, value text,
                         PRIMARY KEY (rowkey, family, qualifier, ts));
CREATE TABLE src AS
SELECT 'user' || lpad(u::text, 4, '0') || '-' || lpad(m::text, 7, '0') AS rowkey, 'm' AS family,
       'body' AS qualifier, 1700000000000 + m AS ts, md5(u::text || m) || md5(m::text || u) || repeat('.', 36) AS value
  FROM generate_series(1, :users) u, generate_series(1, :messages) m;
INSERT INTO inbox_wc SELECT * FROM src;
SELECT widecol_compact('inbox_wc');
INSERT INTO inbox_heap SELECT * FROM src;
VACUUM ANALYZE inbox_heap;
ANALYZE inbox_wc;
DROP TABLE src;
CHECKPOINT;
EOF

MID=$(printf 'user%04d-' $(( (USERS + 1) / 2 )))
declare -A Q
Q[rev_all]="SELECT * FROM inbox_wc ORDER BY rowkey DESC LIMIT 10"
Q[before_all]="SELECT * FROM inbox_wc ORDER BY rowkey || '' DESC LIMIT 10"
Q[heap_all]="SELECT * FROM inbox_heap ORDER BY rowkey DESC LIMIT 10"
Q[rev_user]="SELECT * FROM inbox_wc WHERE rowkey LIKE '$MID%' ORDER BY rowkey DESC LIMIT 10"
Q[before_user]="SELECT * FROM inbox_wc WHERE rowkey LIKE '$MID%' ORDER BY rowkey || '' DESC LIMIT 10"
Q[heap_user]="SELECT * FROM inbox_heap WHERE rowkey LIKE '$MID%' ORDER BY rowkey DESC LIMIT 10"
Q[fwd_user]="SELECT * FROM inbox_wc WHERE rowkey LIKE '$MID%' ORDER BY rowkey LIMIT 10"
# the whole prefix, in order (OFFSET: every row read, one returned): what a reversed scan
# costs per row against a forward scan, and against the plan the planner picks
Q[rev_range]="SELECT * FROM inbox_wc WHERE rowkey LIKE '$MID%' ORDER BY rowkey DESC OFFSET $((MESSAGES - 1))"
Q[before_range]="SELECT * FROM inbox_wc WHERE rowkey LIKE '$MID%' ORDER BY rowkey || '' DESC OFFSET $((MESSAGES - 1))"
Q[fwd_range]="SELECT * FROM inbox_wc WHERE rowkey LIKE '$MID%' ORDER BY rowkey OFFSET $((MESSAGES - 1))"
Q[heap_range]="SELECT * FROM inbox_heap WHERE rowkey LIKE '$MID%' ORDER BY rowkey DESC OFFSET $((MESSAGES - 1))"

{
    echo "bench/reverse.sh: $USERS users x $MESSAGES messages = $((USERS * MESSAGES)) cells, commit $BENCH_COMMIT, $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "pgbench -n -c 1 -T $SECONDS_PER_RUN, median of $REPS runs"
    echo
} >"$REPORT"

TPS=()
for k in rev_all before_all heap_all rev_user before_user heap_user fwd_user \
         rev_range before_range fwd_range heap_range; do
    check_so
    f=$(mktemp /tmp/widecol-reverse-q.XXXXXX)
    printf '%s;\n' "${Q[$k]}" >"$f"
    runs=()
    for ((i = 1; i <= REPS; i++)); do
        t=$("$PGBENCH" -n -c 1 -T "$SECONDS_PER_RUN" -f "$f" 2>/dev/null |
            sed -nE 's/^tps = ([0-9.]+).*/\1/p')
        runs+=("$t")
    done
    rm -f "$f"
    m=$(median "${runs[@]}")
    TPS+=("$k=$m")
    printf '%-12s %10.1f tps  (runs: %s)  %s\n' "$k" "$m" "${runs[*]}" "${Q[$k]}" | tee -a "$REPORT"
done

{
    echo
    echo "plans (EXPLAIN ANALYZE, timing off):"
    for k in rev_all before_all heap_all rev_user before_user heap_user rev_range fwd_range heap_range; do
        echo "--- $k: ${Q[$k]}"
        sql -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ${Q[$k]}"
    done
} >>"$REPORT"
wc_say "wrote $REPORT"
cat "$REPORT"
