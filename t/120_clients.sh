#!/usr/bin/env bash
# t/120_clients.sh -- real client drivers against a widecol wide table and an ordinary table
# of the same columns: the same program, the same output.
#
# The programs are in t/clients/ (run by their interpreters, nothing to build):
# 1. Probe.java through pgjdbc, twice: with the driver's defaults (a statement is prepared on
#    the server at its fifth use) and with prepareThreshold=1 and reWriteBatchedInserts=true
#    (one multi-row INSERT a batch); its output for the wide table must equal the ordinary
#    table's line by line.
# 2. probe.py through psycopg 3 (pipeline mode, binary COPY, a scrollable named cursor, ...):
#    the same comparison.
# 3. Ycsb.java sends the statements of YCSB's JDBC binding (JdbcDBClient) -- batched loading,
#    SELECT * by key, UPDATE of some fields, a scan with ORDER BY and LIMIT, INSERT, DELETE --
#    to a usertable of the binding's shape: an ordinary table with a primary key, and a view
#    over a wide table that names its rowkey YCSB_KEY; the two outputs must be equal.
# 4. Conc.java: six pgjdbc connections move amounts between rows (FOR UPDATE in READ
#    COMMITTED and REPEATABLE READ; n = n + d in READ COMMITTED; UPDATE ... WHERE CURRENT OF
#    a cursor FOR UPDATE), put rows that are there if absent (nothing may be written), sum the
#    table in one statement, in a REPEATABLE READ transaction and through fetch-size cursors,
#    and batch direct updates of another column; every sum seen must be the total, only 40001
#    and 40P01 may fail.  Run against the ordinary table first (the program's own check), then the wide
#    one.
#
# pgjdbc speaks TCP only, so the cluster listens on localhost too.  Installs what it needs
# (python3-psycopg, libpostgresql-jdbc-java, a Java runtime if there is none).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

pkgs=(python3-psycopg libpostgresql-jdbc-java)
command -v java >/dev/null 2>&1 || pkgs+=(default-jre-headless)
(wc_need_packages "${pkgs[@]}") || t_bail "python3-psycopg, libpostgresql-jdbc-java and a Java runtime are installed"
jar=/usr/share/java/postgresql.jar
[ -r "$jar" ] || t_bail "$jar is there"
python=/usr/bin/python3     # Debian's, which python3-psycopg installs into

WC_EXTRA_CONF="${WC_EXTRA_CONF:-}
listen_addresses = 'localhost'" t_cluster_with_fdw
export PGDATABASE=postgres PGUSER=postgres
work=$(mktemp -d /tmp/widecol-t120.XXXXXX)
wc_on_exit "rm -rf '$work'"

wc_psql <<'EOF' || t_bail "the tables are created"
CREATE TABLE h (rowkey varchar PRIMARY KEY, f0 text, f1 text, n int, t timestamptz, b bytea,
                j jsonb, x numeric);
CREATE FOREIGN TABLE w (
    rowkey varchar,
    f0 text        OPTIONS (cell 'f:f0'),
    f1 text        OPTIONS (cell 'f:f1'),
    n  int         OPTIONS (cell 'f:n'),
    t  timestamptz OPTIONS (cell 'f:t'),
    b  bytea       OPTIONS (cell 'g:b'),
    j  jsonb       OPTIONS (cell 'j:*'),
    x  numeric     OPTIONS (cell 'f:x')
) SERVER wide OPTIONS (families 'f,g,j');

CREATE SCHEMA heap;
CREATE TABLE heap.usertable (ycsb_key varchar(255) PRIMARY KEY,
    field0 text, field1 text, field2 text, field3 text, field4 text,
    field5 text, field6 text, field7 text, field8 text, field9 text);
CREATE SCHEMA wc;
CREATE FOREIGN TABLE wc.usertable_wc (
    rowkey varchar COLLATE "C",
    field0 text OPTIONS (cell 'f:field0'), field1 text OPTIONS (cell 'f:field1'),
    field2 text OPTIONS (cell 'f:field2'), field3 text OPTIONS (cell 'f:field3'),
    field4 text OPTIONS (cell 'f:field4'), field5 text OPTIONS (cell 'f:field5'),
    field6 text OPTIONS (cell 'f:field6'), field7 text OPTIONS (cell 'f:field7'),
    field8 text OPTIONS (cell 'f:field8'), field9 text OPTIONS (cell 'f:field9')
) SERVER wide OPTIONS (families 'f', max_versions '1');
CREATE VIEW wc.usertable AS
    SELECT rowkey AS ycsb_key, field0, field1, field2, field3, field4,
           field5, field6, field7, field8, field9 FROM wc.usertable_wc;
EOF

# same WHAT NAME CMD-WITH-@T@: runs CMD for table h, then w (@T@ replaced); equal outputs pass
same() {
    local what=$1 name=$2 cmd=$3 t
    for t in h w; do
        bash -c "${cmd//@T@/$t}" >"$work/$name.$t" 2>&1
        echo "exit $?" >>"$work/$name.$t"
    done
    if t_ok "$what: the wide table's output is the ordinary table's ($(wc -l <"$work/$name.h") lines)" \
            cmp -s "$work/$name.h" "$work/$name.w"; then
        grep -q '^exit 0$' "$work/$name.h" || t_diag "but the program failed: $(tail -n 3 "$work/$name.h")"
    else
        diff "$work/$name.h" "$work/$name.w" | head -n 20 | sed 's/^/#   /'
    fi
    t_ok "$what: the program ran to its end" grep -q '^exit 0$' "$work/$name.h"
}

same "pgjdbc, driver defaults" jdbc "java -cp '$jar' '$here/clients/Probe.java' @T@"
same "pgjdbc, prepareThreshold=1 and reWriteBatchedInserts=true" jdbc1 \
    "java -cp '$jar' '$here/clients/Probe.java' @T@ '&prepareThreshold=1&reWriteBatchedInserts=true'"
same "psycopg 3" psycopg "'$python' '$here/clients/probe.py' @T@"

# YCSB's statements: schema heap or wc (the view)
for s in heap wc; do
    java -cp "$jar" "$here/clients/Ycsb.java" "$s" 3000 >"$work/ycsb.$s" 2>&1
    echo "exit $?" >>"$work/ycsb.$s"
done
t_ok "YCSB's JDBC statements ran to their end" grep -q '^exit 0$' "$work/ycsb.heap" ||
    tail -n 5 "$work/ycsb.heap" | sed 's/^/#   /'
t_ok "YCSB's JDBC statements: the wide table through a view gives the ordinary table's results ($(grep -c '^[0-9]' "$work/ycsb.heap") operations)" \
    cmp -s "$work/ycsb.heap" "$work/ycsb.wc" ||
    diff "$work/ycsb.heap" "$work/ycsb.wc" | head -n 20 | sed 's/^/#   /'

secs=8
t_long && secs=60
for t in h w; do
    out=$(java -cp "$jar" "$here/clients/Conc.java" "$t" 6 "$secs" 2>&1)
    rc=$?
    t_diag "$(head -n 1 <<<"$out")"
    t_ok "six pgjdbc connections moving amounts in table $t for $secs s: every sum whole, no other error" \
        test "$rc" -eq 0 || printf '%s\n' "$out" | head -n 12 | sed 's/^/#   /'
done

t_done
