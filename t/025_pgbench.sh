#!/usr/bin/env bash
# t/025_pgbench.sh -- pgbench clients write and read back their own rows; two sessions update
# one row at once.
#
# 1. pgbench, 8 clients, each transaction inserting a 3-cell row under a random key and
#    reading it back, inside the transaction (its own uncommitted writes) and after COMMIT
#    (a read that does not find exactly the 3 cells divides by zero, which fails the
#    transaction), while another session flushes and compacts in a loop.  Checked: pgbench
#    reports every transaction processed and 0 failed, and the table then holds exactly
#    3 cells per transaction, also after a major compaction.  Run twice: with ordinary
#    commits, then on a second table with every commit a bulk write
#    (widecol_fdw.bulk_write_size = 0: 8 clients writing sorted files at once), a fifth as
#    many transactions.
# 2. Two sessions UPDATE all 3 cells of one row with their own value, over and over, while a
#    third reads the row: every read, and the end state, shows the 3 cells carrying one
#    writer's value of one iteration (a serial outcome), never a mix.
# 3. pgbench's own tpcb-like script, 8 clients, with pgbench_accounts a view over a wide table
#    with an integer rowkey (`rowkey AS aid`), while another session flushes and compacts:
#    once with pgbench's built-in script (100,000 accounts), once with the same statements on
#    20 hot accounts (the row locks of concurrent UPDATEs of one account).  Checked: every
#    transaction processed, 0 failed, and pgbench's invariant, the accounts' balances summing
#    to the tellers', the branches' and the history's deltas.
# 500 transactions per pgbench client and 300 updates per writer; 3000 and 1000 with
# WIDECOL_LONG=1.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"

PGBENCH=$WC_PGBIN/pgbench
[ -x "$PGBENCH" ] || t_skip_all "$PGBENCH not found (postgresql-client-15)"
t_cluster_with_fdw
ntx=500; nupd=300
t_long && { ntx=3000; nupd=1000; }
work=$(mktemp -d /tmp/widecol-pgbench.XXXXXX)
chmod 755 "$work"
wc_on_exit "rm -rf '$work'"
pids=()
wc_on_exit 'kill ${pids[*]:-}'

wc_psql -c "CREATE FOREIGN TABLE pb (rowkey text, family text, qualifier text, ts bigint, value text)
            SERVER wide OPTIONS (families 'a,b')" \
        -c "CREATE FOREIGN TABLE pbk (rowkey text, family text, qualifier text, ts bigint, value text)
            SERVER wide OPTIONS (families 'a,b')" \
        -c "CREATE FOREIGN TABLE u (rowkey text, family text, qualifier text, ts bigint, value text)
            SERVER wide OPTIONS (families 'f')" \
        -c "INSERT INTO u SELECT 'r', 'f', 'c' || i, 1, 'init' FROM generate_series(1, 3) i" ||
    t_bail "the tables"

# --- 1. pgbench
# maint_start TABLE: another session flushes and compacts TABLE in a loop (pid in $maint, its
# errors in $work/maint-TABLE.err); maint_stop ends it
maint_start() {
    (for ((i = 0; i < 100000; i++)); do
        echo "SELECT widecol_flush('$1'); SELECT widecol_compact('$1'); SELECT pg_sleep(0.3);"
     done) | PGAPPNAME=maint "$WC_PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -f - >/dev/null 2>"$work/maint-$1.err" &
    maint=$!
    pids+=($maint)
}
maint_stop() { kill "$maint" 2>/dev/null; wait "$maint" 2>/dev/null; }
# pgbench_checked WHAT NAME PGBENCH-ARG...: runs pgbench (output in $work/pgbench-NAME.*), then
# checks that it ran all of its 8 x $ntx transactions and none failed, and that the flushes and
# compactions of maint_start (table NAME) beside it raised no error
pgbench_checked() {
    local what=$1 name=$2 rc processed failedtx t0
    shift 2
    maint_start "$name"
    t0=$(date +%s)
    "$PGBENCH" -n -c 8 -j 2 -t "$ntx" "$@" >"$work/pgbench-$name.out" 2>"$work/pgbench-$name.err"
    rc=$?
    maint_stop
    processed=$(sed -nE 's/^number of transactions actually processed: ([0-9]+).*/\1/p' "$work/pgbench-$name.out")
    failedtx=$(sed -nE 's/^number of failed transactions: ([0-9]+).*/\1/p' "$work/pgbench-$name.out")
    t_diag "pgbench ($what): $(tr '\n' ';' <"$work/pgbench-$name.out" | grep -oE 'number of transactions actually processed[^;]*;number of failed[^;]*|tps = [0-9.]+' | tr '\n' ' ') ($(( $(date +%s) - t0 )) s)"
    t_ok "pgbench ($what) ran every transaction ($processed of $((8 * ntx))) with 0 failed (${failedtx:-?}), exit status $rc" \
        test "$rc" = 0 -a "${processed:-0}" = $((8 * ntx)) -a "${failedtx:-x}" = 0 ||
        { grep -v '^pgbench: client [0-9]* executing' "$work/pgbench-$name.err" | head -n 5 | sed 's/^/#   /'; }
    t_ok "flush and compaction ran beside pgbench ($what) without error" test ! -s "$work/maint-$name.err" ||
        head -n 5 "$work/maint-$name.err" | sed 's/^/#   /'
}
# run_pgbench TABLE TRANSACTIONS-PER-CLIENT WHAT [PGOPTIONS]
run_pgbench() {
    local t=$1 what=$3 ntx=$2
    sed "s/ pb / $t /g" >"$work/insert-read-$t.sql" <<'SQL'
\set k random(1, 1000000000000)
BEGIN;
INSERT INTO pb VALUES ('c:client_id-:k', 'a', 'x', 1, 'v:k'), ('c:client_id-:k', 'a', 'y', 1, 'w:k'), ('c:client_id-:k', 'b', 'z', 2, 'u:k');
SELECT 1 / (count(*) = 3 AND bool_and(value LIKE '_:k'))::int FROM pb WHERE rowkey = 'c:client_id-:k';
COMMIT;
SELECT 1 / (count(*) = 3 AND bool_and(value LIKE '_:k'))::int FROM pb WHERE rowkey = 'c:client_id-:k';
SQL
    PGOPTIONS="${4:-}" pgbench_checked "$what" "$t" -f "$work/insert-read-$t.sql"
    t_is "$(wc_psql -F ' ' -c "SELECT count(*), count(DISTINCT rowkey) FROM $t")" "$((24 * ntx)) $((8 * ntx))" \
        "the table holds exactly 3 cells for each of the $((8 * ntx)) transactions ($what)"
    wc_psql -c "SELECT widecol_compact('$t')" >/dev/null
    t_is "$(wc_psql -c "SELECT count(*) FROM $t")" "$((24 * ntx))" "... also after a major compaction ($what)"
}
run_pgbench pb "$ntx" "ordinary commits"
# a bulk write of 3 cells costs about ten fsyncs (the threshold keeps them for large writes)
run_pgbench pbk $((ntx / 5)) "every commit a bulk write" "-c widecol_fdw.bulk_write_size=0"
# the second run's commits were bulk writes: its files came from them, not from flushes
t_ok "the bulk-write run made sorted files at commit (widecol_stats lists files)" \
    test "$(wc_psql -c "SELECT count(*) > 0 FROM widecol_stats('pbk')")" = t

