#!/usr/bin/env bash
# bench/compression.sh -- bytes on disk and times of a SQL-level load with each compression:
# none, lz4, zstd (level 3) and zstd level 9, side by side in one run on one throw-away cluster.
#
#   bash bench/compression.sh [--cells N] [--pages N]
#
#   --cells N   cells of bench/run.sh's data (JSON values in 3 families, bench/gen.sql) [1000000]
#   --pages N   web pages (4-28 KiB of HTML-like text each, deterministic) in a family of their
#               own, as a crawler's contents:html [5000]
#
# For each setting: a widecol table with that table-level compression, the same COPY of both
# corpora into it (bulk writes), a major compaction; then the bytes of its sorted files
# (widecol_stats), the COPY and compaction times, a full scan (sum of value lengths, each
# family alone) and 2000 point reads of pages.  An ordinary table with the same rows is there
# for reference (heap + toast, no index).  Prints a table; see BENCHMARKS.md.

set -eo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$(dirname "$0")/lib.sh"

CELLS=1000000
PAGES=5000
while [ $# -gt 0 ]; do
    case $1 in
        --cells) CELLS=$2; shift 2 ;;
        --pages) PAGES=$2; shift 2 ;;
        -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) wc_die "unknown option $1 (try --help)" ;;
    esac
done
NROWS=$((CELLS / 10))
[ "$NROWS" -ge 100 ] && [ "$NROWS" -le 999999 ] || wc_die "--cells must be between 1000 and 9999990"

BENCH=$WC_ROOT/bench
wc_need_packages "${WC_BUILD_PACKAGES[@]}" postgresql-client-$WC_PGVERSION
bench_build compression
WC_EXTRA_CONF="shared_buffers = '1GB'
max_wal_size = '8GB'
checkpoint_timeout = '30min'"
wc_cluster_start || wc_die "could not start a cluster"
sql() { wc_psql "$@"; }
timed_ms() {
    { echo '\timing on'; printf '%s\n' "$1"; } | "$WC_PGBIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 |
        awk '/^Time: / { s += $2 } END { printf "%.0f\n", s }'
}

wc_say "generating $CELLS cells and $PAGES pages"
sql -c "CREATE EXTENSION widecol_fdw; CREATE SERVER wide FOREIGN DATA WRAPPER widecol_fdw" >/dev/null
sql -v nrows="$NROWS" -v order=rowkey -f "$BENCH/gen.sql" >/dev/null
sql >/dev/null <<EOF
SELECT setseed(0.17);
-- a page: a shared head, then stories of words from a small vocabulary, ids and a token
CREATE FUNCTION bw(i int) RETURNS text LANGUAGE sql IMMUTABLE AS \$\$
    SELECT (ARRAY['the','news','market','today','report','city','world','sports','weather',
                  'update','analysis','video','photos','local','business','science','health',
                  'travel','opinion','culture','review','season','election','energy','company'])[1 + i % 25]
\$\$;
CREATE TABLE pages_src AS
SELECT 'com.example.www/' || lpad(p::text, 7, '0') AS rowkey, 'page'::text AS family,
       'html'::text AS qualifier, 1700000000000 + p AS ts,
       '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Page ' || p
       || ' - Example News</title><link rel="stylesheet" href="/static/css/site.min.css?v=20240501">'
       || '</head><body class="page"><header><nav class="top"><a href="/">Home</a>'
       || '<a href="/world">World</a><a href="/business">Business</a></nav></header><main>'
       || (SELECT string_agg(format('<article class="story" data-id="%s"><h2><a href="/%s/%s">%s</a></h2>'
                                    '<p class="summary">%s</p><span class="meta">token %s</span></article>',
                                    id, bw(id), id,
                                    (SELECT string_agg(bw(floor(random() * 25)::int), ' ')
                                       FROM generate_series(1, 3 + s % 6)),
                                    (SELECT string_agg(bw(floor(random() * 25)::int), ' ')
                                       FROM generate_series(1, 15 + (s * 7) % 40)),
                                    substr(md5(id::text), 1, 8)), E'\\n')
             FROM (SELECT s, (random() * 1000000)::int + p * 0 AS id
                     FROM generate_series(1, 12 + floor(random() * 80)::int + p * 0) s) x)
       || '</main><footer><p>&copy; Example News.</p></footer></body></html>' AS value
  FROM generate_series(1, $PAGES) p;
