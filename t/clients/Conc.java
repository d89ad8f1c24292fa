import java.sql.*;
import java.util.*;
import java.util.concurrent.atomic.*;

// Conc TABLE THREADS SECONDS: transfers between rows from several JDBC connections (FOR UPDATE,
// n = n + d, UPDATE ... WHERE CURRENT OF a cursor FOR UPDATE), puts if absent of rows that are
// there; the sum of n never changes, and every statement and snapshot must see it whole.
public class Conc {
    static final int ROWS = 100, START = 100;
    static String url, t;
    static int[] OPS = Arrays.stream(Optional.ofNullable(System.getenv("OPS")).orElse("0,1,2,3,4,5,6,7").split(",")).mapToInt(Integer::parseInt).toArray();
    static final AtomicLong transfers = new AtomicLong(), checks = new AtomicLong(), retries = new AtomicLong(),
        batches = new AtomicLong();
    static final List<String> errors = Collections.synchronizedList(new ArrayList<>());

    static String key(int i) { return String.format("acct%03d", i); }

    static void check(long sum, long count, String what) {
        checks.incrementAndGet();
        if (sum != (long) ROWS * START || count != ROWS)
            errors.add(what + ": sum " + sum + " count " + count);
    }

    static void work(int id, long until) throws Exception {
        Random r = new Random(id * 7919L);
        try (Connection c = DriverManager.getConnection(url)) {
            PreparedStatement lock = c.prepareStatement("SELECT n FROM " + t + " WHERE rowkey = ? FOR UPDATE");
            PreparedStatement add = c.prepareStatement("UPDATE " + t + " SET n = n + ? WHERE rowkey = ?");
            PreparedStatement set = c.prepareStatement("UPDATE " + t + " SET n = ? WHERE rowkey = ?");
            PreparedStatement note = c.prepareStatement("UPDATE " + t + " SET f0 = ? WHERE rowkey = ?");
            PreparedStatement sum = c.prepareStatement("SELECT sum(n), count(*) FROM " + t);
            PreparedStatement scan = c.prepareStatement("SELECT rowkey, n FROM " + t + " WHERE rowkey >= ? ORDER BY rowkey");
            while (System.currentTimeMillis() < until) {
                int op = OPS[r.nextInt(OPS.length)];
                int a = r.nextInt(ROWS), b = r.nextInt(ROWS - 1);
                if (b >= a) b++;
                int d = 1 + r.nextInt(5);
                try {
                    switch (op) {
                    case 0: { // read-modify-write under FOR UPDATE, keys in order, either isolation level
                        c.setAutoCommit(false);
                        c.setTransactionIsolation(r.nextBoolean() ? Connection.TRANSACTION_READ_COMMITTED
                                                                  : Connection.TRANSACTION_REPEATABLE_READ);
                        int lo = Math.min(a, b), hi = Math.max(a, b);
                        int[] v = new int[2];
                        int[] ks = { lo, hi };
                        for (int i = 0; i < 2; i++) {
                            lock.setString(1, key(ks[i]));
                            try (ResultSet rs = lock.executeQuery()) { rs.next(); v[i] = rs.getInt(1); }
                        }
                        set.setInt(1, v[0] - d); set.setString(2, key(lo)); set.executeUpdate();
                        set.setInt(1, v[1] + d); set.setString(2, key(hi)); set.executeUpdate();
                        c.commit();
                        transfers.incrementAndGet();
                        break;
                    }
                    case 1: { // two increments in READ COMMITTED, no explicit lock (the row is re-read)
                        c.setAutoCommit(false);
                        c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
                        add.setInt(1, -d); add.setString(2, key(a));
                        if (add.executeUpdate() != 1) errors.add("update of " + key(a) + " changed no row");
                        add.setInt(1, d); add.setString(2, key(b));
                        if (add.executeUpdate() != 1) errors.add("update of " + key(b) + " changed no row");
                        c.commit();
                        transfers.incrementAndGet();
                        break;
                    }
                    case 2: { // one statement
                        c.setAutoCommit(true);
                        try (ResultSet rs = sum.executeQuery()) { rs.next(); check(rs.getLong(1), rs.getLong(2), "sum"); }
                        break;
                    }
                    case 3: { // a snapshot: two statements of one REPEATABLE READ transaction
                        c.setAutoCommit(false);
                        c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
                        long s1, s2;
                        try (ResultSet rs = sum.executeQuery()) { rs.next(); s1 = rs.getLong(1); check(s1, rs.getLong(2), "rr sum"); }
                        scan.setString(1, key(0));
                        scan.setFetchSize(9);
                        s2 = 0;
                        long n = 0;
                        try (ResultSet rs = scan.executeQuery()) { while (rs.next()) { s2 += rs.getInt(2); n++; } }
                        check(s2, n, "rr scan");
                        c.commit();
                        break;
                    }
                    case 4: { // a batch of direct updates of a column the sum does not read
                        c.setAutoCommit(true);
                        for (int i = 0; i < 8; i++) {
                            note.setString(1, "t" + id + "-" + i); note.setString(2, key(r.nextInt(ROWS)));
                            note.addBatch();
                        }
                        for (int x : note.executeBatch()) if (x != 1) errors.add("batch update count " + x);
                        batches.incrementAndGet();
                        break;
                    }
                    case 6: { // a transfer through a cursor FOR UPDATE: UPDATE ... WHERE CURRENT OF
                        c.setAutoCommit(false);
                        c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
                        int lo = Math.min(a, b), hi = Math.max(a, b);
                        try (Statement s = c.createStatement()) {
                            s.execute("DECLARE cur CURSOR FOR SELECT rowkey, n FROM " + t + " WHERE rowkey IN ('" +
                                      key(lo) + "', '" + key(hi) + "') ORDER BY rowkey FOR UPDATE");
                            for (int i = 0; i < 2; i++) {
                                try (ResultSet rs = s.executeQuery("FETCH 1 FROM cur")) {
                                    if (!rs.next()) { errors.add("cursor lost a row"); break; }
                                }
                                if (s.executeUpdate("UPDATE " + t + " SET n = n " + (i == 0 ? "- " : "+ ") + d +
                                                    " WHERE CURRENT OF cur") != 1)
                                    errors.add("UPDATE WHERE CURRENT OF changed no row");
                            }
                            s.execute("CLOSE cur");
                        }
                        c.commit();
                        transfers.incrementAndGet();
                        break;
                    }
                    case 7: { // a put if absent of a row that is there: nothing written
                        c.setAutoCommit(true);
                        try (Statement s = c.createStatement()) {
                            int x = s.executeUpdate("INSERT INTO " + t + " (rowkey, n, f0) VALUES ('" + key(a) +
                                                    "', 1000, 'absent?') ON CONFLICT DO NOTHING");
                            if (x != 0) errors.add("INSERT ... ON CONFLICT DO NOTHING of " + key(a) + " inserted " + x);
                        }
                        break;
                    }
                    default: { // a fetch-size cursor in READ COMMITTED: one snapshot for the whole scan
                        c.setAutoCommit(false);
                        c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
                        scan.setString(1, key(0));
                        scan.setFetchSize(5);
                        long s = 0, n = 0;
                        try (ResultSet rs = scan.executeQuery()) { while (rs.next()) { s += rs.getInt(2); n++; } }
                        check(s, n, "cursor");
                        c.commit();
                        break;
                    }
                    }
                } catch (SQLException e) {
                    String st = e.getSQLState();
                    if (!"40001".equals(st) && !"40P01".equals(st))
                        errors.add("op " + op + ": " + st + " " + e.getMessage());
                    retries.incrementAndGet();
                    if (!c.getAutoCommit()) c.rollback();
                }
            }
        }
    }

