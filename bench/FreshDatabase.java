// For bench scripts: creates a database on the PostgreSQL server of PAYMENTS_PG_* (start_infra exports them), migrates
// it with Flyway exactly as the tests do (local-infra's Postgres.freshDatabase: the migrations of contracts, the
// application role's grants included) and prints its name as the last line. Run as a single source file:
//   java -cp local-infra/target/classes:<local-infra's class path>:contracts/target/classes bench/FreshDatabase.java PREFIX
public final class FreshDatabase {
    public static void main(String[] args) {
        System.out.println(com.payments.infra.Postgres.freshDatabase(args[0]).name());
    }
}
