#!/usr/bin/env bash
# bench/cluster.sh -- fan-out over data nodes (doc/CLUSTER.md): the same cells read through a
# coordinator (postgres_fdw) from one data node, and from two data nodes holding half each
# (range partitions), with async_capable off and on; side by side in one run.
#
#   bash bench/cluster.sh [--cells N] [--reps R]
#
#   --cells N   cells in the table [1000000]: N/10 rows of 10 cells; the load takes about a
#               minute, the measurements two
#   --reps R    runs of each query per configuration, interleaved; the median is kept [7]
#
# Three throw-away clusters on this machine (scripts/lib.sh): the coordinator and the data nodes
# n1, n2.  n1 holds the first half of the rows (r0) and also all of them (whole); n2 the second
# half (r1).  The coordinator has four partitioned tables: one_sync / one_async (one partition:
# whole on n1) and two_sync / two_async (r0 on n1, r1 on n2), through servers without and with
# async_capable; fetch_size 10000 everywhere.  Queries, each timed by psql's \timing in one
# session (connections already made):
#   count        SELECT count(*) FROM t: every row comes to the coordinator (postgres_fdw
#                cannot push a partial aggregate), the coordinator counts
#   count pushed one count(*) per partition, computed on the node (Remote SQL: SELECT count(*)),
#                summed on the coordinator
#   range 10k    SELECT * of 10,000 cells around the boundary of r0 and r1 (half on each node)
# Writes bench/results/cluster-latest.txt.  See BENCHMARKS.md.

set -eo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$(dirname "$0")/lib.sh"

CELLS=1000000
REPS=7
while [ $# -gt 0 ]; do
    case $1 in
        --cells) CELLS=$2; shift 2 ;;
        --reps)  REPS=$2; shift 2 ;;
        -h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) wc_die "unknown option $1 (try --help)" ;;
    esac
done
NROWS=$((CELLS / 10))
[ "$NROWS" -ge 2000 ] || wc_die "--cells must be at least 20000"
SPLIT=$((NROWS / 2))
OUT=$WC_ROOT/bench/results
mkdir -p "$OUT"
T0=$(date +%s)

wc_need_packages "${WC_BUILD_PACKAGES[@]}"
bench_build cluster
wc_on_exit "rm -f '$BUILDLOG'"

wc_cluster_start || wc_die "could not start the coordinator"
wc_node_create n1 || wc_die "could not start data node n1"
wc_node_create n2 || wc_die "could not start data node n2"
wc_say "coordinator port $PGPORT, n1 port $(wc_node_port n1), n2 port $(wc_node_port n2)"

key() { printf "u%07d" "$1"; }
COLS='rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C", ts bigint, value text'
GEN="SELECT 'u' || lpad(r::text, 7, '0'), 'f', 'c' || c, 1, md5(r || '/' || c)
       FROM generate_series(0, $((NROWS - 1))) r, generate_series(0, 9) c"

# --- data nodes, loaded locally (bulk writes), flushed and compacted
wc_say "loading $CELLS cells into n1 (whole), $((SPLIT * 10)) into n1 (r0), $(((NROWS - SPLIT) * 10)) into n2 (r1)"
for n in n1 n2; do
    wc_node_psql $n -c "CREATE EXTENSION widecol_fdw" -c "CREATE SERVER wide FOREIGN DATA WRAPPER widecol_fdw"
done
wc_node_psql n1 -c "CREATE FOREIGN TABLE whole ($COLS) SERVER wide OPTIONS (families 'f')" \
                -c "CREATE FOREIGN TABLE r0 ($COLS) SERVER wide OPTIONS (families 'f')" \
                -c "INSERT INTO whole $GEN" -c "INSERT INTO r0 $GEN WHERE r < $SPLIT" \
                -c "SELECT widecol_compact('whole'), widecol_compact('r0')" >/dev/null
wc_node_psql n2 -c "CREATE FOREIGN TABLE r1 ($COLS) SERVER wide OPTIONS (families 'f')" \
                -c "INSERT INTO r1 $GEN WHERE r >= $SPLIT" -c "SELECT widecol_compact('r1')" >/dev/null

# --- the coordinator
wc_psql -c "CREATE EXTENSION postgres_fdw"
for n in n1 n2; do
    for mode in sync async; do
        wc_psql -c "CREATE SERVER ${n}_$mode FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '$(wc_node_dir $n)',
                        port '$(wc_node_port $n)', dbname 'postgres', fetch_size '10000',
                        async_capable '$([ $mode = async ] && echo true || echo false)')" \
                -c "CREATE USER MAPPING FOR CURRENT_USER SERVER ${n}_$mode"
    done
done
CO_COLS='rowkey text NOT NULL, family text NOT NULL, qualifier text NOT NULL, ts bigint NOT NULL, value text NOT NULL'
for mode in sync async; do
    wc_psql <<EOF
