#!/usr/bin/env bash
# bench/ycsb.sh -- YCSB's six core workloads (A-F) through pgbench, against the table YCSB's JDBC
# binding uses (an ordinary table with a primary key) and a widecol wide table of the same
# shape, on one throw-away cluster, side by side in one run.
#
#   bash bench/ycsb.sh [--records N] [--seconds S] [--reps R] [--clients LIST] [--workloads LIST]
#
#   --records N      records loaded into each table [100000]: 10 fields of 100 bytes each
#   --seconds S      length of each pgbench run [5]
#   --reps R         runs of every measurement, the two tables alternating; the median is kept [3]
#   --clients LIST   comma-separated pgbench client counts [1,8]
#   --workloads LIST which of a,b,c,d,e,f, run in this order [a,b,c,f,d,e: YCSB's suggested order]
#   --no-ceiling     leave out the runs with no table (below) [they run]
#   --no-pin         leave one-client runs where the scheduler puts them [pgbench and the server
#                    on one CPU: see below]
#   --hold           load the tables, write the scripts, then keep the cluster until interrupted
#                    (for profiling): prints the environment to reach it and the scripts' directory
#
# 10-11 minutes with the defaults on a 2-core machine; a quick run (about 3 minutes):
#   bash bench/ycsb.sh --records 20000 --seconds 3 --reps 1
#
# Beside the two tables each workload also runs with no table at all (the "ceiling"): the same
# statements, but a read returns a row of constants of the same shape, an update or insert
# writes its bytes to the WAL as a transactional message (its commit waits for the flush as
# an update's does), a scan returns its rows from generate_series.  That is what a storage
# costing nothing would reach; ceiling = no table / ordinary, the most any table could gain.
#
# One client's runs put pgbench and the server's new backends on CPU 0 (taskset): a client and
# its backend hand each other every message, and on two CPUs each hand-over waits for the other
# CPU to wake (on this 2-CPU VM 10-13k reads/s against 40k on one CPU, for both tables alike),
# so unpinned one-client figures say more about where the scheduler put the two processes
# than about either table.
#
# Installs what it needs (pgbench), builds the extension from a copy of the tree and installs it
# (WC_DESTDIR=DIR for a private installation, see scripts/lib.sh), starts a throw-away cluster,
# and writes bench/results/ycsb-latest.txt: per workload and client count the tps of both tables
# and their ratio, the geometric mean of the ratios, load times and bytes on disk, whether the
# goals of issue 15 are met, then the raw runs and the plans.  See BENCHMARKS.md.

set -eo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$(dirname "$0")/lib.sh"

RECORDS=100000
SECONDS_PER_RUN=5
REPS=3
CLIENTS=1,8
WORKLOADS=a,b,c,f,d,e
CEILING=1
BENCH_PIN=1
HOLD=
HOLD_SLEEP=
ARGS="$*"
while [ $# -gt 0 ]; do
    case $1 in
        --records)   RECORDS=$2; shift 2 ;;
        --seconds)   SECONDS_PER_RUN=$2; shift 2 ;;
        --reps)      REPS=$2; shift 2 ;;
        --clients)   CLIENTS=$2; shift 2 ;;
        --workloads) WORKLOADS=$2; shift 2 ;;
        --no-ceiling) CEILING=; shift ;;
        --no-pin) BENCH_PIN=; shift ;;
        --hold) HOLD=1; shift ;;
        -h|--help) sed -n '2,38p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) wc_die "unknown option $1 (try --help)" ;;
    esac
done
[[ "$RECORDS" =~ ^[0-9]+$ ]] && [ "$RECORDS" -ge 1000 ] && [ "$RECORDS" -le 100000000 ] ||
    wc_die "--records must be between 1000 and 100000000"