    public static void main(String[] a) throws Exception {
        t = a[0];
        int threads = Integer.parseInt(a[1]);
        long secs = Long.parseLong(a[2]);
        url = "jdbc:postgresql://localhost:" + System.getenv("PGPORT") + "/" + System.getenv("PGDATABASE") + "?user=postgres";
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            s.execute("TRUNCATE " + t);
            s.execute("INSERT INTO " + t + " (rowkey, n, f0) SELECT format('acct%s', lpad(i::text, 3, '0')), " + START +
                      ", 'x' FROM generate_series(0, " + (ROWS - 1) + ") i");
        }
        long until = System.currentTimeMillis() + secs * 1000;
        List<Thread> ts = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            final int id = i;
            Thread th = new Thread(() -> {
                try { work(id, until); } catch (Exception e) { errors.add("thread " + id + ": " + e); }
            });
            th.start();
            ts.add(th);
        }
        for (Thread th : ts) th.join();
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT sum(n), count(*), count(*) FILTER (WHERE f0 IS NULL) FROM " + t)) {
            rs.next();
            check(rs.getLong(1), rs.getLong(2), "final");
            if (rs.getLong(3) != 0) errors.add("rows without f0: " + rs.getLong(3));
        }
        System.out.println(t + ": transfers " + transfers + " checks " + checks + " batches " + batches +
                           " retried " + retries + " errors " + errors.size());
        for (String e : errors.subList(0, Math.min(10, errors.size()))) System.out.println("  " + e);
        System.exit(errors.isEmpty() ? 0 : 1);
    }
}
