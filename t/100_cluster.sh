#!/usr/bin/env bash
# t/100_cluster.sh -- the multi-node recipe of doc/CLUSTER.md: a coordinator (main, postgres_fdw)
# and two data nodes (n1, n2, widecol_fdw), the inbox fixture of DOMAIN.md
# (<user>-<reversed date>-<message>) partitioned by rowkey range (regions) and by hash (salting),
# each partition a postgres_fdw foreign table over a widecol table on a node.  Every answer is
# checked against one ordinary table on the coordinator holding the same rows: routed INSERT and
# COPY, point reads pruned to one node with the condition shipped, ranges across nodes,
# prefixes, ORDER BY rowkey (ordered Append, Merge Append), a join with a local table,
# aggregates computed on the nodes, UPDATE and DELETE sent to the nodes, and a region moved from
# n1 to n2 while a reader loops and a writer waits.
. "$(dirname "$0")/testlib.sh"

wc_cluster_start || t_bail "the coordinator starts"
wc_node_create n1 || t_bail "data node n1 starts"
wc_node_create n2 || t_bail "data node n2 starts"
t_diag "coordinator port $(wc_node_port main), data nodes n1 port $(wc_node_port n1), n2 port $(wc_node_port n2)"

co() { wc_psql "$@"; }
COLS='rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C", ts bigint, value text'

# --- data nodes: widecol tables (two regions, two hash buckets)
for n in n1 n2; do
    wc_node_psql $n -c "CREATE EXTENSION widecol_fdw" -c "CREATE SERVER wide FOREIGN DATA WRAPPER widecol_fdw" ||
        t_bail "CREATE EXTENSION widecol_fdw on $n"
done
wc_node_psql n1 -c "CREATE FOREIGN TABLE inbox_r0 ($COLS) SERVER wide OPTIONS (families 'm,a', max_versions '0')" \
                -c "CREATE FOREIGN TABLE salted_0 ($COLS) SERVER wide OPTIONS (families 'm,a', max_versions '0')" &&
wc_node_psql n2 -c "CREATE FOREIGN TABLE inbox_r1 ($COLS) SERVER wide OPTIONS (families 'm,a', max_versions '0')" \
                -c "CREATE FOREIGN TABLE salted_1 ($COLS) SERVER wide OPTIONS (families 'm,a', max_versions '0')" ||
    t_bail "the widecol tables on the data nodes"

# --- the coordinator: servers, the partitioned tables, the ordinary reference table.  Its columns
# are in the database's default collation (C here): postgres_fdw ships "rowkey = outer.column"
# only for a default collation.
co -c "CREATE EXTENSION postgres_fdw" || t_bail "CREATE EXTENSION postgres_fdw"
for n in n1 n2; do
    co -c "CREATE SERVER $n FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '$(wc_node_dir $n)', port '$(wc_node_port $n)',
               dbname 'postgres', async_capable 'true', fetch_size '1000', batch_size '200')" \
       -c "CREATE USER MAPPING FOR CURRENT_USER SERVER $n" || t_bail "postgres_fdw server $n"
done
co <<'SQL' || t_bail "the partitioned tables on the coordinator"
CREATE TABLE inbox (rowkey text NOT NULL, family text NOT NULL, qualifier text NOT NULL, ts bigint NOT NULL, value text NOT NULL)
    PARTITION BY RANGE (rowkey);
CREATE FOREIGN TABLE inbox_r0 PARTITION OF inbox FOR VALUES FROM (MINVALUE) TO ('10100') SERVER n1;
CREATE FOREIGN TABLE inbox_r1 PARTITION OF inbox FOR VALUES FROM ('10100') TO (MAXVALUE) SERVER n2;
CREATE TABLE salted (LIKE inbox) PARTITION BY HASH (rowkey);
CREATE FOREIGN TABLE salted_0 PARTITION OF salted FOR VALUES WITH (MODULUS 2, REMAINDER 0) SERVER n1;
CREATE FOREIGN TABLE salted_1 PARTITION OF salted FOR VALUES WITH (MODULUS 2, REMAINDER 1) SERVER n2;
CREATE TABLE ref (LIKE inbox);
CREATE INDEX ON ref (rowkey);
CREATE TABLE users (id int PRIMARY KEY, name text);
INSERT INTO users SELECT 10000 + u, 'user ' || u FROM generate_series(0, 199, 7) u;

