#!/usr/bin/env bash
# bench/run.sh -- the SQL-level benchmark: the same cells in an ordinary table and in a widecol
# foreign table, on one throw-away cluster, side by side in one run.
#
#   bash bench/run.sh [--cells N] [--seconds S] [--reps R] [--order rowkey|random]
#
#   --cells N     cells to load [1000000]: N/10 HBase rows of 10 cells (3 families);
#                 4-5 minutes by default, 1-2 minutes with --cells 100000 --seconds 2 --reps 1
#   --seconds S   length of each pgbench run [5]; each pgbench figure is the median of R runs
#   --reps R      runs of every measurement, the median is kept [3]
#   --order O     order of the rows in the load file: rowkey (sorted, the ordinary table's best
#                 case) or random [rowkey]
#
# Installs what it needs (gnuplot-nox, pgbench), builds and installs the extension, starts a
# throw-away cluster (scripts/lib.sh), and writes bench/results/latest.txt (the table of ratios,
# then the plans and engine counters), bench/results/latest.png (the chart) and
# bench/results/latest.dat (the figures the chart is drawn from).  See BENCHMARKS.md.

set -eo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$(dirname "$0")/lib.sh"

CELLS=1000000
SECONDS_PER_RUN=5
REPS=3
ORDER=rowkey
while [ $# -gt 0 ]; do
    case $1 in
        --cells)   CELLS=$2; shift 2 ;;
        --seconds) SECONDS_PER_RUN=$2; shift 2 ;;
        --reps)    REPS=$2; shift 2 ;;
        --order)   ORDER=$2; shift 2 ;;
        -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) wc_die "unknown option $1 (try --help)" ;;
    esac
done
NROWS=$((CELLS / 10))
[ "$NROWS" -ge 100 ] && [ "$NROWS" -le 999999 ] || wc_die "--cells must be between 1000 and 9999990"
case $ORDER in rowkey|random) ;; *) wc_die "--order must be rowkey or random" ;; esac

BENCH=$WC_ROOT/bench
OUT=$BENCH/results
mkdir -p "$OUT"
T0=$(date +%s)

wc_need_packages "${WC_BUILD_PACKAGES[@]}" postgresql-client-$WC_PGVERSION gnuplot-nox
PGBENCH=$WC_PGBIN/pgbench
bench_build run

# A server set up as one would for a database of this size: the ordinary table gets a
# buffer cache that holds it whole and no checkpoint during the loads (both favour it);
# widecol's block cache (decompressed blocks, shared by the sessions) holds its table's
# 190 MB of blocks whole too, and its sorted files are read through the OS page cache.
WC_EXTRA_CONF="shared_buffers = '1GB'
widecol_fdw.block_cache_size = '512MB'
max_wal_size = '8GB'
checkpoint_timeout = '30min'
maintenance_work_mem = '512MB'
work_mem = '64MB'"
wc_cluster_start || wc_die "could not start a cluster"
wc_say "cluster in $WC_CLUSTER_DIR (port $PGPORT)"

sql() { wc_psql "$@"; }

# timed_ms SQL: runs SQL (any statements) in one session with \timing and prints the sum of
# the statements' times in ms.
timed_ms() {
    { echo '\timing on'; printf '%s\n' "$1"; } | "$WC_PGBIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 |
        awk '/^Time: / { s += $2 } END { printf "%.1f\n", s }'
}

