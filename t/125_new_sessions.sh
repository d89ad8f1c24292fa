#!/usr/bin/env bash
# t/125_new_sessions.sh -- sessions that open a wide table while others write it see what an
# ordinary table with the same rows shows, whatever its unflushed log holds.
#
# A wide table (acct_wc: rowkey, bal bigint OPTIONS (cell 'f:bal')) and an ordinary one (acct:
# k PRIMARY KEY, bal bigint) hold the same 200 accounts of 1,000, and 200 of 0 (in the wide
# table a bulk write: sorted files that a closed log not flushed yet names).  Writers (pgbench,
# 4 clients, sessions kept) move an amount from one random account to another in both tables in
# one transaction, and one transaction in ten rolls back (its records in the wide table's log
# are aborted ones).  Readers (pgbench -C: a new session for every transaction, 2 clients) take a
# REPEATABLE READ snapshot reading the ordinary table, wait 5 ms while transfers commit, then
# compare the two tables: every account's balance the same in both, the wide table's sum
# 200,000; a difference divides by zero, which fails the reader's transaction.  A new session
# opening the wide table takes what its log's shared index says of the records others indexed
# instead of reading them (engine/DESIGN.md, "Shared memtables", "Not read at all"), and must
# still not see the transfers that committed after its snapshot.  Two phases:
#  a. as is: the horizon (the oldest snapshot's xmin) follows the writers closely, and new
#     sessions take the summary;
#  b. with a session holding a REPEATABLE READ snapshot open meanwhile: the horizon stays
#     behind, more records are remembered than the summary keeps, and new sessions read the
#     whole log as before; at the end that session opens the wide table for the first time and
#     compares it with the ordinary one under its old snapshot (thousands of transfers unseen).
# Checked, each phase: every writer and reader transaction ran, 0 failed; the log was not
# flushed meanwhile (its writes are what new sessions read); after, both tables hold the same
# balances (also after a flush).  1,500 transactions per writer and 300 per reader; 3,000 and
# 1,500 with WIDECOL_LONG=1.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"

PGBENCH=$WC_PGBIN/pgbench
[ -x "$PGBENCH" ] || t_skip_all "$PGBENCH not found (postgresql-client-15)"
t_cluster_with_fdw
nwrite=1500; nread=300
t_long && { nwrite=3000; nread=1500; }
work=$(mktemp -d /tmp/widecol-sessions.XXXXXX)
chmod 755 "$work"
wc_on_exit "rm -rf '$work'"
pids=()
wc_on_exit 'kill ${pids[*]:-} 2>/dev/null'

wc_psql -c "CREATE TABLE acct (k text COLLATE \"C\" PRIMARY KEY, bal bigint NOT NULL)" \
        -c "CREATE FOREIGN TABLE acct_wc (rowkey text COLLATE \"C\", bal bigint OPTIONS (cell 'f:bal'))
            SERVER wide OPTIONS (families 'f')" \
        -c "INSERT INTO acct SELECT 'a' || lpad(i::text, 4, '0'), 1000 FROM generate_series(1, 200) i" \
        -c "INSERT INTO acct_wc SELECT k, bal FROM acct" -c "SELECT widecol_flush('acct_wc')" >/dev/null ||
    t_bail "the tables"
# 200 more accounts of 0, in the wide table as a bulk write: sorted files named by a record of
# a log that is closed and not flushed yet (new sessions open those files themselves)
wc_psql -c "INSERT INTO acct SELECT 'z' || lpad(i::text, 4, '0'), 0 FROM generate_series(1, 200) i" \
        -c "SET widecol_fdw.bulk_write_size = 0" \
        -c "INSERT INTO acct_wc SELECT 'z' || lpad(i::text, 4, '0'), 0 FROM generate_series(1, 200) i" >/dev/null ||
    t_bail "a bulk write"

cat >"$work/write.sql" <<'SQL'
\set a random(1, 200)
\set b random(1, 200)
\set lo least(:a, :b)
\set hi greatest(:a, :b)
\set amt random(1, 50)
\set r random(1, 10)
BEGIN;
UPDATE acct SET bal = bal - :amt WHERE k = 'a' || lpad(:lo::text, 4, '0');
UPDATE acct SET bal = bal + :amt WHERE k = 'a' || lpad(:hi::text, 4, '0');
UPDATE acct_wc SET bal = bal - :amt WHERE rowkey = 'a' || lpad(:lo::text, 4, '0');
UPDATE acct_wc SET bal = bal + :amt WHERE rowkey = 'a' || lpad(:hi::text, 4, '0');
\if :r = 1
ROLLBACK;
\else
COMMIT;
\endif
SQL
# the snapshot is taken before the session opens the wide table, and transfers commit in between:
# the session must know them as committed after its snapshot (those the summary keeps)
cat >"$work/read.sql" <<'SQL'
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT 1 / (sum(bal) = 200000)::int FROM acct;
SELECT pg_sleep(0.005);
SELECT 1 / (count(*) FILTER (WHERE a.bal IS DISTINCT FROM w.bal) = 0 AND sum(w.bal) = 200000)::int
  FROM acct a FULL JOIN acct_wc w ON w.rowkey = a.k;
