#!/usr/bin/env bash
# t/092_pg_dump_wide.sh -- pg_dump and pg_restore of wide tables, and of a tall and a wide table
# over one store.
#
# pg_dump writes a wide table as CREATE FOREIGN TABLE without its column options, then one ALTER
# COLUMN ... OPTIONS (cell ...) per column, and runs its output with an empty search_path: both
# must restore (ddl.c, option.c).  A wide table w of typed and jsonb columns, a tall table t
# showing w's store (versions at chosen timestamps, three kept), and a wide table v of its own
# are dumped with their data, but for w's (--exclude-table-data=w: t's rows are the store's
# cells with their timestamps; w's rows would write them again, at the time of the restore),
# and a partitioned table of two wide partitions, in plain format (psql) and custom format
# (pg_restore), into new databases; there every table reads as in the source.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"

t_cluster_with_fdw
wc_psql -c "CREATE SCHEMA app" \
        -c "CREATE FOREIGN TABLE app.w (rowkey text COLLATE \"C\", n int OPTIONS (cell 'f:n'),
                note text OPTIONS (cell 'f:note'), tags jsonb OPTIONS (cell 'g:*'))
            SERVER wide OPTIONS (families 'f,g', max_versions '3')" \
        -c "CREATE FOREIGN TABLE app.t (rowkey text COLLATE \"C\", family text COLLATE \"C\",
                qualifier text COLLATE \"C\", ts bigint, value bytea)
            SERVER wide OPTIONS (store 'w')" \
        -c "CREATE FOREIGN TABLE v (rowkey text COLLATE \"C\", a text OPTIONS (cell 'x:a'),
                b bigint OPTIONS (cell 'x:b')) SERVER wide OPTIONS (families 'x')" \
        -c "INSERT INTO app.t SELECT 'r' || i, 'f', 'n', 1000 * j, int4send(i * 10 + j)
              FROM generate_series(1, 50) i, generate_series(1, 4) j" \
        -c "INSERT INTO app.t SELECT 'r' || i, 'f', 'note', 5000, convert_to('note ' || i, 'UTF8')
              FROM generate_series(1, 50, 3) i" \
        -c "UPDATE app.w SET tags = jsonb_build_object('k', rowkey, 'm', 1) WHERE n % 4 = 0" \
        -c "INSERT INTO v SELECT 'v' || i, CASE WHEN i % 5 > 0 THEN 'a' || i END, i * 1000000000::bigint
              FROM generate_series(1, 40) i" \
        -c "SELECT widecol_flush('app.w')" >/dev/null || t_bail "the tables and their rows"
# a partitioned table of wide partitions (mapped after PARTITION OF: a WARNING until then)
wc_psql -c "CREATE TABLE pt (rowkey text COLLATE \"C\" NOT NULL, n int, note text) PARTITION BY RANGE (rowkey)" \
        -c "CREATE FOREIGN TABLE pt1 PARTITION OF pt FOR VALUES FROM ('a') TO ('m') SERVER wide OPTIONS (families 'f')" \
        -c "ALTER FOREIGN TABLE pt1 ALTER COLUMN n OPTIONS (cell 'f:n'), ALTER COLUMN note OPTIONS (cell 'f:note')" \
        -c "CREATE FOREIGN TABLE pt2 PARTITION OF pt FOR VALUES FROM ('m') TO ('z') SERVER wide OPTIONS (families 'f')" \
        -c "ALTER FOREIGN TABLE pt2 ALTER COLUMN n OPTIONS (cell 'f:n'), ALTER COLUMN note OPTIONS (cell 'f:note')" \
        -c "INSERT INTO pt SELECT chr(97 + i % 25) || i, i, CASE WHEN i % 2 = 0 THEN 'even' END
              FROM generate_series(1, 60) i" >/dev/null 2>&1 || t_bail "the partitioned table"

work=$(mktemp -d /tmp/widecol-dumpwide.XXXXXX) || t_bail "mktemp"
wc_on_exit "rm -rf '$work'"

# rows DB: every table's rows as text, in a fixed order
rows() {
    wc_psql -d "$1" -c "SELECT 't', rowkey, family, qualifier, ts, value FROM app.t ORDER BY 2, 3, 4, 5" \
                    -c "SELECT 'w', * FROM app.w ORDER BY 2" -c "SELECT 'v', * FROM v ORDER BY 2" \
                    -c "SELECT 'p', tableoid::regclass, * FROM pt ORDER BY 3"
}
rows postgres >"$work/source" || t_bail "reading the source"
t_diag "source: $(grep -c '^t|' "$work/source") cell versions, $(grep -c '^w|' "$work/source") + $(grep -c '^v|' "$work/source") wide rows, $(grep -c '^p|' "$work/source") in partitions"

"$WC_PGBIN/pg_dump" --include-foreign-data=wide --exclude-table-data=app.w -f "$work/dump.sql" postgres \
    2>"$work/dump.err"
t_ok "pg_dump (plain) of the widecol tables and their data" test $? = 0 -a ! -s "$work/dump.err"
[ -s "$work/dump.err" ] && head -n 5 "$work/dump.err" | sed 's/^/#   /'
t_ok "the dump sets the cells after CREATE, as this test means to check" \
    grep -q "ALTER FOREIGN TABLE app.w ALTER COLUMN n OPTIONS" "$work/dump.sql"

wc_psql -c "CREATE DATABASE r1" >/dev/null
wc_psql -d r1 -v ON_ERROR_STOP=1 -f "$work/dump.sql" >/dev/null 2>"$work/restore1.err"
t_ok "the plain dump restores with psql, no error" test $? = 0
grep ERROR "$work/restore1.err" | head -n 5 | sed 's/^/#   /'
rows r1 >"$work/r1"
t_ok "after the plain dump every table reads as in the source" cmp -s "$work/source" "$work/r1"
cmp -s "$work/source" "$work/r1" || diff "$work/source" "$work/r1" | head -n 10 | sed 's/^/#   /'

"$WC_PGBIN/pg_dump" -Fc --include-foreign-data=wide --exclude-table-data=app.w -f "$work/dump.custom" \
    postgres 2>"$work/dumpc.err"
t_ok "pg_dump (custom format)" test $? = 0 -a ! -s "$work/dumpc.err"
wc_psql -c "CREATE DATABASE r2" >/dev/null
"$WC_PGBIN/pg_restore" -d r2 --exit-on-error "$work/dump.custom" 2>"$work/restore2.err"
t_ok "pg_restore of the custom dump, no error" test $? = 0
grep ERROR "$work/restore2.err" | head -n 5 | sed 's/^/#   /'
rows r2 >"$work/r2"
t_ok "after pg_restore every table reads as in the source" cmp -s "$work/source" "$work/r2"
cmp -s "$work/source" "$work/r2" || diff "$work/source" "$work/r2" | head -n 10 | sed 's/^/#   /'

# restored tables are usable: a write through each
t_is "$(wc_psql -d r2 -c "UPDATE app.w SET n = n + 1 WHERE rowkey = 'r1' RETURNING n")" 15 \
    "a restored wide table takes an UPDATE (the newest of r1's versions was 14)"
t_is "$(wc_psql -d r2 -c "SELECT count(*) FROM app.t WHERE rowkey = 'r1' AND qualifier = 'n'")" 3 \
    "the tall table over its store shows the new version and keeps three"

t_done
