#!/usr/bin/env bash
# t/145_replaced_version.sh -- READ COMMITTED writers of a cell version that a concurrent UPDATE
# replaced by one of another timestamp (HBase's increment as SQL: SET value = value + 1,
# ts = ts + 1) fail with 40001 instead of skipping it, so no update is lost.
#
# An ordinary table's UPDATE follows its row to the version that replaced it (EvalPlanQual); a
# store's version has no link to its successor.  Before, the waiting statement found its version
# gone and skipped it: UPDATE 0, DELETE 0, no error, and concurrent increments lost updates.
# Checked, with session A holding the version (an UPDATE in an open transaction) while session
# B's statement waits for it, then A commits:
#   1. A changes ts: B's UPDATE (ordinary path) fails with 40001; B's DELETE by rowkey (the
#      direct delete) too; B's SELECT ... FOR UPDATE too; the table holds A's version.
#   2. A keeps ts (SET value = value + 1): B waits and goes on from A's committed value, as on
#      an ordinary table (no error).
#   3. A deletes the version: B's UPDATE skips it (UPDATE 0), as on an ordinary table.
#   4. Three sessions each incrementing with a ts change 30 times, retrying on 40001: the final
#      value is 90.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"

t_cluster_with_fdw
wc_psql -c "CREATE FOREIGN TABLE inc (rowkey text COLLATE \"C\", family text COLLATE \"C\",
                                      qualifier text COLLATE \"C\", ts bigint, value int)
            SERVER wide OPTIONS (families 'f', max_versions '1')" >/dev/null || t_bail "the table"
work=$(mktemp -d /tmp/widecol-replaced.XXXXXX)
chmod 755 "$work"
wc_on_exit "rm -rf '$work'"

# race A B: A's statement in an open transaction; B's statement started meanwhile (it waits),
# then A commits; prints B's output (errors with their SQLSTATE)
race() {
    local a=$1 b=$2
    wc_psql -c "TRUNCATE inc" -c "INSERT INTO inc VALUES ('b', 'f', 'n', 1, 0)" >/dev/null
    { echo "BEGIN;"; echo "$a;"; echo "\\! while [ ! -e '$work/commit' ]; do sleep 0.05; done"
      echo "COMMIT;"; } | wc_psql >/dev/null 2>&1 &
    local holder=$!
    sleep 0.5
    wc_psql -v VERBOSITY=terse -c "SET application_name = 'b'" -c "$b" >"$work/b.out" 2>&1 &
    local waiter=$!
    for ((i = 0; i < 100; i++)); do
        [ "$(wc_psql -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'b' AND wait_event_type = 'Lock'")" = 1 ] && break
        sleep 0.05
    done
    touch "$work/commit"
    wait "$holder" "$waiter"
    rm -f "$work/commit"
    tr '\n' ' ' <"$work/b.out" | sed 's/ $//'
}
TABLE() { wc_psql -c "SELECT string_agg(rowkey || ' ' || ts || ' ' || value, ',') FROM inc"; }

# --- 1. the version's ts replaced
INCTS="UPDATE inc SET value = value + 1, ts = ts + 1 WHERE rowkey = 'b'"
out=$(race "$INCTS" "$INCTS")
t_ok "1. UPDATE waiting for a version whose ts a concurrent UPDATE changed: 40001" \
    grep -q "^ERROR:  40001\|ERROR:  cell version to be locked was already replaced" <<<"$out" ||
    t_diag "B: $out"
t_is "$(TABLE)" "b 2 1" "1. the table holds A's version only"
out=$(race "$INCTS" "DELETE FROM inc WHERE rowkey = 'b'")
t_ok "1. the direct DELETE by rowkey waiting for it: 40001" grep -q "already replaced" <<<"$out" ||
    t_diag "B: $out"
t_is "$(TABLE)" "b 2 1" "1. A's version is still there"
out=$(race "$INCTS" "SELECT value FROM inc WHERE rowkey = 'b' FOR UPDATE")
t_ok "1. SELECT ... FOR UPDATE waiting for it: 40001" grep -q "already replaced" <<<"$out" ||
    t_diag "B: $out"

# --- 2. the same ts: followed, as on an ordinary table
INC="UPDATE inc SET value = value + 1 WHERE rowkey = 'b'"
t_is "$(race "$INC" "$INC RETURNING value")" "2" "2. an increment keeping ts waits and goes on from A's value"
t_is "$(TABLE)" "b 1 2" "2. both increments are there"

# --- 3. deleted: skipped, as on an ordinary table
t_is "$(race "DELETE FROM inc WHERE value = 0" "$INC RETURNING value")" "" \
    "3. an UPDATE waiting for a version a concurrent DELETE removed skips it (no row, no error)"
t_is "$(TABLE)" "" "3. the table is empty"

# --- 4. concurrent increments with a ts change, retried on 40001: none lost
wc_psql -c "TRUNCATE inc" -c "INSERT INTO inc VALUES ('b', 'f', 'n', 1, 0)" >/dev/null
cat >"$work/inc.sql" <<'SQL'
UPDATE inc SET value = value + 1, ts = ts + 1 WHERE rowkey = 'b';
SQL
"$WC_PGBIN/pgbench" -n -c 3 -j 3 -t 30 --max-tries 1000 -f "$work/inc.sql" >"$work/pgbench.out" 2>&1
t_is "$(sed -nE 's/^number of transactions actually processed: ([0-9]+).*/\1/p' "$work/pgbench.out")" 90 \
    "4. 3 x 30 increments with a ts change ran (40001 retried by pgbench)"
t_is "$(wc_psql -c "SELECT value FROM inc")" 90 "4. none lost: the value is 90"
t_done