[[ "$SECONDS_PER_RUN" =~ ^[0-9]+$ ]] && [ "$SECONDS_PER_RUN" -ge 1 ] || wc_die "--seconds must be a positive integer"
[[ "$REPS" =~ ^[0-9]+$ ]] && [ "$REPS" -ge 1 ] || wc_die "--reps must be a positive integer"
IFS=, read -r -a CLIENT_LIST <<<"$CLIENTS"
for c in "${CLIENT_LIST[@]}"; do [[ "$c" =~ ^[0-9]+$ ]] && [ "$c" -ge 1 ] || wc_die "bad client count '$c'"; done
IFS=, read -r -a WORKLOAD_LIST <<<"$WORKLOADS"
for w in "${WORKLOAD_LIST[@]}"; do [[ "$w" =~ ^[a-f]$ ]] || wc_die "bad workload '$w' (a-f)"; done

BENCH=$WC_ROOT/bench
OUT=$BENCH/results
mkdir -p "$OUT"
T0=$(date +%s)
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)

wc_need_packages "${WC_BUILD_PACKAGES[@]}" postgresql-client-$WC_PGVERSION
PGBENCH=$WC_PGBIN/pgbench
bench_build ycsb

# The server of bench/run.sh: the ordinary table (about 1.2 KB a record) fits in shared_buffers,
# and widecol's 136 MB of decompressed blocks in its block cache; no checkpoint during a load;
# fsync and synchronous_commit on (every write commit waits for its flushes).
WC_EXTRA_CONF="shared_buffers = '1GB'
widecol_fdw.block_cache_size = '512MB'
max_wal_size = '8GB'
checkpoint_timeout = '30min'
maintenance_work_mem = '512MB'
work_mem = '64MB'"
wc_cluster_start || wc_die "could not start a cluster"
wc_say "cluster in $WC_CLUSTER_DIR (port $PGPORT)"
WORK=$WC_CLUSTER_DIR/ycsb
wc_as_cluster_user mkdir "$WORK" 2>/dev/null || mkdir -p "$WORK"
chmod 777 "$WORK"

sql() { wc_psql "$@"; }
# timed_ms SQL: runs SQL (any statements) in one session with \timing; the sum of their times in ms
timed_ms() {
    { echo '\timing on'; printf '%s\n' "$1"; } | "$WC_PGBIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 |
        awk '/^Time: / { s += $2 } END { printf "%.1f\n", s }'
}
NOTES=$(mktemp /tmp/widecol-ycsb-notes.XXXXXX)
wc_on_exit "rm -f '$NOTES' '$BUILDLOG'"
note() { printf '%s\n' "$*" >>"$NOTES"; }

# --- schema and data ---------------------------------------------------------------------------
#
# heap: the table of YCSB's JDBC binding (its CREATE TABLE: YCSB_KEY VARCHAR PRIMARY KEY,
# FIELD0 .. FIELD9 TEXT).  wc: a wide table of the same shape, one family, each field a cell;
# max_versions 1 (HBase's default for a column family, and what YCSB's HBase set-up uses: an
# update replaces the value, as in the ordinary table).
#
# Keys: record number k (0-based) -> 'user' || 10 digits of (k * 2654435761) mod 2^32, a
# bijective multiplicative hash: YCSB's default insertorder=hashed (its keys are 'user' ||
# FNV-64 of k), so records inserted one after the other land all over the key space, and the
# zipfian's popular records (small k) are scattered (YCSB's "scrambled" zipfian).
# Values: 100 random characters of 64 symbols (base64 of 75 random bytes), as YCSB's
# RandomByteIterator makes them: nearly incompressible, for both tables.
cols() {   # cols PREFIX: the ten field names as a list
    local i s=
    for i in 0 1 2 3 4 5 6 7 8 9; do s+="${s:+, }$1field$i"; done
    echo "$s"
}
HEAP_COLS=; WC_COLS=
for i in 0 1 2 3 4 5 6 7 8 9; do HEAP_COLS+=", field$i text"; WC_COLS+=", field$i text OPTIONS (cell 'f:field$i')"; done
sql <<EOF
CREATE EXTENSION widecol_fdw;
CREATE SERVER wide FOREIGN DATA WRAPPER widecol_fdw;
CREATE FUNCTION ycsb_key(bigint) RETURNS varchar IMMUTABLE PARALLEL SAFE LANGUAGE sql
    AS \$\$ SELECT 'user' || lpad(((\$1 * 2654435761) % 4294967296)::text, 10, '0') \$\$;
