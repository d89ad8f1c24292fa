#!/usr/bin/env bash
# bench/ingest.sh -- sustained ingest: interleaved time series written in transactions of
# 10,000 cells, into a widecol table and into an ordinary table (btree primary key on the
# cell key), one table after the other on one throw-away cluster.  Prints the load rate
# (cells/s) of every window of WINDOW cells as the table grows, and the rate of the last
# windows against the first ones: does the rate stay flat as the table grows (flushes,
# compactions; the ordinary table's index)?
#
#   bash bench/ingest.sh [--cells N] [--heap-cells N] [--window N] [--series S]
#
#   --cells N       cells written into the widecol table [50000000]
#   --heap-cells N  cells written into the ordinary table [10000000; 0 = skip it]
#   --window N      cells per measured window [1000000]
#   --series S      series written in turn, each transaction a run of time points of all
#                   of them [1000]
#
# About 5 minutes for the widecol table's 50M cells on a 2-core VM, and as long for the
# ordinary table's 10M.  Each transaction: INSERT ... SELECT of 10,000 cells (rowkey = the
# series, qualifier = the time point, 24-byte values), synchronous_commit on.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CELLS=50000000
HEAP_CELLS=10000000
WINDOW=1000000
SERIES=1000
TXN=10000
while [ $# -gt 0 ]; do
    case "$1" in
        --cells) CELLS=$2; shift 2 ;;
        --heap-cells) HEAP_CELLS=$2; shift 2 ;;
        --window) WINDOW=$2; shift 2 ;;
        --series) SERIES=$2; shift 2 ;;
        -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) wc_die "unknown option $1 (try --help)" ;;
    esac
done
[ $((WINDOW % TXN)) -eq 0 ] && [ $((TXN % SERIES)) -eq 0 ] ||
    wc_die "--window must be a multiple of $TXN, and $TXN a multiple of --series"

wc_need_packages "${WC_BUILD_PACKAGES[@]}" postgresql-client-$WC_PGVERSION
bench_build ingest
wc_cluster_start || wc_die "could not start a cluster"
PGBENCH=$WC_PGBIN/pgbench
WORK=$(mktemp -d /tmp/widecol-ingest.XXXXXX)
wc_on_exit "rm -rf '$WORK'"

wc_psql <<'SQL' >/dev/null
CREATE EXTENSION widecol_fdw;
CREATE SERVER wide FOREIGN DATA WRAPPER widecol_fdw;
CREATE TABLE heap (rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C",
                   ts bigint, value text, PRIMARY KEY (rowkey, family, qualifier, ts));
CREATE FOREIGN TABLE wc (rowkey text COLLATE "C", family text COLLATE "C",
                         qualifier text COLLATE "C", ts bigint, value text)
    SERVER wide OPTIONS (families 'm');
CREATE SEQUENCE batch_wc;
CREATE SEQUENCE batch_heap;
SQL

# One transaction: the next TXN / SERIES time points of every series.
PER=$((TXN / SERIES))
for t in wc heap; do
    cat >"$WORK/$t.sql" <<EOF
SELECT nextval('batch_$t') - 1 AS b \\gset
INSERT INTO $t SELECT 'series' || lpad((g % $SERIES)::text, 6, '0'), 'm',
       lpad((:b * $PER + g / $SERIES)::text, 12, '0'), 1700000000000 + (:b * $PER + g / $SERIES) * 1000,
       'v=' || lpad(((g * 7919 + :b) % 1000000)::text, 22, '0')
  FROM generate_series(0, $TXN - 1) g;
EOF
done

# run TABLE CELLS: windows of WINDOW cells, one pgbench run each; prints "cells_so_far rate"
run() {
    local t=$1 cells=$2 done=0 tps rate
    while [ "$done" -lt "$cells" ]; do
        check_so
        tps=$("$PGBENCH" -n -f "$WORK/$t.sql" -c 1 -t $((WINDOW / TXN)) 2>/dev/null |
              sed -nE 's/^tps = ([0-9.]+) .*/\1/p')
        [ -n "$tps" ] || wc_die "pgbench failed on $t"
        done=$((done + WINDOW))
        rate=$(awk -v t="$tps" -v n="$TXN" 'BEGIN { printf "%.0f", t * n }')
        printf '%s %s %s\n' "$t" "$done" "$rate" | tee -a "$WORK/rates"
    done
}

printf '\nsustained ingest (%s): %d series, transactions of %d cells, windows of %d cells\n' \
    "$BENCH_COMMIT" "$SERIES" "$TXN" "$WINDOW"
printf '%-6s %14s %14s\n' table "cells so far" "cells/s"
run wc "$CELLS"
[ "$HEAP_CELLS" -gt 0 ] && run heap "$HEAP_CELLS"

# The mean rate of the first and of the last three windows of each table.
printf '\n'
for t in wc heap; do
    awk -v t="$t" '$1 == t { r[++n] = $3 } END {
        if (n < 6) { if (n) printf "%s: %d windows, too few to compare\n", t, n; exit }
        first = (r[1] + r[2] + r[3]) / 3; last = (r[n-2] + r[n-1] + r[n]) / 3
        printf "%-5s first 3 windows %.0f cells/s, last 3 %.0f cells/s: the last at %.2f of the first\n",
               t ":", first, last, last / first }' "$WORK/rates"
done
wc_say "widecol table: $(wc_psql -c "SELECT count(*) || ' sorted files, ' || pg_size_pretty(sum(bytes_on_disk)) FROM widecol_stats('wc')")"
wc_say "ordinary table: $(wc_psql -c "SELECT pg_size_pretty(pg_total_relation_size('heap'))")"
