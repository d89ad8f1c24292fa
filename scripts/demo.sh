#!/usr/bin/env bash
# scripts/demo.sh -- builds and installs widecol_fdw, then shows it at work.
#
#   1. installs what the build needs if it is missing (apt-get; sudo when not root)
#   2. builds and installs the extension (make -C engine && make && make install)
#   3. starts a throw-away PostgreSQL 15 cluster in a temporary directory (not the system's)
#   4. the webtable of the Bigtable paper (scripts/demo-webtable.sql): gets, prefix scans,
#      time ranges, latest versions, a join, EXPLAIN, a wide table (a row per rowkey) over
#      the same store, flush and compaction
#   5. loads 300,000 cells of time series with a progress line, and queries them
#      (scripts/demo-metrics.sql)
# The cluster and its directory are removed at the end, on failure and on Ctrl-C.
# WC_DEMO_CELLS=N loads N cells instead (a multiple of 200).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

cells=${WC_DEMO_CELLS:-300000}
chunks=10
per_chunk=$(( (cells + chunks - 1) / chunks / 200 * 200 ))
[ "$per_chunk" -ge 200 ] || per_chunk=200
t_start=$(date +%s)

wc_say "1/5 checking what the build needs"
wc_need_packages "${WC_BUILD_PACKAGES[@]}"

wc_say "2/5 building and installing widecol_fdw"
build_log=$(mktemp /tmp/widecol-build.XXXXXX)
wc_on_exit "rm -f '$build_log'"
wc_build "$build_log" || exit 1
echo "    installed into $("$PG_CONFIG" --pkglibdir) and $("$PG_CONFIG" --sharedir)/extension"

wc_say "3/5 starting a throw-away PostgreSQL $WC_PGVERSION cluster"
wc_cluster_start || exit 1
echo "    initdb --locale=C in $WC_CLUSTER_DIR, run as user $(wc_cluster_user), socket only (no TCP),"
echo "    port $PGPORT; it is stopped and removed when this script ends"
export PGTZ=UTC

psql_demo() {
    "$WC_PGBIN/psql" -X -v ON_ERROR_STOP=1 -P pager=off "$@"
}

wc_say "4/5 the webtable of the Bigtable paper"
psql_demo -f "$WC_ROOT/scripts/demo-webtable.sql"
store=$(wc_psql -c "SELECT format('%s/base/%s/widecol_%s', current_setting('data_directory'), d.oid,
                                  'webtable'::regclass::oid)
                      FROM pg_database d WHERE d.datname = current_database()")
if [ -d "$store" ]; then
    echo "\$ ls -l $store"
    ls -l "$store"
fi

wc_say "5/5 real work: $((per_chunk * chunks)) cells of time series"
cat <<'TXT'

== 15. Loading time series: 4 metrics (cpu, mem, disk, net) of 50 hosts, one sample a minute.
The row key is <metric>/<host>/<hour> (the OpenTSDB design): one row per series and hour, one
column per minute (family m), so a series is one contiguous key range.  The value column is
double precision: any type is stored through its binary form.  Loaded with INSERT ... SELECT,
one transaction per chunk, as an ingest job would.
TXT
psql_demo -q -c "CREATE FOREIGN TABLE metrics (rowkey text, family text, qualifier text, ts bigint,
                                               value double precision)
                 SERVER wide OPTIONS (families 'm', max_versions '1')"
minutes=$((per_chunk / 200))     # 200 cells per minute: 4 metrics x 50 hosts
load_start=$(date +%s.%N)
for ((k = 0; k < chunks; k++)); do
    t0=$(date +%s.%N)
    psql_demo -q -c "
        INSERT INTO metrics (rowkey, family, qualifier, ts, value)
        SELECT format('%s/host%s/%s', metric, lpad(h::text, 3, '0'), to_char(t, 'YYYY-MM-DD\"T\"HH24')),
               'm', to_char(t, 'MI'), (extract(epoch FROM t) * 1000)::bigint,
               round((50 + 35 * sin(m / 120.0 + h) + 10 * random() + 3 * mi)::numeric, 1)
          FROM generate_series($((k * minutes)), $(((k + 1) * minutes - 1))) m,
               generate_series(1, 50) h,
               unnest('{cpu,mem,disk,net}'::text[]) WITH ORDINALITY AS x(metric, mi),
               LATERAL (SELECT timestamptz '2024-05-01 00:00Z' + m * interval '1 minute') AS y(t)"
    t1=$(date +%s.%N)
    awk -v done=$(((k + 1) * per_chunk)) -v all=$((chunks * per_chunk)) -v n="$per_chunk" \
        -v a="$t0" -v b="$t1" 'BEGIN { dt = b - a; if (dt <= 0) dt = 1e-6
        printf "    loaded %7d of %d cells (%3d%%)  %8.0f cells/s\n", done, all, 100 * done / all, n / dt }'
done
load_end=$(date +%s.%N)
awk -v n=$((chunks * per_chunk)) -v a="$load_start" -v b="$load_end" \
    'BEGIN { printf "    %d cells in %.1f s: %.0f cells/s\n", n, b - a, n / (b - a) }'
psql_demo -q -c "ANALYZE metrics"

psql_demo -f "$WC_ROOT/scripts/demo-metrics.sql"

echo
wc_say "done in $(( $(date +%s) - t_start )) s.  The extension stays installed; the cluster is removed now."
echo "    To use widecol_fdw in your own cluster: shared_preload_libraries = 'widecol_fdw' in"
echo "    postgresql.conf, restart, then CREATE EXTENSION widecol_fdw; (see README.md)"
