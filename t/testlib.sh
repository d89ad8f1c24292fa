# t/testlib.sh -- what the t/ tests share: TAP output and a cluster with widecol_fdw.
#
#   t_ok DESC CMD...        ok if CMD succeeds
#   t_is GOT WANT DESC      ok if the two strings are equal (shows both if not)
#   t_skip_all WHY          the whole test cannot run here: "1..0 # SKIP WHY", exit 0
#   t_done                  "1..N", exits 1 if any check failed
#   t_cluster_with_fdw      a throw-away cluster (scripts/lib.sh) with CREATE EXTENSION and
#                           CREATE SERVER wide done; bails out (a failure) if that fails
#   t_long                  true in the longer soak mode (WIDECOL_LONG=1, scripts/test.sh --long)
#   t_twin_*                a widecol table and an ordinary table written in the same
#                           transactions by a concurrent load, and compared row by row (below)
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

T_N=0
T_FAILED=0

t_ok() {
    local desc=$1; shift
    T_N=$((T_N + 1))
    if "$@"; then
        echo "ok $T_N - $desc"
    else
        echo "not ok $T_N - $desc"
        T_FAILED=$((T_FAILED + 1))
        return 1
    fi
}

t_is() {
    local got=$1 want=$2 desc=$3
    T_N=$((T_N + 1))
    if [ "$got" = "$want" ]; then
        echo "ok $T_N - $desc"
    else
        echo "not ok $T_N - $desc"
        printf '#   got:  %s\n' "$got" | head -n 20
        printf '#   want: %s\n' "$want" | head -n 20
        T_FAILED=$((T_FAILED + 1))
        return 1
    fi
}

t_diag() { printf '# %s\n' "$*"; }

t_skip_all() {
    echo "1..0 # SKIP $*"
    exit 0
}

# Ends the test at once with a failure: for a set-up that did not work.
t_bail() {
    T_N=$((T_N + 1))
    echo "not ok $T_N - $*"
    [ -n "$WC_CLUSTER_DIR" ] && [ -f "$WC_CLUSTER_DIR/server.log" ] &&
        { t_diag "the end of the server log:"; tail -n 10 "$WC_CLUSTER_DIR/server.log" | sed 's/^/#   /'; }
    local n
    for n in "${WC_NODES[@]}"; do
        [ -f "$WC_CLUSTER_DIR/node-$n/server.log" ] &&
            { t_diag "the end of the server log of '$n':"; tail -n 10 "$WC_CLUSTER_DIR/node-$n/server.log" | sed 's/^/#   /'; }
    done
    echo "1..$T_N"
    exit 1
}

t_done() {
    echo "1..$T_N"
    [ "$T_FAILED" -eq 0 ]
    exit
}

t_long() { [ -n "${WIDECOL_LONG:-}" ] && [ "${WIDECOL_LONG}" != 0 ]; }

t_cluster_with_fdw() {
    wc_cluster_start "$@" || t_bail "a throw-away cluster starts"
    local err
    if ! err=$(wc_psql -c "CREATE EXTENSION widecol_fdw" \
                       -c "CREATE SERVER wide FOREIGN DATA WRAPPER widecol_fdw" 2>&1); then
        printf '%s\n' "$err" | sed 's/^/# /'
        t_bail "CREATE EXTENSION widecol_fdw; CREATE SERVER wide FOREIGN DATA WRAPPER widecol_fdw"
    fi
}

# --- twin tables: a widecol table and an ordinary table written in the same transactions --------
#
#   t_twin_create NODE W H     CREATE FOREIGN TABLE W (families 'a,b', max_versions '0': every
#                              version stays visible, so W reads like a table of its rows) and
#                              CREATE TABLE H (an index on rowkey), both with the five columns
#                              of T_TWIN_COLS
#   t_twin_sql W H PREFIX WRITER N [TRUNCATE_AT] [STOPFILE]
#                              the SQL of one writer session: N transactions, each inserting 12
#                              cells (rowkeys PREFIX-WRITER-i) into both tables, UPDATEing values
#                              of an earlier transaction's cells, changing a key (ts) of another,
#                              DELETEing cells of a third, identically in W and H; every 10th
#                              transaction rolls back, every 15th rolls back a savepoint, every
#                              25th is a bulk write (widecol_fdw.bulk_write_size = 0); the
#                              transaction TRUNCATE_AT begins with TRUNCATE W, H; it ends
#                              early (at a transaction's end) once the file STOPFILE exists
#   t_twin_writes NODE W H TAG  30 transactions of t_twin_sql on NODE, then widecol_flush and
#                              widecol_compact of W
#   t_twin_load_start NODE W H PREFIX N [TRUNCATE_AT] [FLUSH_TABLES]
#                              3 writer sessions (t_twin_sql, writer 1 with the TRUNCATE) and a
#                              4th that calls widecol_flush() and widecol_compact() on W (and on
#                              FLUSH_TABLES, a space-separated list) in a loop, in the background
#   t_twin_load_stop           makes the writers end soon (after at most some 70 transactions
#                              each), for a load of a large N that should last until some event
#   t_twin_load_wait WHAT      waits for the writers, stops the maintenance session; checks both
#                              (two assertions)
#   t_twin_compare NODE W H DESC
#                              one assertion: on NODE, W and H hold the same rows (count, and
#                              md5 of every row as text in (rowkey, family, qualifier, ts) order),
#                              and at least one; on failure, how many rows differ and examples
#   t_twin_dump NODE T         every row of T as text, one a line, in that order
T_TWIN_COLS='rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C", ts bigint, value text'
T_TWIN_PIDS=()
T_TWIN_DIR=