CREATE FUNCTION ycsb_value() RETURNS text VOLATILE LANGUAGE sql AS \$\$
    SELECT translate(encode(substr(decode(md5(random()::text) || md5(random()::text) || md5(random()::text)
                                          || md5(random()::text) || md5(random()::text), 'hex'), 1, 75), 'base64'), E'\n', '')
\$\$;
CREATE TABLE usertable (ycsb_key varchar PRIMARY KEY$HEAP_COLS);
CREATE FOREIGN TABLE usertable_wc (rowkey varchar$WC_COLS) SERVER wide OPTIONS (families 'f', max_versions '1');
CREATE SEQUENCE seq_heap;
CREATE SEQUENCE seq_wc;
CREATE SEQUENCE seq_none;
EOF

wc_say "generating $RECORDS records (10 fields of 100 bytes)"
sql -c "CREATE TABLE ycsb_src AS SELECT ycsb_key(k) AS ycsb_key$(for i in 0 1 2 3 4 5 6 7 8 9; do printf ', ycsb_value() AS field%d' $i; done) FROM generate_series(0, $RECORDS - 1) k ORDER BY k" >/dev/null
sql -c "VACUUM ANALYZE ycsb_src"
[ "$(sql -c "SELECT count(DISTINCT ycsb_key) FROM ycsb_src")" = "$RECORDS" ] || wc_die "duplicate keys in the generated records"

TABLE_heap=usertable; KEY_heap=ycsb_key; SEQ_heap=seq_heap
TABLE_wc=usertable_wc; KEY_wc=rowkey; SEQ_wc=seq_wc
SEQ_none=seq_none
TABLES=(heap wc)
[ -n "$CEILING" ] && TABLES+=(none)
tab() { local v="TABLE_$1"; echo "${!v}"; }
key() { local v="KEY_$1"; echo "${!v}"; }
seqname() { local v="SEQ_$1"; echo "${!v}"; }
tname() { case $1 in heap) echo ordinary ;; wc) echo widecol ;; none) echo "no table" ;; esac; }

# --- load ----------------------------------------------------------------------------------------
#
# INSERT INTO t SELECT * FROM ycsb_src (a heap table with the records, in record order, that is
# in random key order) into an empty table, REPS times, the tables alternating.  The ordinary
# table has its primary key during the load; widecol's time includes widecol_flush after it.
# Emptying the table (TRUNCATE, and for widecol a compaction) and a CHECKPOINT are not timed.
empty_table() {
    if [ "$1" = heap ]; then
        sql -c "TRUNCATE usertable" -c "CHECKPOINT" >/dev/null
    else
        sql -c "TRUNCATE usertable_wc" -c "SELECT widecol_compact('usertable_wc')" -c "CHECKPOINT" >/dev/null
    fi
}
load_one() {
    empty_table "$1"
    if [ "$1" = heap ]; then
        timed_ms "INSERT INTO usertable SELECT * FROM ycsb_src;"
    else
        timed_ms "INSERT INTO usertable_wc SELECT * FROM ycsb_src; SELECT widecol_flush('usertable_wc');"
    fi
}
check_so
wc_say "load: INSERT ... SELECT of $RECORDS records ($REPS runs per table)"
hs=(); ws=()
for ((r = 1; r <= REPS; r++)); do
    if [ $((r % 2)) -eq 1 ]; then h=$(load_one heap); w=$(load_one wc); else w=$(load_one wc); h=$(load_one heap); fi
    echo "    run $r: ordinary $h ms, widecol $w ms"
    hs+=("$h"); ws+=("$w")
done
LOAD_HEAP=$(awk -v x="$(median "${hs[@]}")" 'BEGIN { printf "%.2f", x / 1000 }')
LOAD_WC=$(awk -v x="$(median "${ws[@]}")" 'BEGIN { printf "%.2f", x / 1000 }')
note "load runs (ms): ordinary ${hs[*]}; widecol ${ws[*]}"

