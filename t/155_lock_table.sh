#!/usr/bin/env bash
# t/155_lock_table.sh -- row locks of widecol tables live in PostgreSQL's shared lock table (an
# ordinary table's live in its rows); what happens when that table is full.  A small one here:
# max_locks_per_transaction = 10, max_connections = 20.
#
# 1. widecol_fdw.max_row_locks = -1 (no escalation by count): an UPDATE of 20,000 rows of a tall
#    and of a wide table, alone, fills the lock table and then locks all rows of the table at
#    once (the lock table's room is given back at commit): every row updated.
# 2. The same UPDATE while another transaction holds row locks in the table: it cannot lock
#    all rows at once, and fails with 53200 (out of shared memory) naming the table, with a
#    hint; nothing of it stays; once the other commits, it runs whole.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"

WC_EXTRA_CONF="max_locks_per_transaction = 10
max_connections = 20" t_cluster_with_fdw
wc_psql -c "CREATE FOREIGN TABLE t (rowkey text COLLATE \"C\", family text, qualifier text, ts bigint, value text)
              SERVER wide OPTIONS (families 'f')" \
        -c "CREATE FOREIGN TABLE w (rowkey text COLLATE \"C\", a text OPTIONS (cell 'f:a')) SERVER wide OPTIONS (families 'f')" \
        -c "INSERT INTO t SELECT 'r' || i, 'f', 'q', 1, 'v' FROM generate_series(1, 20000) i" \
        -c "INSERT INTO w SELECT 'r' || i, 'v' FROM generate_series(1, 20000) i" >/dev/null ||
    t_bail "the tables"

# --- 1. alone
for tbl in t:value w:a; do
    name=${tbl%%:*} col=${tbl#*:}
    t_is "$(wc_psql -c "SET widecol_fdw.max_row_locks = -1" -c "UPDATE $name SET $col = 'one' RETURNING 1" 2>&1 | grep -c '^1$')" \
        20000 "1. $name: an UPDATE of 20,000 rows that fills the lock table locks all rows at once and updates each"
    t_is "$(wc_psql -c "SELECT count(*) FROM $name WHERE $col = 'one'")" 20000 "1. $name: every row reads updated"
done
t_is "$(wc_psql -c "SELECT count(*) FROM pg_locks WHERE locktype IN ('tuple', 'page')")" 0 \
    "1. no row lock is left after the commits"

# --- 2. with another transaction's row locks in the table
for tbl in t:value w:a; do
    name=${tbl%%:*} col=${tbl#*:}
    wc_psql -c "BEGIN" -c "UPDATE $name SET $col = 'other' WHERE rowkey IN ('r1', 'r2')" \
            -c "SELECT pg_sleep(6)" -c "COMMIT" >/dev/null 2>&1 &
    holder=$!
    for _ in $(seq 1 50); do
        [ "$(wc_psql -c "SELECT count(*) FROM pg_locks WHERE locktype = 'tuple'")" -ge 2 ] && break
        sleep 0.1
    done
    out=$(wc_psql -v VERBOSITY=verbose -c "SET widecol_fdw.max_row_locks = -1" \
                  -c "UPDATE $name SET $col = 'two' WHERE rowkey NOT IN ('r1', 'r2')" 2>&1)
    t_ok "2. $name: the UPDATE fails with 53200 (out of shared memory)" grep -q '^ERROR:  53200: out of shared memory' <<<"$out" ||
        printf '%s\n' "$out" | head -n 5 | sed 's/^/#   /'
    t_ok "2. $name: its detail names the table, its hint max_locks_per_transaction" \
        eval "grep -q 'widecol table \"$name\"' <<<\"\$out\" && grep -q '^HINT: .*max_locks_per_transaction' <<<\"\$out\""
    t_is "$(wc_psql -c "SELECT count(*) FROM $name WHERE $col = 'two'")" 0 "2. $name: nothing of it stays"
    wait "$holder"
    t_is "$(wc_psql -c "SET widecol_fdw.max_row_locks = -1" -c "UPDATE $name SET $col = 'two' WHERE rowkey NOT IN ('r1', 'r2') RETURNING 1" 2>&1 | grep -c '^1$')" \
        19998 "2. $name: once the other transaction committed, it updates every row"
    t_is "$(wc_psql -F ' ' -c "SELECT count(*) FILTER (WHERE $col = 'two'), count(*) FILTER (WHERE $col = 'other') FROM $name")" \
        "19998 2" "2. $name: the other transaction's rows and its own"
done
t_done