t_twin_create() {
    wc_node_psql "$1" -c "CREATE FOREIGN TABLE $2 ($T_TWIN_COLS) SERVER wide OPTIONS (families 'a,b', max_versions '0')" \
                      -c "CREATE TABLE $3 ($T_TWIN_COLS)" -c "CREATE INDEX ON $3 (rowkey)"
}

t_twin_sql() {
    awk -v W="$1" -v H="$2" -v P="$3" -v wr="$4" -v n="$5" -v trunc="${6:-0}" -v stop="${7:-}" '
    function key(i) { return sprintf("%s-%d-%06d", P, wr, i) }
    function both(stmt,  s) { s = stmt; gsub(/@/, W, s); print s; s = stmt; gsub(/@/, H, s); print s }
    BEGIN {
        q = sprintf("%c", 39)
        for (i = 1; i <= n; i++) {
            if (stop != "" && i % 10 == 1 && system("test -e " stop) == 0)
                break
            k = key(i)
            print "BEGIN;"
            if (i % 25 == 13) print "SET LOCAL widecol_fdw.bulk_write_size = 0;"
            if (i == trunc) print "TRUNCATE " W ", " H ";"
            both("INSERT INTO @ SELECT " q k q ", f, " q "q" q " || j, t, md5(" q k q " || f || j || t) || repeat(" q "x" q ", " (i % 7) * 20 ") FROM unnest(" q "{a,b}" q "::text[]) f, generate_series(1, 3) j, generate_series(1, 2) t;")
            if (i % 15 == 4) {
                print "SAVEPOINT s;"
                both("INSERT INTO @ SELECT " q k "-sp" q ", " q "a" q ", " q "q" q ", j, " q "rolled back to a savepoint" q " FROM generate_series(1, 4) j;")
                both("DELETE FROM @ WHERE rowkey = " q k q " AND family = " q "b" q ";")
                print "ROLLBACK TO SAVEPOINT s;"
            }
            if (i > 3) both("UPDATE @ SET value = " q "u" i "-" q " || value WHERE rowkey = " q key(i - 3) q " AND family = " q "a" q " AND qualifier = " q "q1" q ";")
            if (i > 4) both("UPDATE @ SET ts = ts + 10 WHERE rowkey = " q key(i - 4) q " AND family = " q "b" q " AND qualifier = " q "q2" q " AND ts = 2;")
            if (i > 5) both("DELETE FROM @ WHERE rowkey = " q key(i - 5) q " AND qualifier = " q "q3" q ";")
            print (i % 10 == 7 ? "ROLLBACK;" : "COMMIT;")
        }
    }'
}