# Ready as an operator would leave them after a bulk load: VACUUM ANALYZE the heap, a major
# compaction + ANALYZE of the store (not timed).  Then both tables must hold the same records.
sql -c "VACUUM ANALYZE usertable" -c "CHECKPOINT" >/dev/null
COMPACT_MS=$(timed_ms "SELECT widecol_compact('usertable_wc');")
sql -c "ANALYZE usertable_wc" >/dev/null
note "widecol_compact after the load: $COMPACT_MS ms (not part of the load time)"
# (the sums also read both tables once: a warm-up of the buffer cache and the page cache)
checksum() { sql -F ' ' -c "SELECT count(*), sum(hashtext($2 || $(cols "" | sed 's/, / || /g'))::bigint) FROM $1"; }
ch=$(checksum usertable ycsb_key)
cw=$(checksum usertable_wc rowkey)
[ "$ch" = "$cw" ] || wc_die "the tables differ after the load: ordinary '$ch', widecol '$cw'"
note "after the load both tables hold the same records: count, sum of hashes = $ch"

STOREDIR=$(sql -c "SELECT format('%s/base/%s/widecol_%s', current_setting('data_directory'),
                          (SELECT oid FROM pg_database WHERE datname = current_database()),
                          'usertable_wc'::regclass::oid)")
bytes_heap() { sql -c "SELECT pg_total_relation_size('usertable')"; }
bytes_wc() { du -sb "$STOREDIR" | awk '{ print $1 }'; }
mb() { awk -v x="$1" 'BEGIN { printf "%.1f", x / 1048576 }'; }
BYTES_HEAP=$(bytes_heap); BYTES_WC=$(bytes_wc)
read -r HEAP_T HEAP_I < <(sql -F ' ' -c "SELECT pg_relation_size('usertable'), pg_indexes_size('usertable')")
read -r WC_SST WC_RAW WC_FILES < <(sql -F ' ' -c "SELECT sum(bytes_on_disk), sum(bytes_raw), count(*) FROM widecol_stats('usertable_wc')")
RAWBYTES=$(sql -c "SELECT sum(length(ycsb_key) + 1000) FROM ycsb_src")
note "bytes after the load: ordinary $BYTES_HEAP = heap $HEAP_T + primary key $HEAP_I + rest (fsm, vm, toast)"
note "                      widecol  $BYTES_WC (du -sb of the store) = $WC_FILES sorted files of $WC_SST bytes ($WC_RAW before lz4) + log, MANIFEST"
note "                      keys + values: $RAWBYTES bytes"