-- same(Q): Q with {t} as the table under test and as ref gives the same multiset of rows:
-- 'same (N rows)', or how many rows differ
CREATE FUNCTION same(q text, t text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE a bigint; b bigint; n bigint;
BEGIN
    EXECUTE format('SELECT count(*) FROM (%s) x', replace(q, '{t}', t)) INTO n;
    EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL (%s)) x', replace(q, '{t}', t), replace(q, '{t}', 'ref')) INTO a;
    EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL (%s)) x', replace(q, '{t}', 'ref'), replace(q, '{t}', t)) INTO b;
    IF a = 0 AND b = 0 THEN RETURN format('same (%s rows)', n); END IF;
    RETURN format('%s rows only in %s, %s only in ref', a, t, b);
END $$;
-- same_order(Q): the same rows in the same order
CREATE FUNCTION same_order(q text, t text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE a text; b text; n bigint;
BEGIN
    EXECUTE format('SELECT count(*), md5(string_agg(x::text, E''\n'')) FROM (%s) x', replace(q, '{t}', t)) INTO n, a;
    EXECUTE format('SELECT md5(string_agg(x::text, E''\n'')) FROM (%s) x', replace(q, '{t}', 'ref')) INTO b;
    RETURN CASE WHEN a = b THEN format('same (%s rows)', n) ELSE 'different' END;
END $$;
SQL

# t_same DESC QUERY [TABLE]: one assertion, QUERY on TABLE (inbox) and on ref agree, with rows
t_same() {
    local got
    got=$(co -c "SELECT same(\$q\$$2\$q\$, '${3:-inbox}')" 2>&1)
    t_ok "$1: $got" grep -qE '^same \([1-9][0-9]* rows\)$' <<<"$got"
}
t_same_order() {
    local got
    got=$(co -c "SELECT same_order(\$q\$$2\$q\$, '${3:-inbox}')" 2>&1)
    t_ok "$1: $got" grep -qE '^same \([1-9][0-9]* rows\)$' <<<"$got"
}
# plan QUERY: EXPLAIN (VERBOSE, COSTS OFF)
plan() { co -c "EXPLAIN (VERBOSE, COSTS OFF) $1" 2>&1; }

# --- routed writes: INSERT ... SELECT, then COPY, into both partitioned tables and ref
GEN="SELECT format('%s-%s-%s', 10000 + u, 99999999 - d, m), f, q, d * 10 + m,
            md5(u || '/' || d || '/' || m || f || q)
       FROM generate_series(0, 199) u, generate_series(20240101, 20240104) d, generate_series(1, 3) m,
            (VALUES ('m', 'subject'), ('m', 'body'), ('a', 'file')) v(f, q)
      WHERE ((u + d + m) % 3 <> 0 OR f = 'm')"
co -c "INSERT INTO inbox $GEN AND u < 150" -c "INSERT INTO salted $GEN AND u < 150" \
   -c "INSERT INTO ref $GEN AND u < 150" || t_bail "INSERT ... SELECT through the coordinator"
copyfile=$(wc_node_dir main)/copy.tsv
co -c "COPY ($GEN AND u >= 150) TO STDOUT" >"$copyfile" &&
co -c "\\copy inbox FROM '$copyfile'" -c "\\copy salted FROM '$copyfile'" -c "\\copy ref FROM '$copyfile'" ||
    t_bail "COPY through the coordinator"
t_is "$(co -c "SELECT count(*) FROM ref")" 6400 "the reference table holds the fixture (200 users, 6400 cells)"

t_is "$(wc_node_psql n1 -c "SELECT count(*) FROM inbox_r0") $(wc_node_psql n2 -c "SELECT count(*) FROM inbox_r1")" \
     "$(co -c "SELECT count(*) FILTER (WHERE rowkey < '10100') || ' ' || count(*) FILTER (WHERE rowkey >= '10100') FROM ref")" \
     "INSERT and COPY were routed by range: n1 holds exactly the rowkeys below '10100', n2 the rest"
t_is "$(wc_node_psql n1 -c "SELECT count(*) FROM inbox_r0 WHERE rowkey >= '10100'") $(wc_node_psql n2 -c "SELECT count(*) FROM inbox_r1 WHERE rowkey < '10100'")" \
     "0 0" "no rowkey landed outside its region"
t_is "$(wc_node_psql n1 -c "SELECT count(*) FROM salted_0") $(wc_node_psql n2 -c "SELECT count(*) FROM salted_1")" \
     "$(co -c "SELECT count(*) FILTER (WHERE satisfies_hash_partition('salted'::regclass, 2, 0, rowkey)) || ' ' ||
                      count(*) FILTER (WHERE satisfies_hash_partition('salted'::regclass, 2, 1, rowkey)) FROM ref")" \
     "INSERT and COPY were routed by hash: each bucket on its node holds exactly its rowkeys"
t_same "the whole range-partitioned table" "SELECT * FROM {t}"
t_same "the whole hash-partitioned table" "SELECT * FROM {t}" salted

# --- point reads: pruned to one partition, the condition shipped
p=$(plan "SELECT * FROM inbox WHERE rowkey = '10042-79759898-2'")
t_ok "a point read scans one partition (inbox_r0 on n1) and ships rowkey = ..." \
    test "$(grep -c 'Foreign Scan' <<<"$p")" = 1 -a -n "$(grep -F "Foreign Scan on public.inbox_r0" <<<"$p")" \
         -a -n "$(grep -F "WHERE ((rowkey = '10042-79759898-2'))" <<<"$p")" || t_diag "$p"
p=$(plan "SELECT * FROM salted WHERE rowkey = '10042-79759898-2'")
t_ok "a point read of the hash-partitioned table scans one bucket" \
    test "$(grep -c 'Foreign Scan' <<<"$p")" = 1 -a -n "$(grep -F "WHERE ((rowkey = '10042-79759898-2'))" <<<"$p")" || t_diag "$p"
t_same "a point read" "SELECT * FROM {t} WHERE rowkey = '10042-79759898-2'"
t_same "a point read, hash" "SELECT * FROM {t} WHERE rowkey = '10142-79759897-1'" salted
t_same "IN over both nodes" "SELECT * FROM {t} WHERE rowkey IN ('10042-79759898-2', '10142-79759897-1', 'nobody')"

# --- ranges and prefixes
p=$(plan "SELECT * FROM inbox WHERE rowkey >= '10090' AND rowkey < '10110' AND family = 'm'")
t_ok "a range across the boundary scans both nodes, concurrently, with the range shipped" \
    test "$(grep -c 'Async Foreign Scan' <<<"$p")" = 2 \
         -a "$(grep -c "WHERE ((rowkey >= '10090')) AND ((rowkey < '10110')) AND ((family = 'm'))" <<<"$p")" = 2 || t_diag "$p"
t_same "a range across the nodes" "SELECT * FROM {t} WHERE rowkey >= '10090' AND rowkey < '10110' AND family = 'm'"
t_same "a range within n2" "SELECT * FROM {t} WHERE rowkey BETWEEN '10120' AND '10130-7975989'"
t_same "a range and a time range" "SELECT * FROM {t} WHERE rowkey > '10050' AND ts BETWEEN 202401020 AND 202401031"
p=$(plan "SELECT * FROM inbox WHERE rowkey ^@ '10123-'")
t_ok "a prefix (^@) is shipped to the nodes" test -n "$(grep -F "((rowkey ^@ '10123-'))" <<<"$p")" || t_diag "$p"
t_same "one user's mail, ^@" "SELECT * FROM {t} WHERE rowkey ^@ '10123-'"
t_same "one user's mail, LIKE" "SELECT * FROM {t} WHERE rowkey LIKE '10023-%' AND qualifier = 'subject'"
t_same "one user's mail, a prefix and its range (pruned)" \
    "SELECT * FROM {t} WHERE rowkey ^@ '10077-' AND rowkey >= '10077-' AND rowkey < '10077.'"
t_same "one user's mail, hash" "SELECT * FROM {t} WHERE rowkey ^@ '10177-'" salted

# --- order
ORD="SELECT rowkey, family, qualifier, ts FROM {t} ORDER BY rowkey, family, qualifier, ts DESC"
p=$(plan "${ORD//\{t\}/inbox}")
t_ok "ORDER BY rowkey over regions: the nodes sort, an ordered Append, no Sort on the coordinator" \
    test -z "$(grep -E 'Sort Key|Merge Append' <<<"$p")" -a "$(grep -c 'ORDER BY rowkey ASC NULLS LAST' <<<"$p")" = 2 || t_diag "$p"
t_same_order "ORDER BY rowkey, family, qualifier, ts DESC" "$ORD"
p=$(plan "${ORD//\{t\}/salted}")
t_ok "ORDER BY rowkey over hash buckets: a Merge Append of the nodes' ordered scans" \
    test -n "$(grep 'Merge Append' <<<"$p")" -a "$(grep -c 'ORDER BY rowkey ASC NULLS LAST' <<<"$p")" = 2 || t_diag "$p"
t_same_order "ORDER BY rowkey on the hash-partitioned table" "$ORD" salted
t_same_order "ORDER BY rowkey DESC ... LIMIT" "SELECT rowkey, family, qualifier, ts FROM {t} ORDER BY rowkey DESC, family, qualifier, ts LIMIT 50"

# --- a join with a local table
t_same "a join with a local table" \
    "SELECT u.name, i.rowkey, i.value FROM users u JOIN {t} i ON i.rowkey LIKE u.id || '-%' WHERE i.family = 'm'"
t_same "a join on the rowkey with a local table" \
    "SELECT u.name, i.* FROM (SELECT id, name, format('%s-79759898-2', id) k FROM users) u JOIN {t} i ON i.rowkey = u.k"
# (use_remote_estimate only here: it EXPLAINs on the nodes at every planning)
co -c "CREATE TABLE wanted AS SELECT format('%s-79759898-2', id) k FROM users WHERE id IN (10007, 10133)" -c "ANALYZE wanted" \
   -c "ALTER SERVER n1 OPTIONS (ADD use_remote_estimate 'true')" -c "ALTER SERVER n2 OPTIONS (ADD use_remote_estimate 'true')"
p=$(plan "SELECT w.k, i.* FROM wanted w JOIN inbox i ON i.rowkey = w.k")
t_ok "a join on the rowkey of a few outer rows: parameterized point reads on the nodes (use_remote_estimate)" \
    test "$(grep -c 'WHERE ((\$1::text = rowkey))' <<<"$p")" = 2 || t_diag "$p"
t_same "that join" "SELECT w.k, i.* FROM wanted w JOIN {t} i ON i.rowkey = w.k"
p=$(plan "UPDATE inbox SET value = 'read' WHERE rowkey ^@ '10105-' AND qualifier = 'subject'")
t_ok "with use_remote_estimate, an UPDATE with shippable conditions is planned (the ctid scan EXPLAINed, not run) and runs on the nodes" \
    test -n "$(grep -F "Remote SQL: UPDATE public.inbox_r1 SET value = 'read'::text WHERE ((rowkey ^@ '10105-'))" <<<"$p")" || t_diag "$p"
co -c "ALTER SERVER n1 OPTIONS (DROP use_remote_estimate)" -c "ALTER SERVER n2 OPTIONS (DROP use_remote_estimate)"

# --- aggregates: grouped by the partition key, computed on the nodes
p=$(co -c "SET enable_partitionwise_aggregate = on" -c "EXPLAIN (VERBOSE, COSTS OFF) SELECT rowkey, count(*), sum(ts) FROM inbox GROUP BY rowkey")
t_ok "GROUP BY rowkey with enable_partitionwise_aggregate: each node computes count(*) and sum(ts)" \
    test "$(grep -c 'Remote SQL: SELECT rowkey, count(\*), sum(ts) FROM public.inbox_r[01] GROUP BY 1' <<<"$p")" = 2 || t_diag "$p"
t_is "$(co -c "SET enable_partitionwise_aggregate = on" -c "SELECT same(\$q\$SELECT rowkey, count(*), sum(ts), max(value) FROM {t} GROUP BY rowkey\$q\$, 'inbox')")" \
     "same (2400 rows)" "those aggregates"
p=$(plan "SELECT sum(n) FROM (SELECT count(*) FROM inbox_r0 UNION ALL SELECT count(*) FROM inbox_r1) c(n)")
t_ok "a total as one count(*) per region: shipped, run concurrently" \
    test "$(grep -c 'Remote SQL: SELECT count(\*) FROM public.inbox_r[01]$' <<<"$p")" = 2 -a "$(grep -c 'Async Foreign Scan' <<<"$p")" = 2 || t_diag "$p"
t_is "$(co -c "SELECT sum(n) FROM (SELECT count(*) FROM inbox_r0 UNION ALL SELECT count(*) FROM inbox_r1) c(n)")" \
     "$(co -c "SELECT count(*) FROM ref")" "that total"
t_same "aggregates over everything" "SELECT family, count(*), sum(ts), count(DISTINCT rowkey) FROM {t} GROUP BY family"

# --- UPDATE and DELETE through the coordinator: sent whole to the nodes
p=$(plan "UPDATE inbox SET value = 'read' WHERE rowkey ^@ '10105-' AND qualifier = 'subject'")
t_ok "an UPDATE with shippable conditions runs on the nodes (Foreign Update)" \
    test -n "$(grep -F "Remote SQL: UPDATE public.inbox_r1 SET value = 'read'::text WHERE ((rowkey ^@ '10105-'))" <<<"$p")" || t_diag "$p"
for t in inbox salted ref; do
    co -c "UPDATE $t SET value = 'read' WHERE rowkey ^@ '10105-' AND qualifier = 'subject'" \
       -c "UPDATE $t SET value = value || '!' WHERE rowkey >= '10095' AND rowkey < '10103' AND family = 'a'" \
       -c "DELETE FROM $t WHERE rowkey >= '10060' AND rowkey < '10140' AND ts % 10 = 2" \
       -c "DELETE FROM $t WHERE rowkey = '10001-79759899-1'" || t_bail "UPDATE, DELETE of $t"
done
t_same "after UPDATE and DELETE" "SELECT * FROM {t}"
t_same "after UPDATE and DELETE, hash" "SELECT * FROM {t}" salted
err=$(co -c "DELETE FROM inbox WHERE rowkey = '10002-79759899-1' AND random() >= 0" 2>&1)
t_ok "a DELETE that cannot be sent whole (random()) is an ERROR, not a DELETE WHERE ctid = \$1 of every row" \
    grep -q 'has no ctid' <<<"$err" || t_diag "$err"
t_same "nothing was deleted by it" "SELECT * FROM {t}"

# --- a region moved from n1 to n2 while a reader loops and a writer waits
wc_node_psql n2 -c "CREATE FOREIGN TABLE inbox_r0 ($COLS) SERVER wide OPTIONS (families 'm,a', max_versions '0')" &&
co -c "CREATE FOREIGN TABLE inbox_r0_new (rowkey text NOT NULL, family text NOT NULL, qualifier text NOT NULL,
                                          ts bigint NOT NULL, value text NOT NULL) SERVER n2 OPTIONS (table_name 'inbox_r0')" ||
    t_bail "the region's new table on n2"
