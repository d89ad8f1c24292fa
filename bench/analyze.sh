#!/bin/bash
# bench/analyze.sh -- ANALYZE of a large store: sampled (this tree) against the full scan of
# a baseline commit, on the same data in one cluster, in alternating rounds.
#
#   bash bench/analyze.sh [BASELINE_REF [CELLS]]      (defaults: main, 1200000)
#
# Both libraries are built; the cluster is restarted with one or the other (the library is
# preloaded), ANALYZE VERBOSE runs three times in each of two rounds, and the times, the
# INFO line (what was read) and pg_class.reltuples are printed, then the planner's estimates
# of a few queries against the true counts.  With WC_DESTDIR (recommended) everything runs in
# that private installation.
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$(dirname "$0")/lib.sh"

BASE=${1:-main}
CELLS=${2:-1200000}
ROWS=$((CELLS / 6))            # 6 cells per rowkey: 2 families x 3 qualifiers

work=$(mktemp -d /tmp/widecol-analyze-bench.XXXXXX)
wc_on_exit "rm -rf '$work'"

bench_build analyze
cp "$SOFILE" "$work/new.so"
wc_say "building the baseline $BASE"
git -C "$WC_ROOT" archive "$BASE" | tar -xf - -C "$work" --one-top-level=base
(make -C "$work/base" PG_CONFIG="$PG_CONFIG" >"$work/base.log" 2>&1) || wc_die "baseline build failed: $work/base.log"
cp "$work/base/widecol_fdw.so" "$work/old.so"

wc_cluster_start >/dev/null
wc_psql -c "CREATE EXTENSION widecol_fdw" -c "CREATE SERVER wide FOREIGN DATA WRAPPER widecol_fdw" \
    -c "CREATE FOREIGN TABLE big (rowkey text COLLATE \"C\", family text COLLATE \"C\",
            qualifier text COLLATE \"C\", ts bigint, value int)
        SERVER wide OPTIONS (families 'f1,f2', max_versions '1')"
wc_say "loading $CELLS cells ($ROWS rowkeys)"
wc_psql -c "INSERT INTO big SELECT 'user' || lpad((i * 7919 % $ROWS)::text, 8, '0'), f, 'q' || q, 1,
                (i * 37 + q) % 1000
              FROM generate_series(0, $ROWS - 1) i, unnest(ARRAY['f1', 'f2']) f, generate_series(0, 2) q" \
        -c "SELECT widecol_compact('big')"
wc_psql -c "SELECT count(*) AS files, sum(cells) AS cells, pg_size_pretty(sum(bytes_on_disk)) AS bytes
              FROM widecol_stats('big')" -F ' ' | sed 's/^/store: files cells bytes = /'

run_with() {    # run_with old|new
    wc_as_cluster_user "$WC_PGBIN/pg_ctl" -D "$WC_PGDATA" -w -m fast stop >/dev/null
    cp "$work/$1.so" "$SOFILE"
    SOSUM=$(md5sum <"$SOFILE")
    wc_cluster_restart >/dev/null
    for i in 1 2 3; do
        local t0 t1 info
        t0=$(date +%s%N)
        info=$(wc_psql -c "SET default_statistics_target = 100" -c "ANALYZE VERBOSE big" 2>&1 | grep -m1 '"big"' || true)
        t1=$(date +%s%N)
        printf '%s  ANALYZE %6d ms  reltuples %s  %s\n' "$1" $(( (t1 - t0) / 1000000 )) \
            "$(wc_psql -c "SELECT reltuples::bigint FROM pg_class WHERE relname = 'big'")" "${info#INFO:  }"
    done
}
for round in 1 2; do
    run_with old
    run_with new
done
wc_say "planner estimates after the last (sampled) ANALYZE, against the true counts"
for q in "family = 'f1'" "value < 100" "qualifier = 'q1' AND value >= 500" "rowkey LIKE 'user0001%'"; do
    est=$(wc_psql -c "EXPLAIN SELECT * FROM big WHERE $q" | head -1 | sed -E 's/.*rows=([0-9]+).*/\1/')
    act=$(wc_psql -c "SELECT count(*) FROM big WHERE $q")
    printf '  %-40s estimate %8s  actual %8s\n' "$q" "$est" "$act"
done
cp "$work/new.so" "$SOFILE"
