import java.sql.*;
import java.util.*;

// Ycsb SCHEMA OPS: the statements of YCSB's JDBC binding (JdbcDBClient, its default flavour),
// as it sends them, over a seeded random sequence of operations on schema SCHEMA's usertable;
// prints every result, so two schemas' outputs can be compared line by line.
public class Ycsb {
    static final int FIELDS = 10;

    public static void main(String[] a) throws Exception {
        String schema = a[0];
        int ops = Integer.parseInt(a[1]);
        String url = "jdbc:postgresql://localhost:" + System.getenv("PGPORT") + "/" + System.getenv("PGDATABASE") +
                     "?user=postgres&currentSchema=" + schema;
        Random r = new Random(42);
        StringBuilder cols = new StringBuilder("YCSB_KEY"), qs = new StringBuilder("?");
        for (int i = 0; i < FIELDS; i++) { cols.append(",FIELD").append(i); qs.append(",?"); }
        try (Connection c = DriverManager.getConnection(url)) {
            c.setAutoCommit(true);
            try (Statement s = c.createStatement()) { s.execute("DELETE FROM usertable"); }
            PreparedStatement ins = c.prepareStatement("INSERT INTO usertable (" + cols + ") VALUES (" + qs + ")");
            PreparedStatement read = c.prepareStatement("SELECT * FROM usertable WHERE YCSB_KEY = ?");
            PreparedStatement scan = c.prepareStatement("SELECT * FROM usertable WHERE YCSB_KEY >= ? ORDER BY YCSB_KEY LIMIT ?");
            PreparedStatement del = c.prepareStatement("DELETE FROM usertable WHERE YCSB_KEY = ?");
            Map<String, PreparedStatement> updates = new HashMap<>();
            int records = 0;
            // the load phase: batched inserts, as db.batchsize does, committed per batch
            c.setAutoCommit(false);
            for (; records < 300; records++) {
                ins.setString(1, key(records));
                for (int f = 0; f < FIELDS; f++) ins.setString(2 + f, value(r));
                ins.addBatch();
                if (records % 50 == 49) { ins.executeBatch(); c.commit(); }
            }
            c.setAutoCommit(true);
            for (int op = 0; op < ops; op++) {
                int kind = r.nextInt(100);
                String k = key(r.nextInt(records + 20));   // now and then a key that is not there
                if (kind < 40) {
                    read.setString(1, k);
                    try (ResultSet rs = read.executeQuery()) { print(op, "read", rs); }
                } else if (kind < 70) {
                    // writeallfields=false: one field; sometimes several (the SET list in field order)
                    int n = kind < 65 ? 1 : 3;
                    TreeSet<Integer> fs = new TreeSet<>();
                    while (fs.size() < n) fs.add(r.nextInt(FIELDS));
                    StringBuilder set = new StringBuilder();
                    for (int f : fs) set.append(set.length() > 0 ? ", " : "").append("FIELD").append(f).append("=?");
                    String sql = "UPDATE usertable SET " + set + " WHERE YCSB_KEY = ?";
                    PreparedStatement u = updates.computeIfAbsent(sql, s -> { try { return c.prepareStatement(s); } catch (SQLException e) { throw new RuntimeException(e); } });
                    int p = 1;
                    for (int f : fs) u.setString(p++, value(r));
                    u.setString(p, k);
                    System.out.println(op + " update " + k + " " + u.executeUpdate());
                } else if (kind < 85) {
                    scan.setString(1, k);
                    scan.setInt(2, 1 + r.nextInt(12));
                    try (ResultSet rs = scan.executeQuery()) { print(op, "scan", rs); }
                } else if (kind < 95) {
                    ins.setString(1, key(records++));
                    for (int f = 0; f < FIELDS; f++) ins.setString(2 + f, value(r));
                    System.out.println(op + " insert " + ins.executeUpdate());
                } else {
                    del.setString(1, k);
                    System.out.println(op + " delete " + k + " " + del.executeUpdate());
                }
            }
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
                     "SELECT count(*), md5(string_agg(YCSB_KEY || ':' || concat_ws(',', FIELD0, FIELD1, FIELD2, FIELD3, " +
                     "FIELD4, FIELD5, FIELD6, FIELD7, FIELD8, FIELD9), ';' ORDER BY YCSB_KEY)) FROM usertable")) {
                print(ops, "final", rs);
            }
        }
    }

    // YCSB's keys: "user" + a hash of the sequence number (insertorder=hashed)
    static String key(int n) { return "user" + Long.toUnsignedString((n * 0x9E3779B97F4A7C15L) >>> 20); }

    static String value(Random r) {
        char[] s = new char[20 + r.nextInt(80)];
        for (int i = 0; i < s.length; i++) s[i] = (char) (' ' + r.nextInt(95));
        return new String(s);
    }

    static void print(int op, String what, ResultSet rs) throws SQLException {
        ResultSetMetaData md = rs.getMetaData();
        int rows = 0;
        StringBuilder sb = new StringBuilder();
        while (rs.next()) {
            rows++;
            for (int i = 1; i <= md.getColumnCount(); i++)
                sb.append(i > 1 ? "|" : (rows > 1 ? "\n  " : "  ")).append(md.getColumnLabel(i)).append('=').append(rs.getString(i));
        }
        System.out.println(op + " " + what + " " + rows + (rows > 0 ? "\n" + sb : ""));
    }
}