dir=$(wc_node_dir main)
# the reader: the whole table, one user in the region, and a range over both regions, against ref
# (the writer's late rows, whose ref twin is written afterwards, left out); a new session each time
(
    while [ ! -e "$dir/stop-reader" ]; do
        PGAPPNAME=reader co -F ' ' -c "SELECT same(\$q\$SELECT * FROM {t} WHERE rowkey NOT LIKE '%-late'\$q\$, 'inbox'),
                     same(\$q\$SELECT * FROM {t} WHERE rowkey ^@ '10042-' AND rowkey NOT LIKE '%-late'\$q\$, 'inbox'),
                     same(\$q\$SELECT * FROM {t} WHERE rowkey > '10090' AND rowkey < '10110' AND rowkey NOT LIKE '%-late'\$q\$, 'inbox')" || exit 1
    done
) >"$dir/reader.out" 2>"$dir/reader.err" &
reader=$!
wc_on_exit "kill $reader"
sleep 1
# the mover: writes to inbox wait (EXCLUSIVE lets readers in), the region is copied to n2 through
# the coordinator, the partitions are swapped, all in one transaction
co -c "BEGIN" -c "LOCK TABLE inbox IN EXCLUSIVE MODE" \
   -c "INSERT INTO inbox_r0_new SELECT * FROM inbox_r0" -c "SELECT pg_sleep(2)" \
   -c "ALTER TABLE inbox DETACH PARTITION inbox_r0" \
   -c "ALTER TABLE inbox ATTACH PARTITION inbox_r0_new FOR VALUES FROM (MINVALUE) TO ('10100')" \
   -c "COMMIT" >/dev/null 2>"$dir/mover.err" &