# --- the workloads -----------------------------------------------------------------------------
#
# One pgbench script per workload and table, the same statements for both but for the table's,
# its key column's and its sequence's names.  Each script execution is one YCSB operation
# (pgbench's tps = YCSB's ops/s).  The key: zipfian over the records (pgbench's
# random_zipfian, s = 1.01; YCSB's zipfian constant is 0.99, pgbench 15 accepts only s > 1),
# record 0 the most popular; :n is the newest record number the client knows, given with -D at
# the start of each run (the table's sequence) and moved on by the client's own inserts.
#   read   SELECT * FROM t WHERE key = ycsb_key(:k)                    (readallfields)
#   update UPDATE t SET field<random 0-9> = ycsb_value() WHERE key = ... (one field, 100 bytes)
#   insert SELECT nextval(seq) \gset; INSERT INTO t VALUES (ycsb_key(:n), 10 x ycsb_value())
#   scan   SELECT * FROM t WHERE key >= ycsb_key(:k) ORDER BY key LIMIT random(1, 100)
#   rmw    read, then update of the same record (two statements, autocommit, as YCSB's JDBC
#          binding does by default)
#   D's reads: "latest": record :n + 1 - zipfian(1, :n + 1): the newest record the most popular.
# The ceiling's script ("none"): the same script with no table.  A read returns a row of the
# ordinary table's shape, a key and ten constant 100-character fields; an update writes the
# key and its new value (ycsb_value(), as the update computes it) to the WAL as a
# transactional logical message, so that its commit waits for the flush as an update's does;
# an insert the same with the record's ten values; a scan returns :len rows of constants.
gen_script() {   # gen_script WORKLOAD TABLE(heap|wc|none) > file
    local w=$1 t k s i
    t=$(tab "$2"); k=$(key "$2"); s=$(seqname "$2")
    local read="SELECT * FROM $t WHERE $k = ycsb_key(:k);"
    local scan="SELECT * FROM $t WHERE $k >= ycsb_key(:k) ORDER BY $k LIMIT :len;"
    local values=
    for i in 0 1 2 3 4 5 6 7 8 9; do values+=", ycsb_value()"; done
    local insert="SELECT nextval('$s') AS n \\gset
INSERT INTO $t VALUES (ycsb_key(:n)$values);"
    local update="\\set f random(0, 9)"
    for i in 0 1 2 3 4 5 6 7 8 9; do
        update+=$'\n'"$([ $i -eq 0 ] && echo '\if' || echo '\elif') :f = $i"$'\n'"UPDATE $t SET field$i = ycsb_value() WHERE $k = ycsb_key(:k);"
    done
    update+=$'\n\\endif'
    if [ "$2" = none ]; then
        local consts=
        for i in 0 1 2 3 4 5 6 7 8 9; do consts+=", '$CONST_FIELD'::text AS field$i"; done
        read="SELECT ycsb_key(:k) AS ycsb_key$consts;"
        scan="SELECT ycsb_key(:k + g) AS ycsb_key$consts FROM generate_series(1, :len) g;"
        insert="SELECT nextval('$s') AS n \\gset
SELECT pg_logical_emit_message(true, 'ycsb', concat(ycsb_key(:n)$values));"
        update="SELECT pg_logical_emit_message(true, 'ycsb', ycsb_key(:k) || ycsb_value());"
    fi
    echo "-- YCSB workload ${w^^} on $t (bench/ycsb.sh)"
    echo '\set r random(1, 100)'
    case $w in
        a|b|c|f|e) echo '\set k random_zipfian(1, :n + 1, 1.01) - 1' ;;
        d) echo '\set k :n + 1 - random_zipfian(1, :n + 1, 1.01)' ;;
    esac
    case $w in
        a) printf '\\if :r <= 50\n%s\n\\else\n%s\n\\endif\n' "$read" "$update" ;;
        b) printf '\\if :r <= 95\n%s\n\\else\n%s\n\\endif\n' "$read" "$update" ;;
        c) printf '%s\n' "$read" ;;
        d) printf '\\if :r <= 95\n%s\n\\else\n%s\n\\endif\n' "$read" "$insert" ;;
        e) printf '\\if :r <= 95\n\\set len random(1, 100)\n%s\n\\else\n%s\n\\endif\n' "$scan" "$insert" ;;
        f) printf '\\if :r <= 50\n%s\n\\else\n%s\n%s\n\\endif\n' "$read" "$read" "$update" ;;
    esac
}
declare -A WNAME=([a]="A: 50% read, 50% update" [b]="B: 95% read, 5% update" [c]="C: 100% read"
                  [d]="D: 95% read latest, 5% insert" [e]="E: 95% scan (1-100), 5% insert"
                  [f]="F: 50% read, 50% read-modify-write")
CONST_FIELD=$(sql -c "SELECT field0 FROM ycsb_src LIMIT 1")
for w in a b c d e f; do
    for t in heap wc none; do gen_script "$w" "$t" >"$WORK/$w-$t.sql"; done
done

# newest(TABLE): the newest record number of the table: its sequence, or the last loaded record.
newest() {
    sql -c "SELECT CASE WHEN is_called THEN last_value ELSE $RECORDS - 1 END FROM $(seqname "$1")"
}
sql -c "SELECT setval('seq_heap', $RECORDS, false), setval('seq_wc', $RECORDS, false), setval('seq_none', $RECORDS, false)" >/dev/null

if [ -n "$HOLD" ]; then
    # The held cluster: the scripts are WORKLOAD-TABLE.sql (TABLE heap, wc or none), each run
    # with -D n=<newest record> (the table's sequence).  Ctrl-C stops the cluster.
    cat >"$WORK/env" <<HOLDENV
