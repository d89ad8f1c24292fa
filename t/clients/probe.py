# probe.py TABLE: what an application does through psycopg 3 -- executemany (with RETURNING),
# pipeline mode, binary COPY in and out, a scrollable server-side cursor with writes and a
# rolled-back savepoint between its fetches, statements past the driver's prepare threshold and
# generic plans, errors -- printing every result, so that an ordinary table's output and a
# widecol table's can be compared line by line.  TABLE as for Probe.java.
import sys, os, psycopg, datetime, decimal
from psycopg.types.json import Jsonb
t = sys.argv[1]
out = []
def p(*a): out.append(" ".join(str(x) for x in a))
with psycopg.connect(autocommit=True) as c:    # PGHOST, PGPORT, PGDATABASE, PGUSER
    c.execute(f"TRUNCATE {t}")
    rows = [(f"k{i:03d}", f"a{i}", None if i % 4 == 0 else f"b{i}", i, datetime.datetime(2024,1,1,tzinfo=datetime.timezone.utc)+datetime.timedelta(minutes=i), bytes([i, 0, 200]), Jsonb({"q": i, "s": "x"}), decimal.Decimal(f"{i}.25")) for i in range(40)]
    with c.cursor() as cur:
        cur.executemany(f"INSERT INTO {t} VALUES (%s,%s,%s,%s,%s,%s,%s,%s)", rows)
        p("executemany", cur.rowcount)
        cur.executemany(f"UPDATE {t} SET n = n * 10 WHERE rowkey = %s RETURNING rowkey, n", [(f"k{i:03d}",) for i in range(0, 40, 7)], returning=True)
        while True:
            p("ret", cur.fetchall())
            if not cur.nextset(): break
    # pipeline mode: the statements go out before any result comes back
    with c.pipeline():
        cur = c.cursor()
        for i in range(10):
            cur.execute(f"UPDATE {t} SET f0 = %s WHERE rowkey = %s", (f"pipe{i}", f"k{i*3:03d}"))
        cur2 = c.execute(f"SELECT rowkey, f0 FROM {t} WHERE rowkey = ANY(%s) ORDER BY rowkey",
                         ([f"k{i:03d}" for i in range(0, 30, 3)],))
    p("pipe", cur2.fetchall())
    # binary copy in and out
    with c.cursor() as cur:
        with cur.copy(f"COPY {t} (rowkey, f0, n, b, j) FROM STDIN (FORMAT BINARY)") as cp:
            cp.set_types(["varchar", "text", "int4", "bytea", "jsonb"])
            for i in range(5):
                cp.write_row((f"bin{i}", f"B{i}", i, bytes([i]), Jsonb({"b": i})))
        with cur.copy(f"COPY (SELECT * FROM {t} ORDER BY rowkey) TO STDOUT (FORMAT BINARY)") as cp:
            cp.set_types(["varchar", "text", "text", "int4", "timestamptz", "bytea", "jsonb", "numeric"])
            n = 0
            for row in cp.rows():
                n += 1
                if n % 9 == 0: p("copyrow", row[:5], bytes(row[5]).hex() if row[5] is not None else None, row[6:])
            p("copied", n)
    # server-side cursor in a transaction, with writes and a savepoint
    with c.transaction():
        with c.cursor(name="sc", scrollable=True) as cur:
            cur.execute(f"SELECT rowkey, f0, n FROM {t} WHERE rowkey >= 'k010' ORDER BY rowkey")
            p("first", cur.fetchmany(3))
            c.execute(f"DELETE FROM {t} WHERE rowkey >= 'k010' AND rowkey < 'k020'")
            try:
                with c.transaction():
                    c.execute(f"UPDATE {t} SET n = -1")
                    raise RuntimeError("undo")
            except RuntimeError:
                pass
            p("more", cur.fetchmany(4))
            cur.scroll(-2)
            p("back", cur.fetchmany(3))
            cur.scroll(0, mode="absolute")
            p("abs", cur.fetchone())
        p("after", c.execute(f"SELECT count(*), sum(n) FROM {t}").fetchone())
    # auto-prepared statements (prepare_threshold 5) and a generic plan
    for i in range(15):
        r = c.execute(f"SELECT rowkey, n FROM {t} WHERE rowkey = %s AND n > %s", (f"k{i*2:03d}", i)).fetchall()
        p("prep", i, r)
    c.execute("SET plan_cache_mode = force_generic_plan")
    for i in range(6):
        r = c.execute(f"SELECT rowkey FROM {t} WHERE rowkey > %s ORDER BY rowkey LIMIT %s", (f"k{i*5:03d}", 2)).fetchall()
        p("gen", r)
    # errors
    for sql, args in [(f"INSERT INTO {t} (rowkey, n) VALUES (%s, %s)", ("e1", "notint")),
                      (f"INSERT INTO {t} (rowkey, j) VALUES (%s, %s::jsonb)", ("e2", "{no json")),
                      (f"UPDATE {t} SET n = n / %s WHERE rowkey = %s", (0, "k001")),
                      (f"INSERT INTO {t} (rowkey) VALUES (%s)", (None,))]:
        try:
            c.execute(sql, args)
            p("noerr", sql)
        except psycopg.Error as e:
            p("err", e.sqlstate)
    p("final", c.execute(f"SELECT count(*), sum(n), string_agg(rowkey, ',' ORDER BY rowkey) FROM {t}").fetchone())
print("\n".join(out))