median() {
    printf '%s\n' "$@" | sort -g |
        awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

RESULTS=()     # key|label|unit|ordinary|widecol|better(lower/higher)|goal ratio (or -)
result() { RESULTS+=("$1|$2|$3|$4|$5|$6|$7"); printf '    %-34s ordinary %12s   widecol %12s  %s\n' "$2" "$4" "$5" "$3"; }

PLANS=$(mktemp /tmp/widecol-bench-plans.XXXXXX)
wc_on_exit "rm -f '$PLANS' '$BUILDLOG'"
note() { printf '%s\n' "$*" >>"$PLANS"; }

# --- schema and data --------------------------------------------------------------------------

sql <<'EOF'
CREATE EXTENSION widecol_fdw;
CREATE SERVER wide FOREIGN DATA WRAPPER widecol_fdw;
CREATE TABLE cells_heap (rowkey text, family text, qualifier text, ts bigint, value text,
                         PRIMARY KEY (rowkey, family, qualifier, ts));
CREATE FOREIGN TABLE cells_wc (rowkey text, family text, qualifier text, ts bigint, value text)
    SERVER wide OPTIONS (families 'f1,f2,f3', max_versions '0');
EOF

wc_say "generating $CELLS cells ($NROWS rows x 10 cells, load order: $ORDER)"
sql -v nrows="$NROWS" -v order="$ORDER" -f "$BENCH/gen.sql" >/dev/null
COPYFILE=$WC_CLUSTER_DIR/cells.copy
sql -c "COPY cells_src TO '$COPYFILE'"
sql -c "VACUUM ANALYZE cells_src"
read -r NCELLS AVGVAL DATABYTES < <(sql -F ' ' -c "SELECT count(*), round(avg(length(value))), sum(length(rowkey) + length(family) + length(qualifier) + 8 + length(value)) FROM cells_src")
FILEBYTES=$(stat -c %s "$COPYFILE")
wc_say "$NCELLS cells, values of $AVGVAL bytes on average; $DATABYTES bytes of keys + values; COPY file $FILEBYTES bytes"

# --- bulk loads --------------------------------------------------------------------------------

# Each load starts from an empty table; the emptying (TRUNCATE, and for widecol a compaction
# that reclaims the truncated files) and a CHECKPOINT are not timed.
empty_table() {   # empty_table heap|wc
    if [ "$1" = heap ]; then
        sql -c "TRUNCATE cells_heap" -c "CHECKPOINT" >/dev/null
    else
        sql -c "TRUNCATE cells_wc" -c "SELECT widecol_compact('cells_wc')" -c "CHECKPOINT" >/dev/null
    fi
}

load() {   # load NAME HEAP_SQL WC_SQL
    local name=$1 heap_sql=$2 wc_sql=$3 i h w hs=() ws=()
    check_so
    wc_say "bulk load: $name ($REPS runs each)"
    for ((i = 1; i <= REPS; i++)); do
        empty_table heap
        h=$(timed_ms "$heap_sql")
        empty_table wc
        w=$(timed_ms "$wc_sql")
        echo "    run $i: ordinary $h ms, widecol $w ms"
        hs+=("$h"); ws+=("$w")
    done
    result "load_$name" "bulk load, $name (s)" s \
        "$(awk -v x="$(median "${hs[@]}")" 'BEGIN { printf "%.2f", x / 1000 }')" \
        "$(awk -v x="$(median "${ws[@]}")" 'BEGIN { printf "%.2f", x / 1000 }')" lower 0.5
}

load COPY "COPY cells_heap FROM '$COPYFILE';" \
          "COPY cells_wc FROM '$COPYFILE'; SELECT widecol_flush('cells_wc');"
load "INSERT ... SELECT" "INSERT INTO cells_heap SELECT * FROM cells_src;" \
          "INSERT INTO cells_wc SELECT * FROM cells_src; SELECT widecol_flush('cells_wc');"

# Both tables now hold the cells of the last INSERT ... SELECT.  Get them ready as an operator
# would after a bulk load: VACUUM ANALYZE the heap, major-compact and ANALYZE the store.
sql -c "VACUUM ANALYZE cells_heap" -c "CHECKPOINT" >/dev/null
COMPACT_MS=$(timed_ms "SELECT widecol_compact('cells_wc');")
sql -c "ANALYZE cells_wc" >/dev/null
note "widecol_compact after the load: $(awk -v x="$COMPACT_MS" 'BEGIN { printf "%.2f", x / 1000 }') s (not part of the load times)"

# --- bytes on disk -----------------------------------------------------------------------------

STOREDIR=$(sql -c "SELECT format('%s/base/%s/widecol_%s', current_setting('data_directory'),
                          (SELECT oid FROM pg_database WHERE datname = current_database()),
                          'cells_wc'::regclass::oid)")
HEAPBYTES=$(sql -c "SELECT pg_total_relation_size('cells_heap')")
read -r HEAP_T HEAP_I HEAP_TOAST < <(sql -F ' ' -c "SELECT pg_relation_size('cells_heap'), pg_indexes_size('cells_heap'), pg_total_relation_size('cells_heap') - pg_relation_size('cells_heap') - pg_indexes_size('cells_heap')")
WCBYTES=$(du -sb "$STOREDIR" | awk '{ print $1 }')
read -r WC_SST WC_RAW WC_FILES < <(sql -F ' ' -c "SELECT sum(bytes_on_disk), sum(bytes_raw), count(*) FROM widecol_stats('cells_wc')")
result bytes "bytes on disk (MB)" MB \
    "$(awk -v x="$HEAPBYTES" 'BEGIN { printf "%.1f", x / 1048576 }')" \
    "$(awk -v x="$WCBYTES" 'BEGIN { printf "%.1f", x / 1048576 }')" lower 0.3333
note "bytes on disk: ordinary $HEAPBYTES = heap $HEAP_T + indexes $HEAP_I + toast/fsm/vm $HEAP_TOAST"
note "               widecol  $WCBYTES (du -sb of the store directory) = $WC_FILES sorted files of $WC_SST bytes ($WC_RAW before lz4) + log, MANIFEST, LOCK"
note "               raw data (keys + 8-byte ts + values): $DATABYTES bytes; COPY text file: $FILEBYTES bytes"

# --- point reads and prefix scans (pgbench) ----------------------------------------------------

for t in heap wc; do
    for s in point prefix; do
        sed "s/@TABLE@/cells_$t/" "$BENCH/pgbench/$s.sql" >"$WC_CLUSTER_DIR/${s}_$t.sql"
    done
done
tps() {   # tps SCRIPT CLIENTS
    local log=$WC_CLUSTER_DIR/pgbench.log
    if ! "$PGBENCH" -n -M prepared -c "$2" -j "$2" -T "$SECONDS_PER_RUN" -D nrows="$NROWS" \
            -f "$WC_CLUSTER_DIR/$1.sql" >"$log" 2>&1; then
        tail -n 20 "$log" >&2
        grep -E 'ERROR|FATAL|PANIC|WARNING' "$WC_CLUSTER_DIR/server.log" | tail -n 20 >&2
        wc_die "pgbench $1 -c $2 failed (its output and the server's errors are above)"
    fi
    awk '/^tps = / { printf "%.0f\n", $3 }' "$log"
}
for s in point prefix; do
    for c in 1 2; do
        check_so
        wc_say "pgbench: $s, $c client(s), $REPS x ${SECONDS_PER_RUN}s per table"
        tps "${s}_heap" "$c" >/dev/null; tps "${s}_wc" "$c" >/dev/null   # warm-up runs
        hs=(); ws=()
        for ((i = 1; i <= REPS; i++)); do
            h=$(tps "${s}_heap" "$c"); w=$(tps "${s}_wc" "$c")
            echo "    run $i: ordinary $h tps, widecol $w tps"
            hs+=("$h"); ws+=("$w")
        done
        if [ $s = point ]; then label="point read of one row"; else label="prefix scan, 10 rows/100 cells"; fi
        result "${s}_c$c" "$label, -c $c (tps)" tps "$(median "${hs[@]}")" "$(median "${ws[@]}")" higher 1
    done
done

# --- scans, time range, join (psql, \timing) ----------------------------------------------------

# session_ms SQL N: in one session, runs SQL once untimed (a warm-up: the session's first use
# of a table opens its store or loads its catalog entries), then N times timed; prints the N
# times in ms, one a line.
session_ms() {
    { printf '%s;\n' "$1"; echo '\timing on'; for ((j = 0; j < $2; j++)); do printf '%s;\n' "$1"; done; } |
        "$WC_PGBIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 | awk '/^Time: / { print $2 }'
}

# scan KEY LABEL GOAL SQL_WITH_@T@: REPS timed runs on each table in a warm session; the results
# of both tables must be equal.
scan() {
    local key=$1 label=$2 goal=$3 q=$4 hq wq hr wr hs ws
    hq=${q//@T@/cells_heap}; wq=${q//@T@/cells_wc}
    hr=$(sql -c "$hq"); wr=$(sql -c "$wq")
    [ "$hr" = "$wr" ] || wc_die "$label: the tables disagree: ordinary '$hr', widecol '$wr'"
    note "$label: $wq -> $(echo "$wr" | tr '\n' ' ')"
    hs=($(session_ms "$hq" "$REPS")); ws=($(session_ms "$wq" "$REPS"))
    echo "    runs: ordinary ${hs[*]} ms, widecol ${ws[*]} ms"
    result "$key" "$label (ms)" ms "$(printf '%.1f' "$(median "${hs[@]}")")" \
        "$(printf '%.1f' "$(median "${ws[@]}")")" lower "$goal"
}

# first_query KEY LABEL SQL_WITH_@T@: the time of SQL as the first statement of a new session
# (what a client that connects per query pays), median of REPS sessions per table.
first_query() {
    local key=$1 label=$2 q=$3 hs=() ws=() i
    for ((i = 1; i <= REPS; i++)); do
        hs+=("$(timed_ms "${q//@T@/cells_heap}")"); ws+=("$(timed_ms "${q//@T@/cells_wc}")")
    done
    echo "    runs: ordinary ${hs[*]} ms, widecol ${ws[*]} ms"
    result "$key" "$label (ms)" ms "$(median "${hs[@]}")" "$(median "${ws[@]}")" lower -
}

check_so
wc_say "scans ($REPS runs each)"
scan full "full scan, 3 families" - "SELECT count(*), sum(length(value)) FROM @T@"
scan family "one-family scan (f1)" - "SELECT count(*), sum(length(value)) FROM @T@ WHERE family = 'f1'"
# The same two scans in one process: a parallel worker takes ~130 ms to start on this VM (a
# parallel count(*) of a 1,000-row ordinary table: 130-139 ms; a 100-cell range of widecol:
# 110-159 ms with workers, under 1 ms without), a fixed cost that distorts the ratio of a
# short scan to a long one.
PGOPTIONS="-c max_parallel_workers_per_gather=0" \
    scan full1 "full scan, no parallel workers" - "SELECT count(*), sum(length(value)) FROM @T@"
PGOPTIONS="-c max_parallel_workers_per_gather=0" \
    scan family1 "one-family scan, no parallel workers" - \
    "SELECT count(*), sum(length(value)) FROM @T@ WHERE family = 'f1'"
# one bound for both tables: now() moves between their queries, and a cell (0.4 a second
# here) may cross a bound computed in each
RECENT=$(sql -c "SELECT (extract(epoch FROM now()) * 1000)::bigint - 86400000")
scan recent "time range, last 24 h" - \
    "SELECT count(*), sum(length(value)) FROM @T@ WHERE ts >= $RECENT"
sql -c "SELECT setseed(0.17)" -c "CREATE TABLE keys AS SELECT 'user' || lpad(i::text, 6, '0') AS rowkey FROM generate_series(0, $NROWS - 1) i ORDER BY random() LIMIT 1000" -c "ANALYZE keys" >/dev/null
scan join "join of 1,000 keys" - \
    "SELECT count(*), sum(length(c.value)) FROM keys k JOIN @T@ c ON c.rowkey = k.rowkey"
first_query first "point read, 1st query of a session" \
    "SELECT * FROM @T@ WHERE rowkey = '$(printf 'user%06d' $((NROWS / 3)))'"

# The goal on the one-family scan compares each table with itself: one family / all families
# (issue 16: at most 0.4).
fam_ratio() {  # fam_ratio COL(4=ordinary, 5=widecol) FULL_KEY FAMILY_KEY
    local full fam r
    for r in "${RESULTS[@]}"; do
        case $r in "$2|"*) full=$(echo "$r" | cut -d'|' -f"$1") ;; "$3|"*) fam=$(echo "$r" | cut -d'|' -f"$1") ;; esac
    done
    awk -v a="$fam" -v b="$full" 'BEGIN { printf "%.3f", a / b }'
}
result famratio "one-family / full scan time" x "$(fam_ratio 4 full family)" \
    "$(fam_ratio 5 full family)" lower own0.4
result famratio1 "the same, no parallel workers" x "$(fam_ratio 4 full1 family1)" \
    "$(fam_ratio 5 full1 family1)" lower own0.4

# --- plans and engine counters -----------------------------------------------------------------

explain() { note ""; note "$1"; sql -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $1" | sed 's/^/    /' >>"$PLANS"; }
MIDKEY=$(printf 'user%06d' $((NROWS / 2 + 5)))
MIDLO=$(printf 'user%06d' $((NROWS / 2))); MIDHI=$(printf 'user%06d' $((NROWS / 2 + 10)))
explain "SELECT * FROM cells_wc WHERE rowkey = '$MIDKEY'"
explain "SELECT * FROM cells_heap WHERE rowkey = '$MIDKEY'"
explain "SELECT * FROM cells_wc WHERE rowkey >= '$MIDLO' AND rowkey < '$MIDHI'"
explain "SELECT count(*), sum(length(value)) FROM cells_wc WHERE family = 'f1'"
explain "SELECT count(*), sum(length(value)) FROM cells_wc WHERE ts >= $RECENT"
explain "SELECT count(*), sum(length(c.value)) FROM keys k JOIN cells_wc c ON c.rowkey = k.rowkey"
explain "SELECT count(*), sum(length(c.value)) FROM keys k JOIN cells_heap c ON c.rowkey = k.rowkey"
note ""
note "widecol_stats('cells_wc'):"
sql -F ' | ' -c "SELECT file, family, level, cells, bytes_on_disk, bytes_raw FROM widecol_stats('cells_wc') ORDER BY family" |
    sed 's/^/    /' >>"$PLANS"

check_so

# --- the table ------------------------------------------------------------------------------------

ELAPSED=$(( $(date +%s) - T0 ))
PGVER=$(sql -c "SHOW server_version")
{
    echo "widecol_fdw SQL benchmark -- $(date -u '+%Y-%m-%d %H:%M UTC'), commit $BENCH_COMMIT"
    echo "machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), $(free -g | awk '/^Mem:/ { print $2 }') GiB RAM, Linux $(uname -r), PostgreSQL $PGVER"
    echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "command: bash bench/run.sh --cells $CELLS --seconds $SECONDS_PER_RUN --reps $REPS --order $ORDER  (run time ${ELAPSED}s)"
    echo "data: $NCELLS cells = $NROWS rows x (f1: 4 cells, f2: 3 cells, f3: 1 cell x 3 versions), values avg $AVGVAL bytes of JSON; load order: $ORDER"
    echo "ordinary = heap table with PRIMARY KEY (rowkey, family, qualifier, ts); widecol = foreign table, families f1,f2,f3, max_versions 0"
    echo "server: shared_buffers = 1GB (the ordinary table's cache), widecol_fdw.block_cache_size = 512MB (widecol's)"
    echo "each figure: median of $REPS runs; pgbench -n -M prepared -T $SECONDS_PER_RUN; ratio = widecol / ordinary"
    echo
    printf '%s\n' "${RESULTS[@]}" | awk -F'|' '
        function goalstr(g, better) {
            if (g == "-") return "-"
            if (g ~ /^own/) return "widecol <= " substr(g, 4)
            return (better == "lower" ? "<= " : ">= ") g
        }
        BEGIN { printf "%-38s %12s %12s %8s  %-7s %-16s %s\n", "measurement", "ordinary", "widecol", "ratio", "better", "goal (ratio)", "met"
                printf "%-38s %12s %12s %8s  %-7s %-16s %s\n", "-----------", "--------", "-------", "-----", "------", "------------", "---" }
        {
            ratio = ($4 > 0) ? $5 / $4 : 0
            met = "-"
            if ($7 ~ /^own/) { g = substr($7, 4); met = ($5 <= g) ? "yes" : "NO"; rs = "-" }
            else {
                rs = sprintf("%.2f", ratio)
                if ($7 != "-") met = (($6 == "lower" && ratio <= $7) || ($6 == "higher" && ratio >= $7)) ? "yes" : "NO"
            }
            printf "%-38s %12s %12s %8s  %-7s %-16s %s\n", $2, $4, $5, rs, $6, goalstr($7, $6), met
        }'
    echo
    echo "notes, plans and engine counters:"
    sed 's/^/  /' "$PLANS"
} | tee "$OUT/latest.txt"

# --- the chart ---------------------------------------------------------------------------------------

# One bar per measurement: how many times better widecol does than the ordinary table
# (ordinary/widecol for times and bytes, widecol/ordinary for tps; the one-family row:
# full scan / one-family scan of widecol), log scale, the goal as a black dash.
printf '%s\n' "${RESULTS[@]}" | awk -F'|' '
    BEGIN {
        L["load_COPY"] = "load\nCOPY"; L["load_INSERT ... SELECT"] = "load\nINSERT..SELECT"
        L["bytes"] = "bytes\non disk"
        L["point_c1"] = "point read\n1 client"; L["point_c2"] = "point read\n2 clients"
        L["prefix_c1"] = "prefix scan\n1 client"; L["prefix_c2"] = "prefix scan\n2 clients"
        L["full"] = "full scan"; L["family"] = "1-family\nscan"; L["recent"] = "last 24 h\nts range"
        L["join"] = "join\n1,000 keys"; L["first"] = "1st query of\na session"; L["famratio"] = "widecol:\nfull/1-family"
        L["full1"] = "full scan\nno workers"; L["family1"] = "1-family\nno workers"
        L["famratio1"] = "widecol, no\nworkers: full/1-fam."
    }
    {
        if ($7 ~ /^own/) { adv = ($5 > 0) ? 1 / $5 : 0; goal = 1 / substr($7, 4) }
        else {
            adv = ($6 == "lower") ? (($5 > 0) ? $4 / $5 : 0) : (($4 > 0) ? $5 / $4 : 0)
            goal = ($7 == "-") ? "NaN" : (($6 == "lower") ? 1 / $7 : $7)
        }
        lab = ($1 in L) ? L[$1] : $1; gsub(/\n/, "\\n", lab)
        color = (goal == "NaN") ? 3 : ((adv >= goal * 0.9999) ? 1 : 2)
        printf "\"%s\" %.4f %s %d\n", lab, adv, goal, color
    }' >"$OUT/latest.dat"

gnuplot <<EOF
set terminal pngcairo size 1400,720 font "DejaVu Sans,11" noenhanced
set output "$OUT/latest.png"
set title "widecol_fdw vs an ordinary table (btree primary key): $NCELLS cells, $(nproc) CPUs, $(date -u +%Y-%m-%d)\nbar = how many times better widecol does, higher is better (times and bytes: ordinary / widecol; tps: widecol / ordinary); black dash = goal" font ",12"
set style fill solid 0.85 border -1
set boxwidth 0.7
set logscale y 2
set yrange [0.0625:16]
set ytics ("1/16" 0.0625, "1/8" 0.125, "1/4" 0.25, "1/2" 0.5, "1x" 1, "2x" 2, "4x" 4, "8x" 8, "16x" 16)
set grid ytics
set xtics font ",10" offset 0,-0.3
set bmargin 5
set key top right
set xrange [-0.6:*]
set arrow from graph 0, first 1 to graph 1, first 1 nohead lw 2 dt 2 lc rgb "#555555"
set palette defined (1 "#2e8b57", 2 "#c0392b", 3 "#7f8c8d")
set cbrange [1:3]
unset colorbox
plot "$OUT/latest.dat" using 0:2:4:xtic(1) with boxes lc palette notitle, \
     "" using 0:(0.075):(sprintf("%.2fx", \$2)) with labels font ",11" tc rgb "white" notitle, \
     "" using (\$0 - 0.4):3:(0.8):(0) with vectors nohead lw 4 lc rgb "black" title "goal", \
     NaN with boxes lc rgb "#2e8b57" title "goal met", \
     NaN with boxes lc rgb "#c0392b" title "goal missed", \
     NaN with boxes lc rgb "#7f8c8d" title "no goal"
EOF
wc_say "wrote $OUT/latest.txt, $OUT/latest.png, $OUT/latest.dat (run time ${ELAPSED}s)"
