// pgjdbc (Debian's libpostgresql-jdbc-java) against one compute node:
// DatabaseMetaData (tables, columns, primary keys, indexes),
// ResultSetMetaData, fetch size, batches and generated keys.
//
// Run by the cluster suite (`clients::jdbc`): compiled with javac and run
// as `java -cp postgresql.jar:DIR Jdbc URL USER PASSWORD`; prints one line
// per check and exits non-zero on the first failure.

import java.sql.*;
import java.util.*;

public class Jdbc {
    static void check(String what, Object got, Object expected) {
        if (!Objects.equals(got, expected)) {
            System.out.println("FAIL " + what + ": got " + got + ", expected " + expected);
            System.exit(1);
        }
        System.out.println("ok   " + what);
    }

    public static void main(String[] args) throws Exception {
        try (Connection c = DriverManager.getConnection(args[0], args[1], args[2])) {
            try (Statement s = c.createStatement()) {
                s.execute("DROP TABLE IF EXISTS jdbc_item");
                s.execute("CREATE TABLE jdbc_item (id serial PRIMARY KEY, name varchar(30) NOT NULL, price numeric(8,2), note text)");
                s.execute("CREATE INDEX jdbc_item_name ON jdbc_item (name)");
            }
            // Batches and generated keys.
            try (PreparedStatement p = c.prepareStatement(
                    "INSERT INTO jdbc_item (name, price) VALUES (?, ?)", Statement.RETURN_GENERATED_KEYS)) {
                for (int i = 1; i <= 5; i++) {
                    p.setString(1, "n" + i);
                    p.setBigDecimal(2, new java.math.BigDecimal(i + ".50"));
                    p.addBatch();
                }
                int[] counts = p.executeBatch();
                check("batch counts", Arrays.toString(counts), "[1, 1, 1, 1, 1]");
            }
            try (PreparedStatement p = c.prepareStatement(
                    "INSERT INTO jdbc_item (name) VALUES (?)", Statement.RETURN_GENERATED_KEYS)) {
                p.setString(1, "n6");
                p.executeUpdate();
                try (ResultSet k = p.getGeneratedKeys()) {
                    k.next();
                    check("generated key", k.getInt("id"), 6);
                }
            }
            DatabaseMetaData md = c.getMetaData();
            List<String> tables = new ArrayList<>();
            try (ResultSet r = md.getTables(null, "public", "jdbc_%", new String[] {"TABLE"})) {
                while (r.next()) tables.add(r.getString("TABLE_NAME") + ":" + r.getString("TABLE_TYPE"));
            }
            check("getTables", tables, List.of("jdbc_item:TABLE"));
            List<String> cols = new ArrayList<>();
            try (ResultSet r = md.getColumns(null, "public", "jdbc_item", null)) {
                while (r.next()) {
                    cols.add(r.getString("COLUMN_NAME") + " " + r.getString("TYPE_NAME") + "(" + r.getInt("COLUMN_SIZE")
                            + "," + r.getInt("DECIMAL_DIGITS") + ") " + r.getString("IS_NULLABLE"));
                }
            }
            check("getColumns", cols, List.of("id serial(10,0) NO", "name varchar(30,0) NO",
                    "price numeric(8,2) YES", "note text(2147483647,0) YES"));
            List<String> pk = new ArrayList<>();
            try (ResultSet r = md.getPrimaryKeys(null, "public", "jdbc_item")) {
                while (r.next()) pk.add(r.getString("COLUMN_NAME") + ":" + r.getString("PK_NAME"));
            }
            check("getPrimaryKeys", pk, List.of("id:jdbc_item_pkey"));
            List<String> ix = new ArrayList<>();
            try (ResultSet r = md.getIndexInfo(null, "public", "jdbc_item", false, false)) {
                while (r.next()) ix.add(r.getString("INDEX_NAME") + ":" + r.getString("COLUMN_NAME") + ":" + r.getBoolean("NON_UNIQUE"));
            }
            Collections.sort(ix);
            check("getIndexInfo", ix, List.of("jdbc_item_name:name:true", "jdbc_item_pkey:id:false"));
            // ResultSetMetaData: precision and scale from the type modifier.
            try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT id, name, price FROM jdbc_item ORDER BY id")) {
                ResultSetMetaData m = r.getMetaData();
                check("precision of numeric(8,2)", m.getPrecision(3) + "," + m.getScale(3), "8,2");
                check("length of varchar(30)", m.getColumnDisplaySize(2), 30);
                check("base table of a column", ((org.postgresql.PGResultSetMetaData) m).getBaseTableName(2), "jdbc_item");
            }
            // A fetch size: the portal is suspended and resumed.
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                s.setFetchSize(2);
                int n = 0;
                try (ResultSet r = s.executeQuery("SELECT id FROM jdbc_item ORDER BY id")) {
                    while (r.next()) n++;
                }
                check("rows read 2 at a time", n, 6);
            }
            c.commit();
            c.setAutoCommit(true);
            try (Statement s = c.createStatement()) {
                s.execute("DROP TABLE jdbc_item");
            }
        }
        System.out.println("all JDBC checks passed");
    }
}