export PGHOST='$PGHOST' PGPORT='$PGPORT' PGUSER='$PGUSER' PGDATABASE='$PGDATABASE'
export PATH='$WC_PGBIN':\$PATH WORK='$WORK' PGDATA='$WC_PGDATA' STOREDIR='$STOREDIR'
# e.g.: pgbench -n -M prepared -c 8 -j 8 -T 5 -D n=$RECORDS -f \$WORK/b-wc.sql
HOLDENV
    chmod 644 "$WORK/env"
    wc_say "holding the cluster: . $WORK/env (Ctrl-C or kill $$ stops it)"
    cat "$WORK/env"
    # the wait, not the sleep, in the foreground: a TERM to this script runs its trap at once
    wc_on_exit '[ -z "$HOLD_SLEEP" ] || kill "$HOLD_SLEEP"'
    while :; do
        sleep 3600 &
        HOLD_SLEEP=$!
        wait "$HOLD_SLEEP" || true
    done
fi

# tps WORKLOAD TABLE CLIENTS SECONDS: one pgbench run; then a CHECKPOINT and widecol_flush (not
# timed) so that every run starts with the writes of the runs before it put away.
tps() {
    local log=$WORK/pgbench.log n
    n=$(newest "$2")
    if ! bench_pgbench "$3" -n -M prepared -c "$3" -j "$3" -T "$4" -D n="$n" -f "$WORK/$1-$2.sql" >"$log" 2>&1; then
        tail -n 20 "$log" >&2
        grep -E 'ERROR|FATAL|PANIC|WARNING' "$WC_CLUSTER_DIR/server.log" | tail -n 20 >&2
        wc_die "pgbench, workload $1 on $2, $3 client(s), failed (its output and the server's errors are above)"
    fi
    sql -c "CHECKPOINT" -c "SELECT widecol_flush('usertable_wc')" >/dev/null
    awk '/^tps = / { printf "%.0f\n", $3 }' "$log"
}