# --- 2. two sessions update the same row
for s in A B; do
    awk -v s="$s" -v n="$nupd" 'BEGIN { for (i = 1; i <= n; i++)
        printf "BEGIN;\nUPDATE u SET value = %c%s-%d%c WHERE rowkey = %cr%c;\nCOMMIT;\n", 39, s, i, 39, 39, 39 }' |
        PGAPPNAME=upd$s "$WC_PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -f - >/dev/null 2>"$work/upd$s.err" &
    pids+=($!)
    upd+=($!)
done
reads=0; mixed=0; example=
while kill -0 "${upd[@]}" 2>/dev/null; do
    got=$(wc_psql -F ' ' -c "SELECT count(*), count(DISTINCT value), min(value) FROM u WHERE rowkey = 'r'") || break
    reads=$((reads + 1))
    [ "${got% *}" = "3 1" ] || { mixed=$((mixed + 1)); example="$got; $(wc_psql -c "SELECT string_agg(qualifier || '=' || value, ' ') FROM u")"; }
done
ufail=0
for p in "${upd[@]}"; do wait "$p" || ufail=$((ufail + 1)); done
t_is "$ufail" 0 "both updating sessions finish without error" || cat "$work"/upd*.err | head -n 5 | sed 's/^/#   /'
t_ok "every read of the row showed its 3 cells with one writer's value ($reads reads, $mixed mixed${example:+: $example})" \
    test "$mixed" = 0 -a "$reads" -gt 0
final=$(wc_psql -F ' ' -c "SELECT count(*), count(DISTINCT value), bool_and(value ~ '^[AB]-$nupd\$') FROM u WHERE rowkey = 'r'")
t_is "$final" "3 1 t" "in the end the 3 cells carry the last value of one writer ($(wc_psql -c "SELECT min(value) FROM u"))"

# --- 3. pgbench's tpcb-like on an integer-keyed wide table
"$PGBENCH" -i -q -s 1 >"$work/init.out" 2>&1 || { cat "$work/init.out"; t_bail "pgbench -i"; }
wc_psql <<'SQL' >/dev/null || t_bail "the wide accounts"
CREATE FOREIGN TABLE accounts_wc (rowkey int, bid int OPTIONS (cell 'a:bid'), abalance int OPTIONS (cell 'a:abalance'),
    filler char(84) OPTIONS (cell 'a:filler')) SERVER wide OPTIONS (families 'a');
INSERT INTO accounts_wc SELECT aid, bid, abalance, filler FROM pgbench_accounts;
DROP TABLE pgbench_accounts;
CREATE VIEW pgbench_accounts AS SELECT rowkey AS aid, bid, abalance, filler FROM accounts_wc;
SQL
cat >"$work/hot.sql" <<'SQL'
\set aid random(1, 20)
\set bid 1
\set tid random(1, 10)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
SQL
# tpcb WHAT RUN-NUMBER PGBENCH-ARG...
tpcb() {
    local what=$1 n=$2
    shift 2
    pgbench_checked "$what, wide accounts" accounts_wc "$@"
    t_is "$(wc_psql -F ' ' -c "SELECT (SELECT sum(abalance) FROM pgbench_accounts) = s AND (SELECT sum(tbalance) FROM pgbench_tellers) = s
                                      AND (SELECT sum(bbalance) FROM pgbench_branches) = s, (SELECT count(*) FROM pgbench_history)
                                 FROM (SELECT sum(delta) AS s FROM pgbench_history) h")" "t $(( 8 * ntx * n ))" \
        "after pgbench ($what) the accounts' balances sum to the tellers', the branches' and the history's"
}
tpcb "tpcb-like, 100,000 accounts" 1 -b tpcb-like
tpcb "tpcb-like, 20 hot accounts" 2 -f "$work/hot.sql"

t_done