mover=$!
sleep 0.5
# the writer comes during the copy: it waits for the move, then lands in the new table on n2
co -c "INSERT INTO inbox VALUES ('10042-79759895-9-late', 'm', 'subject', 7, 'written during the move')" \
    2>"$dir/writer.err" &
writer=$!
wait $mover; rc_mover=$?
wait $writer; rc_writer=$?
sleep 1
touch "$dir/stop-reader"
wait $reader; rc_reader=$?
t_is "$rc_mover $rc_writer" "0 0" "the move (copy, DETACH, ATTACH in one transaction) and the waiting writer succeeded" ||
    cat "$dir/mover.err" "$dir/writer.err" | head -n 5 | sed 's/^/#   /'
answers=$(wc -l <"$dir/reader.out")
bad=$(grep -vc '^same ([1-9][0-9]* rows) same ([1-9][0-9]* rows) same ([1-9][0-9]* rows)$' "$dir/reader.out")
t_ok "a reader looping across the move got the right answer every time ($answers rounds, $bad wrong)" \
    test "$rc_reader" = 0 -a "$answers" -ge 3 -a "$bad" = 0 -a ! -s "$dir/reader.err" ||
    { echo "reader exit status $rc_reader"; grep -v '^same (.*) same (.*) same (.*)$' "$dir/reader.out" | head -n 3
      head -n 3 "$dir/reader.err"; } | sed 's/^/#   /'
