#!/usr/bin/env bash
# t/115_tall_wide.sh -- a tall and a wide table over one store, incremented at once.
#
# Three sessions increment a counter cell through a wide table (UPDATE w SET n = n + 1), three
# through a tall table showing the same store (UPDATE t SET value = value + 1 of the cell's
# version), each statement its own transaction, while a seventh flushes and compacts.  The
# family keeps one version, so a tall UPDATE whose version a wide one replaced meanwhile finds
# it gone and changes nothing (as an ordinary UPDATE of a row deleted meanwhile).  Checked:
# nothing is lost -- the counter ends at the number of rows the UPDATEs reported -- which needs
# the two tables' row locks to conflict (specs/iso_tall_wide.spec has the schedules one by one);
# and no statement failed.
# 6 x 150 increments; 6 x 600 with WIDECOL_LONG=1.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"

t_cluster_with_fdw
wc_psql -c "CREATE FOREIGN TABLE w (rowkey text COLLATE \"C\", n text OPTIONS (cell 'f:n'))
            SERVER wide OPTIONS (families 'f', max_versions '1')" \
        -c "CREATE FOREIGN TABLE t (rowkey text COLLATE \"C\", family text COLLATE \"C\",
                qualifier text COLLATE \"C\", ts bigint, value text)
            SERVER wide OPTIONS (store 'w')" \
        -c "INSERT INTO w VALUES ('a', '0')" >/dev/null || t_bail "the tables"

n=150
t_long && n=600
work=$(mktemp -d /tmp/widecol-tallwide.XXXXXX)
wc_on_exit "rm -rf '$work'"
pids=()
wc_on_exit 'kill ${pids[*]:-} 2>/dev/null'

# incrementer NAME STATEMENT: n transactions of STATEMENT; prints the rows they changed
incrementer() {
    PGAPPNAME=$1 "$WC_PGBIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -c "
DO \$\$
DECLARE c int; total int := 0;
BEGIN
  FOR i IN 1..$n LOOP
    $2;
    GET DIAGNOSTICS c = ROW_COUNT;
    total := total + c;
    COMMIT;
  END LOOP;
  RAISE NOTICE 'changed %', total;
END \$\$" >"$work/$1.out" 2>"$work/$1.err"
}

for s in 1 2 3; do
    incrementer "wide$s" "UPDATE w SET n = (n::int + 1)::text WHERE rowkey = 'a'" &
    pids+=($!)
    incrementer "tall$s" "UPDATE t SET value = (value::int + 1)::text
                          WHERE rowkey = 'a' AND family = 'f' AND qualifier = 'n'" &
    pids+=($!)
done
writers=("${pids[@]}")
(for ((i = 0; i < 1000; i++)); do
    echo "SELECT widecol_flush('w'); SELECT widecol_compact('w'); SELECT pg_sleep(0.2);"
 done) | PGAPPNAME=maint "$WC_PGBIN/psql" -X -q -At -f - >/dev/null 2>"$work/maint.err" &
maint=$!
pids+=($maint)

fail=0
for p in "${writers[@]}"; do wait "$p" || fail=$((fail + 1)); done
kill "$maint" 2>/dev/null; wait "$maint" 2>/dev/null
t_is "$fail" 0 "all six sessions finish without error"
[ "$fail" = 0 ] || cat "$work"/*.err | grep -v NOTICE | head -n 10 | sed 's/^/#   /'

changed() { sed -n 's/.*NOTICE:  changed \([0-9]*\).*/\1/p' "$work/$1.err"; }
wide=0 tall=0
for s in 1 2 3; do
    wide=$((wide + $(changed "wide$s"))) tall=$((tall + $(changed "tall$s")))
done
t_diag "wide increments $wide, tall increments $tall (of $((3 * n)) tall statements)"
t_is "$wide" "$((3 * n))" "every wide UPDATE found its row"
t_ok "some tall UPDATEs found their version ($tall)" test "$tall" -gt 0
t_is "$(wc_psql -c "SELECT n FROM w WHERE rowkey = 'a'")" "$((wide + tall))" \
    "the counter holds every increment the UPDATEs reported: nothing lost"
t_is "$(wc_psql -c "SELECT count(*) FROM t WHERE rowkey = 'a'")" 1 \
    "the tall table shows the one version the family keeps"
t_ok "flush and compaction ran beside them without error" test ! -s "$work/maint.err"
[ -s "$work/maint.err" ] && head -n 5 "$work/maint.err" | sed 's/^/#   /'

t_done