RESULTS=()     # workload|clients|ordinary tps|widecol tps|no-table tps (empty without the ceiling)
WARMUP=$(( SECONDS_PER_RUN < 2 ? SECONDS_PER_RUN : 2 ))
declare -A TPS
for w in "${WORKLOAD_LIST[@]}"; do
    first=1
    for c in "${CLIENT_LIST[@]}"; do
        check_so
        wc_say "workload ${WNAME[$w]}, $c client(s): $REPS x ${SECONDS_PER_RUN}s per table"
        if [ -n "$first" ]; then   # a warm-up run of each table, once per workload
            for t in "${TABLES[@]}"; do tps "$w" "$t" "$c" "$WARMUP" >/dev/null; done
            first=
        fi
        TPS=([heap]= [wc]= [none]=)
        for ((r = 1; r <= REPS; r++)); do
            # the tables in turn, each run starting with the next one: ordinary, widecol, no
            # table; then widecol, no table, ordinary; ...
            line="    run $r:"
            for ((i = 0; i < ${#TABLES[@]}; i++)); do
                t=${TABLES[$(( (r - 1 + i) % ${#TABLES[@]} ))]}
                TPS[$t]+=" $(tps "$w" "$t" "$c" "$SECONDS_PER_RUN")"
            done
            for t in "${TABLES[@]}"; do line+=" $(tname "$t") ${TPS[$t]##* } tps,"; done
            echo "${line%,}"
        done
        note "workload ${w^^}, $c client(s), runs (tps): ordinary${TPS[heap]}; widecol${TPS[wc]}${CEILING:+; no table${TPS[none]}}"
        z=
        [ -n "$CEILING" ] && z=$(median ${TPS[none]})
        RESULTS+=("$w|$c|$(median ${TPS[heap]})|$(median ${TPS[wc]})|$z")
    done
done

# --- after the workloads: bytes, plans ---------------------------------------------------------

check_so
sql -c "CHECKPOINT" -c "SELECT widecol_flush('usertable_wc')" >/dev/null
BYTES_HEAP_END=$(bytes_heap); BYTES_WC_END=$(bytes_wc)
NROWS_HEAP=$(sql -c "SELECT count(*) FROM usertable"); NROWS_WC=$(sql -c "SELECT count(*) FROM usertable_wc")
note "after the workloads (no VACUUM, no compaction): ordinary $NROWS_HEAP records, $BYTES_HEAP_END bytes; widecol $NROWS_WC records, $BYTES_WC_END bytes, $(sql -c "SELECT count(*) FROM widecol_stats('usertable_wc')") sorted files"
explain() { note ""; note "$1"; sql -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $1" | sed 's/^/    /' >>"$NOTES"; }
explain "SELECT * FROM usertable WHERE ycsb_key = ycsb_key(17)"
explain "SELECT * FROM usertable_wc WHERE rowkey = ycsb_key(17)"
explain "SELECT * FROM usertable WHERE ycsb_key >= ycsb_key(17) ORDER BY ycsb_key LIMIT 50"
explain "SELECT * FROM usertable_wc WHERE rowkey >= ycsb_key(17) ORDER BY rowkey LIMIT 50"
note ""
note "widecol_stats('usertable_wc') at the end:"
sql -F ' | ' -c "SELECT file, family, level, cells, bytes_on_disk, bytes_raw FROM widecol_stats('usertable_wc') ORDER BY file" |
    sed 's/^/    /' >>"$NOTES"
note ""
note "the pgbench scripts (workload A, and D/E's insert):"
sed 's/^/    /' "$WORK/a-wc.sql" >>"$NOTES"
sed -n '/nextval/,/INSERT/p' "$WORK/d-wc.sql" | sed 's/^/    /' >>"$NOTES"
if [ -n "$CEILING" ]; then
    note "with no table (the ceiling; workload A, and D/E's insert):"
    sed 's/^/    /' "$WORK/a-none.sql" >>"$NOTES"
    sed -n '/nextval/,/emit_message/p' "$WORK/d-none.sql" | sed 's/^/    /' >>"$NOTES"
fi

# --- the table --------------------------------------------------------------------------------------

ELAPSED=$(( $(date +%s) - T0 ))
PGVER=$(sql -c "SHOW server_version")
{
    echo "widecol_fdw YCSB benchmark -- $(date -u '+%Y-%m-%d %H:%M UTC'), commit $BENCH_COMMIT"
    echo "machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), $(free -g | awk '/^Mem:/ { print $2 }') GiB RAM, Linux $(uname -r), PostgreSQL $PGVER"
    echo "load average at the start: $LOAD_START; at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "command: bash bench/ycsb.sh --records $RECORDS --seconds $SECONDS_PER_RUN --reps $REPS --clients $CLIENTS --workloads $WORKLOADS$([ -n "$CEILING" ] || echo " --no-ceiling")$([ -n "$BENCH_PIN" ] || echo " --no-pin")  (run time ${ELAPSED}s)"
    echo "data: $RECORDS records, 10 fields x 100 random characters; keys 'user' + 10 digits, hashed insert order"
    echo "ordinary = usertable (ycsb_key varchar PRIMARY KEY, field0..field9 text), YCSB's JDBC binding table"
    echo "server: shared_buffers = 1GB (the ordinary table's cache), widecol_fdw.block_cache_size = 512MB (widecol's)"
    echo "widecol  = usertable_wc (rowkey varchar, fieldN text OPTIONS (cell 'f:fieldN')), families 'f', max_versions '1'"
    echo "both: pgbench -n -M prepared -c C -j C -T $SECONDS_PER_RUN, the same scripts, zipfian keys (random_zipfian s=1.01);"
    [ -n "$BENCH_PIN" ] && echo "      one client: pgbench and its backend on CPU 0 (taskset; --no-pin: where the scheduler puts them)"
    echo "      each tps the median of $REPS runs, tables alternating; fsync and synchronous_commit on; ratio = widecol / ordinary"
    [ -n "$CEILING" ] && echo "no table = the same scripts with no table behind them (a row of constants for a read, the written bytes as a WAL
      message for an update or insert, generate_series for a scan): what a storage costing nothing reaches;
      ceiling = no table / ordinary, the most any table could gain over the ordinary one here"
    echo
    printf '%-40s %8s %12s %12s %7s  %-12s' workload clients "ordinary" "widecol" ratio "met (>= 1.0)"
    [ -n "$CEILING" ] && printf ' %12s %8s' "no table" ceiling
    echo
    printf '%-40s %8s %12s %12s %7s  %-12s' -------- ------- -------- ------- ----- ------------
    [ -n "$CEILING" ] && printf ' %12s %8s' -------- -------
    echo
    for r in "${RESULTS[@]}"; do
        IFS='|' read -r w c h x z <<<"$r"
        awk -v l="${WNAME[$w]}" -v c="$c" -v h="$h" -v x="$x" -v z="$z" 'BEGIN {
            ratio = (h > 0) ? x / h : 0
            printf "%-40s %8d %12.0f %12.0f %6.2fx  %-12s", l, c, h, x, ratio, (ratio >= 1.0) ? "yes" : "NO"
            if (z != "") printf " %12.0f %7.2fx", z, (h > 0) ? z / h : 0
            printf "\n" }'
    done
    echo
    ALLMET=yes
    for c in "${CLIENT_LIST[@]}"; do
        line=$(printf '%s\n' "${RESULTS[@]}" | awk -F'|' -v c="$c" '
            $2 == c { n++; s += log($4 / $3); if ($4 < $3) below++; if ($5 != "") { nz++; sz += log($5 / $3) } }
            END { g = exp(s / n); printf "%.2f %d %d %s", g, n, below + 0, nz ? sprintf("%.2f", exp(sz / nz)) : "-" }')
        read -r g n below gz <<<"$line"
        gm=$(awk -v g="$g" 'BEGIN { print (g >= 1.2) ? "yes" : "NO" }')
        ev=$([ "$below" -eq 0 ] && echo yes || echo NO)
        [ "$gm" = yes ] && [ "$ev" = yes ] || ALLMET=NO
        printf '%-40s %8d %33s %6.2fx  %-12s' "geometric mean of the $n ratios" "$c" "" "$g" "$gm (>= 1.2)"
        [ "$gz" != - ] && printf ' %12s %7.2fx' "" "$gz"
        echo
        printf '%-40s %8d %33s %7s  %s\n' "every workload >= 1.0x" "$c" "" "" "$ev ($below below)"
    done
    if [ "${#WORKLOAD_LIST[@]}" -lt 6 ]; then
        echo "(not all six workloads ran: the goals of issue 15 are judged on all six)"
        ALLMET=NO
    fi
    echo
    printf '%-40s %8s %12s %12s %7s  %s\n' "" "" ordinary widecol ratio "(lower is better; no goal)"
    printf '%-40s %8s %12s %12s %6.2fx\n' "load, INSERT ... SELECT (s)" "" "$LOAD_HEAP" "$LOAD_WC" \
        "$(awk -v a="$LOAD_WC" -v b="$LOAD_HEAP" 'BEGIN { print a / b }')"
    printf '%-40s %8s %12s %12s %6.2fx\n' "bytes on disk after the load (MB)" "" "$(mb "$BYTES_HEAP")" "$(mb "$BYTES_WC")" \
        "$(awk -v a="$BYTES_WC" -v b="$BYTES_HEAP" 'BEGIN { print a / b }')"
    printf '%-40s %8s %12s %12s %6.2fx\n' "bytes on disk after the workloads (MB)" "" "$(mb "$BYTES_HEAP_END")" "$(mb "$BYTES_WC_END")" \
        "$(awk -v a="$BYTES_WC_END" -v b="$BYTES_HEAP_END" 'BEGIN { print a / b }')"
    echo
    echo "goal of issue 15 (>= 1.0x on every workload and >= 1.2x geometric mean, every client count): $([ "$ALLMET" = yes ] && echo met || echo NOT met)"
    echo
    echo "notes, runs and plans:"
    sed 's/^/  /' "$NOTES"
} | tee "$OUT/ycsb-latest.txt"
wc_say "wrote $OUT/ycsb-latest.txt (run time ${ELAPSED}s)"