CREATE TABLE one_$mode ($CO_COLS) PARTITION BY RANGE (rowkey);
CREATE FOREIGN TABLE one_${mode}_p0 PARTITION OF one_$mode FOR VALUES FROM (MINVALUE) TO (MAXVALUE)
    SERVER n1_$mode OPTIONS (table_name 'whole');
CREATE TABLE two_$mode ($CO_COLS) PARTITION BY RANGE (rowkey);
CREATE FOREIGN TABLE two_${mode}_p0 PARTITION OF two_$mode FOR VALUES FROM (MINVALUE) TO ('$(key $SPLIT)')
    SERVER n1_$mode OPTIONS (table_name 'r0');
CREATE FOREIGN TABLE two_${mode}_p1 PARTITION OF two_$mode FOR VALUES FROM ('$(key $SPLIT)') TO (MAXVALUE)
    SERVER n2_$mode OPTIONS (table_name 'r1');
EOF
done

LO=$(key $((SPLIT - 500))); HI=$(key $((SPLIT + 500)))
q_count() { echo "SELECT count(*) FROM $1;"; }
q_pushed() {
    case $1 in
        one_*) echo "SELECT sum(n) FROM (SELECT count(*) FROM ${1}_p0) c(n);" ;;
        two_*) echo "SELECT sum(n) FROM (SELECT count(*) FROM ${1}_p0 UNION ALL SELECT count(*) FROM ${1}_p1) c(n);" ;;
    esac
}
q_range() { echo "SELECT * FROM $1 WHERE rowkey >= '$LO' AND rowkey < '$HI';"; }

# the answers first: every configuration must give the same ones
for t in one_sync one_async two_sync two_async; do
    a=$(wc_psql -c "$(q_count $t)")/$(wc_psql -c "$(q_pushed $t)")/$(wc_psql -c "SELECT count(*), md5(string_agg(value, '' ORDER BY rowkey, qualifier)) FROM ($(q_range $t | tr -d ';')) s")
    echo "    $t: count/pushed count/range (count, md5): $a"
    [ -z "${ANSWER:-}" ] && ANSWER=$a
    [ "$a" = "$ANSWER" ] || wc_die "$t answers $a, not $ANSWER"
done
[ "${ANSWER%%/*}" = "$CELLS" ] || wc_die "the table holds ${ANSWER%%/*} cells, not $CELLS"

PLANS=$(mktemp /tmp/widecol-cluster-plans.XXXXXX)
wc_on_exit "rm -f '$PLANS'"
for q in q_count q_pushed q_range; do
    for t in one_async two_async; do
        { echo "--- $($q $t)"; wc_psql -c "EXPLAIN (VERBOSE, COSTS OFF) $($q $t)"; } >>"$PLANS"
    done
done

# timed_ms SQL...: the statements in one session (psql \timing, output discarded), one time each
timed_ms() {
    { echo '\o /dev/null'; echo '\timing on'; printf '%s\n' "$@"; } |
        "$WC_PGBIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 2>&1 | awk '/^Time: / { print $2 }'
}
median() {
    printf '%s\n' "$@" | sort -g |
        awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

declare -A T=()
check_so
wc_say "timing: $REPS rounds, each query once per configuration per round"
for ((i = 1; i <= REPS; i++)); do
    for t in one_sync one_async two_sync two_async; do
        # one session per configuration and round; its first query (connections, catalogs) untimed
        mapfile -t ms < <(timed_ms "SELECT 1 FROM $t LIMIT 1;" "$(q_count $t)" "$(q_pushed $t)" "$(q_range $t)")
        [ ${#ms[@]} -eq 4 ] || wc_die "timing $t failed"
        T[$t,count]+=" ${ms[1]}"; T[$t,pushed]+=" ${ms[2]}"; T[$t,range]+=" ${ms[3]}"
    done
    echo "    round $i done"
done

{
    echo "bench/cluster.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $BENCH_COMMIT, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "$CELLS cells ($NROWS rows of 10 cells, values of 32 bytes); two nodes: half each, split at $(key $SPLIT)"
    echo "three PostgreSQL clusters on this machine; each figure: the median of $REPS runs, ms (lower is better)"
    echo
    printf '%-40s %10s %10s %10s %10s\n' "query" "1 node" "1 node" "2 nodes" "2 nodes"
    printf '%-40s %10s %10s %10s %10s\n' "" "sync" "async" "sync" "async"
    for q in count pushed range; do
        case $q in
            count)  label="count(*), rows to the coordinator" ;;
            pushed) label="count(*) computed on the nodes" ;;
            range)  label="SELECT * of a 10,000-cell range" ;;
        esac
        printf '%-40s' "$label"
        for t in one_sync one_async two_sync two_async; do
            # shellcheck disable=SC2086
            printf ' %10.1f' "$(median ${T[$t,$q]})"
        done
        echo
    done
    echo
    echo "plans (async_capable on):"
    cat "$PLANS"
} | tee "$OUT/cluster-latest.txt"
wc_say "done in $(( $(date +%s) - T0 )) s; results in bench/results/cluster-latest.txt"