COMMIT;
SQL

# checked WHAT OUT RC WANT: pgbench's output OUT (exit status RC) says WANT transactions ran, 0 failed
checked() {
    local what=$1 out=$2 rc=$3 want=$4 processed failedtx
    processed=$(sed -nE 's/^number of transactions actually processed: ([0-9]+).*/\1/p' "$out")
    failedtx=$(sed -nE 's/^number of failed transactions: ([0-9]+).*/\1/p' "$out")
    t_diag "$what: $(grep -oE 'tps = [0-9.]+' "$out" | head -n 1)"
    t_ok "$what: every transaction ran (${processed:-?} of $want), 0 failed (${failedtx:-?}), exit status $rc" \
        test "$rc" = 0 -a "${processed:-0}" = "$want" -a "${failedtx:-x}" = 0 ||
        { grep -v '^pgbench: client [0-9]* executing' "${out%.out}.err" | head -n 5 | sed 's/^/#   /'; }
}
files() { wc_psql -c "SELECT string_agg(file, ',' ORDER BY file) FROM widecol_stats('acct_wc')"; }
same() {
    t_is "$(wc_psql -c "SELECT count(*) FILTER (WHERE a.bal IS DISTINCT FROM w.bal) || ' ' || sum(w.bal)
                          FROM acct a FULL JOIN acct_wc w ON w.rowkey = a.k")" "0 200000" "$1"
}

for phase in a b; do
    holder=
    if [ $phase = b ]; then
        # a snapshot older than every write of this phase, held until the writers are done; then
        # the same session opens the wide table for the first time and compares
        cat >"$work/holder.sql" <<SQL
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT sum(bal) FROM acct;
\\! while [ ! -e '$work/go' ]; do sleep 0.1; done
SELECT count(*) FILTER (WHERE a.bal IS DISTINCT FROM w.bal) || ' ' || sum(w.bal)
  FROM acct a FULL JOIN acct_wc w ON w.rowkey = a.k;
COMMIT;
SQL
        PGAPPNAME=holder "$WC_PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -f "$work/holder.sql" \
            >"$work/holder.out" 2>&1 &
        holder=$!
        pids+=("$holder")
        for ((i = 0; i < 50; i++)); do
            [ "$(wc_psql -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'holder'
                              AND backend_xmin IS NOT NULL")" = 1 ] && break
            sleep 0.1
        done
    fi
    what="phase $phase ($([ $phase = a ] && echo "new sessions take the log's summary" || echo "an old snapshot held: new sessions read the log"))"
    before=$(files)
    "$PGBENCH" -n -c 4 -j 2 -t "$nwrite" -f "$work/write.sql" >"$work/write-$phase.out" 2>"$work/write-$phase.err" &
    writers=$!
    pids+=("$writers")
    sleep 1
    "$PGBENCH" -n -C -c 2 -j 2 -t "$nread" -f "$work/read.sql" >"$work/read-$phase.out" 2>"$work/read-$phase.err"
    rrc=$?
    wait "$writers"
    wrc=$?
    checked "$what: the writers" "$work/write-$phase.out" $wrc $((4 * nwrite))
    checked "$what: new sessions comparing the tables under one snapshot" "$work/read-$phase.out" $rrc $((2 * nread))
    after=$(files)
    t_is "$after" "$before" "$what: the wide table's log was not flushed meanwhile (its sorted files the same)"
    if [ -n "$holder" ]; then
        touch "$work/go"
        wait "$holder"
        t_is "$(tr '\n' ' ' <"$work/holder.out")" "200000 0 200000 " \
            "$what: the session holding the old snapshot then opens the wide table and reads what the ordinary table shows it (the writes of the phase unseen)"
    fi
    same "$what: after, both tables hold the same balances"
done
wc_psql -c "SELECT widecol_flush('acct_wc')" >/dev/null
same "after a flush too"

t_done
