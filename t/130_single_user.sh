#!/usr/bin/env bash
# t/130_single_user.sh -- widecol tables in single-user mode (postgres --single: what a DBA runs
# to VACUUM a database out of wraparound, or to repair a catalog), with the library preloaded.
#
# A single-user backend makes the shared memory itself and detaches it before the callbacks of
# the process's exit run; closing its stores there wrote to memory no longer mapped (a
# segmentation fault at the end of every single-user session that had opened a widecol table).
#
# 1. A tall and a wide table, each with flushed cells and cells only in its log; the server
#    stopped.  A single-user session reads both (files and log), INSERTs, UPDATEs and DELETEs in
#    both, flushes the tall one, runs VACUUM, and leaves a transaction open at its end: it ends
#    with exit status 0, its reads give what was written, its writes read back in the session.
# 2. The server started again: it shows the committed writes of the single-user session, not
#    the one left open.
# 3. kill -9 of the server after more writes (unflushed); a single-user session then runs the
#    crash recovery itself (the WAL's widecol records redone) and reads every committed row;
#    the server started after it shows the same.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"

t_cluster_with_fdw
wc_psql -c "CREATE FOREIGN TABLE t (rowkey text COLLATE \"C\", family text COLLATE \"C\",
                                    qualifier text COLLATE \"C\", ts bigint, value text)
            SERVER wide OPTIONS (families 'f')" \
        -c "CREATE FOREIGN TABLE w (rowkey text COLLATE \"C\", a int OPTIONS (cell 'f:a'),
                                    b text OPTIONS (cell 'f:b')) SERVER wide OPTIONS (families 'f')" \
        -c "INSERT INTO t SELECT 'r' || i, 'f', 'q', 1, 'v' || i FROM generate_series(1, 100) i" \
        -c "INSERT INTO w SELECT 'k' || i, i, 'b' || i FROM generate_series(1, 100) i" \
        -c "SELECT widecol_flush('t'), widecol_flush('w')" \
        -c "INSERT INTO t SELECT 'r' || i, 'f', 'q', 1, 'v' || i FROM generate_series(101, 150) i" \
        -c "INSERT INTO w SELECT 'k' || i, i, 'b' || i FROM generate_series(101, 150) i" >/dev/null ||
    t_bail "the tables"
SUM_T="SELECT count(*) || ' ' || sum(substr(value, 2)::int) AS x FROM t"
SUM_W="SELECT count(*) || ' ' || sum(a) || ' ' || count(b) AS x FROM w"

# single SQL...: runs each SQL (one statement a line) in a single-user backend; $single_rc is
# its exit status, $single_out the values of its one-column results named x, one a line
single() {
    local out
    out=$(printf '%s\n' "$@" | wc_as_cluster_user "$WC_PGBIN/postgres" --single -D "$WC_PGDATA" postgres 2>&1)
    single_rc=$?
    printf '%s\n' "$out" | grep -E '(ERROR|FATAL|PANIC):|terminated|fault' | sed 's/^/# /'
    single_out=$(printf '%s\n' "$out" | sed -nE 's/^[[:space:]]*1: x = "(.*)"[[:space:]]*\(typeid.*$/\1/p')
}

# --- 1. a single-user session
wc_as_cluster_user "$WC_PGBIN/pg_ctl" -D "$WC_PGDATA" -m fast -w stop >/dev/null || t_bail "the server stops"
single "$SUM_T" "$SUM_W" \
    "INSERT INTO t VALUES ('s1', 'f', 'q', 1, 'v1000')" \
    "INSERT INTO w VALUES ('s1', 1000, 'single')" \
    "UPDATE w SET a = a + 1 WHERE rowkey = 'k150'" \
    "DELETE FROM t WHERE rowkey = 'r150'" \
    "DELETE FROM w WHERE rowkey = 'k1'" \
    "SELECT widecol_flush('t')" \
    "VACUUM" \
    "$SUM_T" "$SUM_W" \
    "SELECT a || ' ' || b AS x FROM w WHERE rowkey = 's1'" \
    "BEGIN" \
    "INSERT INTO t VALUES ('open', 'f', 'q', 1, 'v5000')" \
    "INSERT INTO w VALUES ('open', 5000, 'open')"
t_is "$single_rc" 0 "1. a single-user session that read and wrote widecol tables ends with exit status 0"
t_is "$(tr '\n' '|' <<<"$single_out")" "150 11325|150 11325 150|150 12175|150 12325 150|1000 single|" \
    "1. it reads both tables (files and log), and its INSERT, UPDATE, DELETE and flush read back"

# --- 2. the server again
wc_cluster_restart || t_bail "the server starts after the single-user session"
t_is "$(wc_psql -c "$SUM_T")" "150 12175" "2. the server shows the tall table's committed single-user writes"
t_is "$(wc_psql -c "$SUM_W")" "150 12325 150" "2. and the wide table's"
t_is "$(wc_psql -c "SELECT count(*) FROM t WHERE rowkey = 'open'")|$(wc_psql -c "SELECT count(*) FROM w WHERE rowkey = 'open'")" \
    "0|0" "2. not the writes of the transaction left open at the session's end"

# --- 3. crash recovery made by a single-user backend
wc_psql -c "INSERT INTO t SELECT 'c' || i, 'f', 'q', 1, 'v' || i FROM generate_series(1, 40) i" \
        -c "UPDATE w SET b = 'crash' WHERE rowkey = 'k2'" \
        -c "BEGIN" -c "INSERT INTO w VALUES ('rolled', 1, 'back')" -c "ROLLBACK" >/dev/null ||
    t_bail "writes before the crash"
wc_cluster_kill9 || t_bail "kill -9 of the server"
single "$SUM_T" "$SUM_W" "SELECT b AS x FROM w WHERE rowkey = 'k2'"
t_is "$single_rc" 0 "3. a single-user session after kill -9 (it recovers the cluster itself) ends with exit status 0"
t_is "$(tr '\n' '|' <<<"$single_out")" "190 12995|150 12325 150|crash|" \
    "3. it reads every write committed before the crash, none rolled back"
wc_cluster_restart || t_bail "the server starts after it"
t_is "$(wc_psql -c "$SUM_T")|$(wc_psql -c "$SUM_W")" "190 12995|150 12325 150" "3. the server shows the same"
t_done