co -c "INSERT INTO ref VALUES ('10042-79759895-9-late', 'm', 'subject', 7, 'written during the move')"
t_is "$(wc_node_psql n2 -c "SELECT count(*) FROM inbox_r0 WHERE rowkey LIKE '%-late'") $(wc_node_psql n1 -c "SELECT count(*) FROM inbox_r0 WHERE rowkey LIKE '%-late'")" \
     "1 0" "the writer's row is in the region's new table on n2, not in the old one on n1"
p=$(plan "SELECT * FROM inbox WHERE rowkey = '10042-79759898-2'")
t_ok "a point read of the moved region goes to n2" test -n "$(grep -F "Foreign Scan on public.inbox_r0_new" <<<"$p")" || t_diag "$p"
t_same "after the move" "SELECT * FROM {t}"
co -c "DROP FOREIGN TABLE inbox_r0" && wc_node_psql n1 -c "DROP FOREIGN TABLE inbox_r0" ||
    t_bail "dropping the old region"
t_same "after dropping the old region's table" "SELECT * FROM {t}"

# --- a hash bucket split in two (modulus 2 -> 4), one half on each node
wc_node_psql n1 -c "CREATE FOREIGN TABLE salted_0a ($COLS) SERVER wide OPTIONS (families 'm,a', max_versions '0')" &&
wc_node_psql n2 -c "CREATE FOREIGN TABLE salted_0b ($COLS) SERVER wide OPTIONS (families 'm,a', max_versions '0')" &&
co -c "CREATE FOREIGN TABLE salted_0a (rowkey text NOT NULL, family text NOT NULL, qualifier text NOT NULL,
                                       ts bigint NOT NULL, value text NOT NULL) SERVER n1" \
   -c "CREATE FOREIGN TABLE salted_0b (rowkey text NOT NULL, family text NOT NULL, qualifier text NOT NULL,
                                       ts bigint NOT NULL, value text NOT NULL) SERVER n2" ||
    t_bail "the new buckets"
