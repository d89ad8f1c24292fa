#!/usr/bin/env bash
# bench/delete.sh -- DELETE FROM t WHERE rowkey = x of a row of 1, 100 and 1,000 versions
# (issue 17): the direct delete (one bounded family marker per family, src/direct.c) against
# the ordinary path (every visible version fetched, locked and given a tombstone), on the same
# rows in one run on one cluster.
#
#   bash bench/delete.sh [--rows R] [--reps N]
#
#   --rows R   rows deleted per case [50], each in a transaction of its own (autocommit)
#   --reps N   repetitions of each case [3]; the figures are medians
#
# Each case loads R rowkeys x V versions (one family, one qualifier, a logged table) into a
# fresh table, compacts it, then deletes the R rows one statement each.  "ordinary" is the
# same statement with a condition that keeps it off the direct path (AND value IS NOT NULL:
# always true here).  Reported per deleted row: the time of the statement with its commit,
# the WAL bytes it wrote (a logged table's commit record carries its log record), and the
# entries and bytes the deletes left in the sorted file that the flush after them writes.
# Writes bench/results/delete-latest.txt.

set -eo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$(dirname "$0")/lib.sh"

ROWS=50
REPS=3
while [ $# -gt 0 ]; do
    case $1 in
        --rows) ROWS=$2; shift 2 ;;
        --reps) REPS=$2; shift 2 ;;
        -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) wc_die "unknown option $1 (try --help)" ;;
    esac
done

OUT=$WC_ROOT/bench/results
mkdir -p "$OUT"
REPORT=$OUT/delete-latest.txt

wc_need_packages "${WC_BUILD_PACKAGES[@]}" postgresql-client-$WC_PGVERSION
bench_build delete
WC_EXTRA_CONF="max_wal_size = '8GB'"
wc_cluster_start || wc_die "could not start a cluster"
sql() { wc_psql "$@"; }
sql -c "CREATE EXTENSION widecol_fdw" -c "CREATE SERVER wide FOREIGN DATA WRAPPER widecol_fdw" >/dev/null

median() {
    printf '%s\n' "$@" | sort -g |
        awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# one_case VERSIONS PATH -> "ms_per_row wal_bytes_per_row entries_per_row file_bytes_per_row"
one_case() {
    local v=$1 path=$2 extra= f t0 t1 l0 l1 ent bytes
    [ "$path" = ordinary ] && extra=" AND value IS NOT NULL"
    sql >/dev/null <<SQL
DROP FOREIGN TABLE IF EXISTS d;
CREATE FOREIGN TABLE d (rowkey text COLLATE "C", family text, qualifier text, ts bigint, value text)
    SERVER wide OPTIONS (families 'f', max_versions '0');
INSERT INTO d SELECT 'row' || lpad(r::text, 5, '0'), 'f', 'q', t, repeat('x', 40)
  FROM generate_series(1, $ROWS) r, generate_series(1, $v) t;
SELECT widecol_compact('d');
CHECKPOINT;
SQL
    f=$(mktemp /tmp/widecol-delete-q.XXXXXX)
    for ((r = 1; r <= ROWS; r++)); do
        printf "DELETE FROM d WHERE rowkey = 'row%05d'%s;\n" "$r" "$extra"
    done >"$f"
    check_so
    l0=$(sql -c "SELECT pg_current_wal_insert_lsn()")
    t0=$(date +%s%N)
    sql -f "$f" >/dev/null
    t1=$(date +%s%N)
    l1=$(sql -c "SELECT pg_current_wal_insert_lsn()")
    rm -f "$f"
    [ "$(sql -c "SELECT count(*) FROM d")" = 0 ] || wc_die "rows left after the $path deletes"
    sql -c "SELECT widecol_flush('d')" >/dev/null
    read -r ent bytes < <(sql -F ' ' -c "SELECT coalesce(sum(cells), 0), coalesce(sum(bytes_on_disk), 0)
                                          FROM widecol_stats('d') WHERE level = 0")
    awk -v t="$((t1 - t0))" -v w="$(sql -c "SELECT pg_wal_lsn_diff('$l1', '$l0')")" \
        -v e="$ent" -v b="$bytes" -v n="$ROWS" \
        'BEGIN { printf "%.3f %.0f %.1f %.0f\n", t / 1e6 / n, w / n, e / n, b / n }'
}

{
    echo "bench/delete.sh: $ROWS rows deleted per case, one statement (and commit) each; median of $REPS runs"
    echo "commit: $BENCH_COMMIT   machine: $(nproc) cores"
    echo
    printf '%-9s %-9s %12s %14s %14s %16s\n' versions path 'ms/row' 'WAL bytes/row' 'entries/row' 'file bytes/row'
} >"$REPORT"
for v in 1 100 1000; do
    for path in ordinary direct; do
        ms=(); wal=(); ent=(); fb=()
        for ((i = 1; i <= REPS; i++)); do
            read -r a b c d < <(one_case "$v" "$path")
            ms+=("$a"); wal+=("$b"); ent+=("$c"); fb+=("$d")
        done
        printf '%-9s %-9s %12s %14s %14s %16s\n' "$v" "$path" "$(median "${ms[@]}")" \
            "$(median "${wal[@]}")" "$(median "${ent[@]}")" "$(median "${fb[@]}")" | tee -a "$REPORT"
    done
done
wc_say "wrote $REPORT"
cat "$REPORT"