CREATE TABLE cells_heap AS SELECT * FROM cells_src UNION ALL SELECT * FROM pages_src;
EOF
COPYFILE=$WC_CLUSTER_DIR/all.copy
sql -c "COPY (SELECT * FROM cells_src UNION ALL SELECT * FROM pages_src) TO '$COPYFILE'" >/dev/null
read -r RAW_CELLS RAW_PAGES < <(sql -F ' ' -A -t -c "SELECT (SELECT sum(length(rowkey) + length(family) + length(qualifier) + 8 + length(value)) FROM cells_src), (SELECT sum(length(rowkey) + length(family) + length(qualifier) + 8 + length(value)) FROM pages_src)")
HEAP=$(sql -A -t -c "SELECT pg_total_relation_size('cells_heap')")
wc_say "raw (keys + 8-byte ts + values): cells $RAW_CELLS bytes, pages $RAW_PAGES bytes; ordinary table (heap + toast, no index) $HEAP bytes"

printf '%-8s %13s %13s %8s %8s %9s %9s %9s %10s\n' setting "cells bytes" "pages bytes" \
    "COPY ms" "compact" "scan f1-3" "scan page" "2000 gets" "pages/lz4"
LZ4_PAGES=
for setting in none lz4 zstd zstd-9; do
    check_so
    case $setting in
        zstd-9) opts="compression 'zstd', compression_level '9'" ;;
        *) opts="compression '$setting'" ;;
    esac
    t=t_${setting/-/_}
    sql -c "CREATE FOREIGN TABLE $t (rowkey text COLLATE \"C\", family text, qualifier text, ts bigint, value text)
            SERVER wide OPTIONS (families 'f1,f2,f3,page', max_versions '0', $opts)" >/dev/null
    copy_ms=$(timed_ms "COPY $t FROM '$COPYFILE';")
    compact_ms=$(timed_ms "SELECT widecol_compact('$t');")
    read -r cb pb < <(sql -F ' ' -A -t -c "SELECT sum(bytes_on_disk) FILTER (WHERE family <> 'page'), sum(bytes_on_disk) FILTER (WHERE family = 'page') FROM widecol_stats('$t')")
    scan_ms=$(timed_ms "SELECT sum(length(value)) FROM $t WHERE family IN ('f1','f2','f3');")
    page_ms=$(timed_ms "SELECT sum(length(value)) FROM $t WHERE family = 'page';")
    gets_ms=$(timed_ms "SELECT sum((SELECT length(value) FROM $t w WHERE w.rowkey = 'com.example.www/' || lpad((1 + (g * 7919) % $PAGES)::text, 7, '0') AND family = 'page')) FROM generate_series(1, 2000) g;")
    [ "$setting" = lz4 ] && LZ4_PAGES=$pb
    printf '%-8s %13s %13s %8s %8s %9s %9s %9s %10s\n' "$setting" "$cb" "$pb" "$copy_ms" \
        "$compact_ms" "$scan_ms" "$page_ms" "$gets_ms" \
        "$([ -n "$LZ4_PAGES" ] && awk -v a="$pb" -v b="$LZ4_PAGES" 'BEGIN { printf "%.2f", a / b }' || echo -)"
    sql -c "DROP FOREIGN TABLE $t" >/dev/null
done
wc_say "commit $BENCH_COMMIT; times in ms, one run each; bytes of sorted files after a major compaction"