co -c "INSERT INTO salted VALUES ('10042-79759895-9-late', 'm', 'subject', 7, 'written during the move')" \
   -c "BEGIN" -c "LOCK TABLE salted IN EXCLUSIVE MODE" \
   -c "CREATE TEMP TABLE bucket ON COMMIT DROP AS SELECT * FROM salted_0" \
   -c "INSERT INTO salted_0a SELECT * FROM bucket WHERE satisfies_hash_partition('salted'::regclass, 4, 0, rowkey)" \
   -c "INSERT INTO salted_0b SELECT * FROM bucket WHERE satisfies_hash_partition('salted'::regclass, 4, 2, rowkey)" \
   -c "ALTER TABLE salted DETACH PARTITION salted_0" \
   -c "ALTER TABLE salted ATTACH PARTITION salted_0a FOR VALUES WITH (MODULUS 4, REMAINDER 0)" \
   -c "ALTER TABLE salted ATTACH PARTITION salted_0b FOR VALUES WITH (MODULUS 4, REMAINDER 2)" \
   -c "COMMIT" >/dev/null 2>"$dir/split.err"
t_is "$(co -c "SELECT string_agg(tableoid::regclass::text, ' ' ORDER BY tableoid::regclass::text) FROM (SELECT DISTINCT tableoid FROM salted) p")" \
     "salted_0a salted_0b salted_1" "a hash bucket split into two of modulus 4, one on each node" ||
    head -n 3 "$dir/split.err" | sed 's/^/#   /'