t_twin_load_start() {
    local node=$1 w=$2 h=$3 prefix=$4 n=$5 trunc=${6:-0} more=${7:-} d p wr t
    d=$(wc_node_dir "$node") && p=$(wc_node_port "$node") || t_bail "no cluster '$node' for the load"
    if [ -z "$T_TWIN_DIR" ]; then
        T_TWIN_DIR=$(mktemp -d /tmp/widecol-twin.XXXXXX) || t_bail "mktemp"
        wc_on_exit "rm -rf '$T_TWIN_DIR'"
        wc_on_exit 'kill ${T_TWIN_PIDS[*]:-}'
    fi
    rm -f "$T_TWIN_DIR"/*
    T_TWIN_PIDS=()
    for wr in 1 2 3; do
        t_twin_sql "$w" "$h" "$prefix" "$wr" "$n" "$([ "$wr" = 1 ] && echo "$trunc" || echo 0)" "$T_TWIN_DIR/stop-writers" |
            PGHOST=$d PGPORT=$p PGAPPNAME=writer$wr "$WC_PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -f - \
                >/dev/null 2>"$T_TWIN_DIR/writer$wr.err" &
        T_TWIN_PIDS+=($!)
    done
    (
        while [ ! -e "$T_TWIN_DIR/stop" ]; do
            for t in "$w" $more; do
                echo "SELECT widecol_flush('$t'); SELECT pg_sleep(0.2); SELECT widecol_compact('$t');"
                echo "\\echo maint"
            done
            sleep 0.3
        done
    ) | PGHOST=$d PGPORT=$p PGAPPNAME=maint "$WC_PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -f - \
            >"$T_TWIN_DIR/maint.out" 2>"$T_TWIN_DIR/maint.err" &
    T_TWIN_MAINT=$!
    T_TWIN_PIDS+=($T_TWIN_MAINT)
    T_TWIN_T0=$(date +%s)
}

t_twin_load_stop() { touch "$T_TWIN_DIR/stop-writers"; }

# t_twin_writers_running: some writer of the load still runs
t_twin_writers_running() { kill -0 "${T_TWIN_PIDS[@]:0:3}" 2>/dev/null; }

t_twin_load_wait() {
    local what=$1 wfail=0 i rounds
    for i in 0 1 2; do wait "${T_TWIN_PIDS[$i]}" || wfail=$((wfail + 1)); done
    touch "$T_TWIN_DIR/stop"
    wait "$T_TWIN_MAINT"
    rounds=$(grep -c '^maint$' "$T_TWIN_DIR/maint.out")
    t_diag "$what: the load took $(( $(date +%s) - T_TWIN_T0 )) s; $rounds flush+compact rounds"
    t_is "$wfail" 0 "$what: the 3 writer sessions finished without error" ||
        cat "$T_TWIN_DIR"/writer*.err | head -n 6 | sed 's/^/#   /'
    t_ok "$what: widecol_flush and widecol_compact ran beside the writers without error ($rounds rounds)" \
        test ! -s "$T_TWIN_DIR/maint.err" -a "$rounds" -gt 0 ||
        head -n 6 "$T_TWIN_DIR/maint.err" | sed 's/^/#   /'
}

t_twin_dump() {
    wc_node_psql "$1" -c "COPY (SELECT rowkey, family, qualifier, ts, value FROM $2
                                ORDER BY rowkey, family, qualifier, ts, value) TO STDOUT"
}

# t_twin_digest NODE T: "N rows, md5 X" of t_twin_dump's text (computed in the server)
t_twin_digest() {
    wc_node_psql "$1" -c "SELECT count(*) || ' rows, md5 ' || coalesce(md5(string_agg(
                              format('%s|%s|%s|%s|%s', rowkey, family, qualifier, ts, value), E'\n'
                              ORDER BY rowkey, family, qualifier, ts, value)), '-') FROM $2"
}

t_twin_equal() {
    local node=$1 w=$2 h=$3 dw dh
    dw=$(t_twin_digest "$node" "$w" 2>&1)
    dh=$(t_twin_digest "$node" "$h" 2>&1)
    if [ "$dw" = "$dh" ] && [ "${dh%% *}" -gt 0 ] 2>/dev/null; then
        return 0
    fi
    printf '%s\n' "$w: $dw" "$h: $dh" | sed 's/^/# /'
    wc_node_psql "$node" -F ' ' -c "
        SELECT 'rows only in $w: ' || (SELECT count(*) FROM (SELECT * FROM $w EXCEPT ALL SELECT * FROM $h) d)
            || ', only in $h: ' || (SELECT count(*) FROM (SELECT * FROM $h EXCEPT ALL SELECT * FROM $w) d)" \
        -c "(SELECT 'only in $w:', * FROM (SELECT * FROM $w EXCEPT ALL SELECT * FROM $h) d ORDER BY 2, 3, 4, 5 LIMIT 3)
            UNION ALL
            (SELECT 'only in $h:', * FROM (SELECT * FROM $h EXCEPT ALL SELECT * FROM $w) d ORDER BY 2, 3, 4, 5 LIMIT 3)" \
        2>&1 | cut -c 1-150 | sed 's/^/#   /'
    return 1
}

# t_twin_writes NODE W H TAG: 30 transactions of the twin load on NODE, then widecol_flush and
# widecol_compact of W (a restored or promoted cluster takes writes and maintains its stores).
t_twin_writes() {
    { t_twin_sql "$2" "$3" "$4" 1 30; echo "SELECT widecol_flush('$2'); SELECT widecol_compact('$2');"; } |
        wc_node_psql "$1" -f - >/dev/null
}

t_twin_compare() {
    local node=$1 w=$2 h=$3 desc=$4 n
    n=$(wc_node_psql "$node" -c "SELECT count(*) FROM $h" 2>/dev/null)
    t_ok "$desc: the widecol table $w holds exactly the rows of the ordinary table $h (${n:-?} rows)" \
        t_twin_equal "$node" "$w" "$h"
}
