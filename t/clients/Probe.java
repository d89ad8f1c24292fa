import java.sql.*;
import java.util.*;

// Probe TABLE [URL-PARAMETERS]: what an application does through pgjdbc -- batched INSERTs,
// prepared statements past the driver's prepare threshold (server-side statements, then
// PostgreSQL's generic plans), UPDATE and DELETE by key, ranges with LIMIT, a fetch-size cursor
// with writes between its fetches, a batch that fails half-way, COPY in and out through the
// CopyManager, the driver's metadata -- printing every result, so that an ordinary table's
// output and a widecol table's can be compared line by line.  TABLE has the columns
// (rowkey varchar, f0 text, f1 text, n int, t timestamptz, b bytea, j jsonb, x numeric).
public class Probe {
    static java.io.PrintStream out = System.out;
    static void dump(ResultSet rs) throws SQLException {
        ResultSetMetaData md = rs.getMetaData();
        while (rs.next()) {
            StringBuilder sb = new StringBuilder();
            for (int i = 1; i <= md.getColumnCount(); i++) {
                if (i > 1) sb.append('|');
                Object o = rs.getObject(i);
                if (o instanceof byte[]) sb.append(Arrays.toString((byte[]) o));
                else sb.append(o);
            }
            out.println(sb);
        }
    }
    static void q(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) { dump(rs); }
    }
    public static void main(String[] a) throws Exception {
        String t = a[0];
        String url = "jdbc:postgresql://localhost:" + System.getenv("PGPORT") + "/" + System.getenv("PGDATABASE") + "?user=postgres" +
                     (a.length > 1 ? a[1] : "");
        try (Connection c = DriverManager.getConnection(url)) {
            try (Statement st = c.createStatement()) { st.execute("TRUNCATE " + t); }
            // batch insert, autocommit on
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + t + " (rowkey, f0, f1, n, t, b, j, x) VALUES (?,?,?,?,?,?,?::jsonb,?)")) {
                for (int i = 0; i < 50; i++) {
                    ps.setString(1, String.format("user%04d", i));
                    ps.setString(2, "a" + i);
                    if (i % 3 == 0) ps.setNull(3, Types.VARCHAR); else ps.setString(3, "b" + i);
                    ps.setInt(4, i * 7);
                    ps.setTimestamp(5, new Timestamp(1700000000000L + i * 1000L));
                    ps.setBytes(6, new byte[] { (byte) i, 0, (byte) 255 });
                    ps.setString(7, "{\"k" + i + "\": " + i + "}");
                    ps.setBigDecimal(8, new java.math.BigDecimal(i + ".50"));
                    ps.addBatch();
                }
                int[] r = ps.executeBatch();
                out.println("batch " + r.length + " " + Arrays.stream(r).sum());
            }
            // prepared reads past the prepare threshold (server-side statement, then generic plan)
            try (PreparedStatement ps = c.prepareStatement("SELECT * FROM " + t + " WHERE rowkey = ?")) {
                for (int i = 0; i < 12; i++) {
                    ps.setString(1, String.format("user%04d", (i * 13) % 55));
                    try (ResultSet rs = ps.executeQuery()) { dump(rs); }
                }
            }
            // updates by key past the threshold
            try (PreparedStatement ps = c.prepareStatement("UPDATE " + t + " SET f1 = ?, n = n + 1 WHERE rowkey = ?")) {
                for (int i = 0; i < 12; i++) {
                    ps.setString(1, i % 4 == 0 ? null : "u" + i);
                    ps.setString(2, String.format("user%04d", i * 3));
                    out.println("upd " + ps.executeUpdate());
                }
            }
            try (PreparedStatement ps = c.prepareStatement("UPDATE " + t + " SET f0 = ? WHERE rowkey = ?")) {
                for (int i = 0; i < 12; i++) {
                    ps.setString(1, "v" + i);
                    ps.setString(2, String.format("user%04d", i * 5));
                    out.println("upd2 " + ps.executeUpdate());
                }
            }
            // scans with a limit
            try (PreparedStatement ps = c.prepareStatement("SELECT rowkey, f0, n FROM " + t + " WHERE rowkey >= ? ORDER BY rowkey LIMIT ?")) {
                for (int i = 0; i < 8; i++) {
                    ps.setString(1, String.format("user%04d", i * 6));
                    ps.setInt(2, i + 1);
                    try (ResultSet rs = ps.executeQuery()) { dump(rs); }
                }
            }
            // fetch size with autocommit off: a suspended portal, writes in between
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement("SELECT rowkey, f0, f1, n FROM " + t + " ORDER BY rowkey")) {
                ps.setFetchSize(7);
                try (ResultSet rs = ps.executeQuery()) {
                    int k = 0;
                    while (rs.next()) {
                        out.println("fs " + rs.getString(1) + " " + rs.getString(2) + " " + rs.getString(3) + " " + rs.getInt(4));
                        if (k++ % 10 == 0)
                            try (Statement s2 = c.createStatement()) {
                                out.println("mid " + s2.executeUpdate("UPDATE " + t + " SET f0 = 'mid' || f0 WHERE rowkey > '" + rs.getString(1) + "'"));
                                out.println("ins " + s2.executeUpdate("INSERT INTO " + t + " (rowkey, f0) VALUES ('" + rs.getString(1) + "x', 'new')"));
                                out.println("del " + s2.executeUpdate("DELETE FROM " + t + " WHERE rowkey = (SELECT max(rowkey) FROM " + t + ")"));
                            }
                    }
                }
            }
            c.commit();
            // batch with an error in the middle: nothing of it stays
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + t + " (rowkey, n) VALUES (?, ?)")) {
                for (int i = 0; i < 5; i++) { ps.setString(1, i == 3 ? null : "z" + i); ps.setInt(2, i); ps.addBatch(); }
                ps.executeBatch();
            } catch (SQLException e) { out.println("batch error " + e.getSQLState()); c.rollback(); }
            c.setAutoCommit(true);
            q(c, "SELECT count(*), sum(n), string_agg(rowkey, ',' ORDER BY rowkey) FILTER (WHERE rowkey LIKE 'z%') FROM " + t);
            // deletes
            try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + t + " WHERE rowkey = ?")) {
                for (int i = 0; i < 12; i++) { ps.setString(1, String.format("user%04d", i * 4)); out.println("del " + ps.executeUpdate()); }
            }
            // COPY
            org.postgresql.copy.CopyManager cm = c.unwrap(org.postgresql.PGConnection.class).getCopyAPI();
            long n = cm.copyIn("COPY " + t + " (rowkey, f0, n) FROM STDIN", new java.io.StringReader("c1\tx\t1\nc2\t\\N\t2\nc3\ty\t\\N\n"));
            out.println("copy " + n);
            java.io.StringWriter sw = new java.io.StringWriter();
            cm.copyOut("COPY (SELECT rowkey, f0, f1, n, t, b, j, x FROM " + t + " ORDER BY rowkey) TO STDOUT", sw);
            out.print(sw);
            // a batch of puts if absent (as ORMs' bulk inserts that ignore conflicts)
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + t + " (rowkey, f0, n) VALUES (?, ?, ?) ON CONFLICT DO NOTHING")) {
                for (int i = 0; i < 12; i++) {
                    ps.setString(1, i % 3 == 0 ? "c" + (1 + i / 3) : String.format("ic%02d", i / 2));
                    ps.setString(2, "ic" + i);
                    ps.setInt(3, i);
                    ps.addBatch();
                }
                out.println("if absent " + Arrays.toString(ps.executeBatch()));
            }
            // metadata the way tools ask for it
            DatabaseMetaData md = c.getMetaData();
            try (ResultSet rs = md.getColumns(null, "public", t, null)) {
                while (rs.next()) out.println("col " + rs.getString("COLUMN_NAME") + " " + rs.getString("TYPE_NAME") + " " + rs.getInt("DATA_TYPE"));
            }
            q(c, "SELECT * FROM " + t + " ORDER BY rowkey");
        }
    }
}