t_same "after the split" "SELECT * FROM {t}" salted
t_is "$(co -c "SELECT count(*) FROM ref r WHERE NOT EXISTS (SELECT 1 FROM salted s WHERE s.rowkey = r.rowkey AND s.ts = r.ts AND s.qualifier = r.qualifier)")" \
     0 "every cell is found by a point read pruned to its new bucket"

# --- a transaction over both data nodes committed atomically (doc/CLUSTER.md, "Atomic commit
# across nodes"): a transfer between two accounts, one on each node; each node's part is
# prepared (PREPARE TRANSACTION), then both are committed (COMMIT PREPARED), with n2 killed
# (-9) between the two commits and its prepared part committed after its restart; a second
# transfer fails on n2 after n1 prepared, and n1's part is rolled back.  The total through the
# coordinator never changes.
for n in n1 n2; do
    wc_node_psql $n -c "CREATE FOREIGN TABLE acct ($COLS) SERVER wide OPTIONS (families 'b')" \
                    -c "INSERT INTO acct VALUES ('acct-$n', 'b', 'balance', 1, '100')" ||
        t_bail "the account table on $n"
    co -c "CREATE FOREIGN TABLE acct_$n (rowkey text, family text, qualifier text, ts bigint, value text)
           SERVER $n OPTIONS (table_name 'acct')" || t_bail "acct_$n on the coordinator"
done
total() { co -c "SELECT sum(value::int) FROM (SELECT value FROM acct_n1 UNION ALL SELECT value FROM acct_n2) b"; }
part() {    # part NODE GID DELTA: the node's part of a transfer, prepared
    wc_node_psql "$1" -c "BEGIN" \
        -c "UPDATE acct SET value = (value::int + $3)::text WHERE rowkey = 'acct-$1'" \
        -c "PREPARE TRANSACTION '$2'"
}
part n1 xfer1-n1 -30 && part n2 xfer1-n2 30 || t_bail "both parts of transfer 1 prepared"
t_is "$(total) $(co -c "SELECT value FROM acct_n1")" "200 100" "both parts prepared: nothing of the transfer is seen yet"
wc_node_psql n1 -c "COMMIT PREPARED 'xfer1-n1'" >/dev/null || t_bail "COMMIT PREPARED on n1"
wc_node_kill9 n2
wc_node_start n2 || t_bail "n2 restarts after kill -9"
t_is "$(wc_node_psql n2 -c "SELECT gid FROM pg_prepared_xacts")" xfer1-n2 "after kill -9 and restart, n2's part is still prepared"
wc_node_psql n2 -c "COMMIT PREPARED 'xfer1-n2'" >/dev/null || t_bail "COMMIT PREPARED on n2 after its restart"
t_is "$(total) $(co -c "SELECT value FROM acct_n1") $(co -c "SELECT value FROM acct_n2")" "200 70 130" \
    "transfer 1 committed on both nodes"
part n1 xfer2-n1 -500 || t_bail "n1's part of transfer 2 prepared"
if wc_node_psql n2 -c "BEGIN" -c "UPDATE acct SET value = 'not a number'::int::text WHERE rowkey = 'acct-n2'" \
        -c "PREPARE TRANSACTION 'xfer2-n2'" >/dev/null 2>&1; then
    t_bail "n2's part of transfer 2 should have failed"
fi
wc_node_psql n1 -c "ROLLBACK PREPARED 'xfer2-n1'" >/dev/null || t_bail "ROLLBACK PREPARED on n1"
t_is "$(total) $(co -c "SELECT value FROM acct_n1") $(wc_node_psql n1 -c "SELECT count(*) FROM pg_prepared_xacts")" "200 70 0" \
    "transfer 2 failed on n2 and was rolled back on n1: nothing of it anywhere"

t_done
