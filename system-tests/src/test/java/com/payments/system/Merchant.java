package com.payments.system;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;

import com.payments.infra.Postgres;
import com.payments.infra.QuarkusProcess;
import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;
import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.UUID;

/**
 * A merchant's calls to the payments-api process (REST Assured, pointed at it by {@link #use}) and the database
 * checks of the system tests: the helpers payments-api's tests have, over HTTP and JDBC.
 */
final class Merchant {
    /** The demo merchant A's test key (payments-api's test profile, docs/api.md). */
    static final String KEY_A = "sk_test_demo_merchant_a";

    private Merchant() {}

    /** REST Assured's requests go to this payments-api process from now on. */
    static void use(QuarkusProcess api) {
        RestAssured.baseURI = "http://127.0.0.1";
        RestAssured.port = api.port();
    }

    /**
     * The first PSP call of a cold JVM on a loaded machine can outlast the PSP timeout: warm the sandbox and the
     * service, then wait until a capture succeeds (the circuit breaker closed again), before a test counts calls.
     */
    static void warmUp(String pspUrl) {
        for (int i = 0; i < 20; i++) {
            psp(pspUrl)
                    .contentType(ContentType.JSON)
                    .header("Idempotency-Key", unique("warm"))
                    .body("{\"reference\":\"" + unique("warm")
                            + "\",\"amount\":1,\"currency\":\"EUR\",\"source\":\"tok_visa\"}")
                    .post("/v1/charges");
        }
        for (int i = 0; i < 5; i++) {
            capture(KEY_A, unique("warm"), body(unique("warm"), 1, "EUR", "tok_visa"));
        }
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(500))
                .until(() -> capture(KEY_A, unique("warm"), body(unique("warm"), 1, "EUR", "tok_visa"))
                                .statusCode()
                        == 201);
    }

    static String body(String orderId, long amount, String currency, String source) {
        return "{\"orderId\":\"" + orderId + "\",\"amount\":" + amount + ",\"currency\":\"" + currency
                + "\",\"source\":\"" + source + "\"}";
    }

    static RequestSpecification merchant(String apiKey) {
        return given().header("Authorization", "Bearer " + apiKey);
    }

    static Response capture(String apiKey, String idempotencyKey, String body) {
        return merchant(apiKey)
                .header("Idempotency-Key", idempotencyKey)
                .contentType(ContentType.JSON)
                .body(body)
                .post("/v1/payments");
    }

    static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID();
    }

    /** A request to the sandbox (its own port, not the application's). */
    static RequestSpecification psp(String pspUrl) {
        URI uri = URI.create(pspUrl);
        return given().baseUri(uri.getScheme() + "://" + uri.getHost()).port(uri.getPort());
    }

    /** Sets the sandbox's fault injection ({@code PUT /test/faults}; {@code DELETE} resets it). */
    static void pspFaults(String pspUrl, String json) {
        psp(pspUrl)
                .contentType(ContentType.JSON)
                .body(json)
                .put("/test/faults")
                .then()
                .statusCode(200);
    }

    /** The first column of the first row, as a number ({@code ?} placeholders). */
    static long count(Postgres.Database db, String sql, Object... args) {
        return Long.parseLong(text(db, sql, args));
    }

    /** The first column of the first row, as text ({@code ?} placeholders). */
    static String text(Postgres.Database db, String sql, Object... args) {
        try (Connection connection = DriverManager.getConnection(db.jdbcUrl(), db.user(), db.password());
                PreparedStatement statement = connection.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                statement.setObject(i + 1, args[i]);
            }
            try (ResultSet rows = statement.executeQuery()) {
                if (!rows.next()) {
                    throw new AssertionError("No row: " + sql);
                }
                return rows.getString(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    /** Runs one statement ({@code ?} placeholders). */
    static void execute(Postgres.Database db, String sql, Object... args) {
        try (Connection connection = DriverManager.getConnection(db.jdbcUrl(), db.user(), db.password());
                PreparedStatement statement = connection.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                statement.setObject(i + 1, args[i]);
            }
            statement.execute();
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }
}
