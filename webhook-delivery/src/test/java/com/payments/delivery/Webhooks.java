package com.payments.delivery;

import com.payments.contracts.webhooks.WebhookSecretCipher;
import com.payments.infra.QuarkusProcess;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import org.eclipse.microprofile.config.ConfigProvider;

/**
 * The rows payments-api writes (merchants, endpoints, secrets, the events feed) inserted directly, and reads of what
 * webhook-delivery wrote; over JDBC, so the tests of the packaged service use it too.
 */
final class Webhooks implements AutoCloseable {
    private static final SecureRandom RANDOM = new SecureRandom();
    /** The keys of webhook-delivery under test: its %test profile's, which QuarkusProcess gives packaged ones too. */
    static final WebhookSecretCipher KEYS = WebhookSecretCipher.of(QuarkusProcess.TEST_WEBHOOK_SECRETS_KEYS);

    private final Connection sql;

    /** The database of the application under test (@QuarkusTest: its datasource settings). */
    static Webhooks ofRunningApplication() {
        var config = ConfigProvider.getConfig();
        return new Webhooks(
                config.getValue("quarkus.datasource.jdbc.url", String.class),
                config.getValue("quarkus.datasource.username", String.class),
                config.getOptionalValue("quarkus.datasource.password", String.class)
                        .orElse(""));
    }

    Webhooks(String jdbcUrl, String user, String password) {
        try {
            sql = DriverManager.getConnection(jdbcUrl, user, password);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    static String newSecret() {
        byte[] key = new byte[32];
        RANDOM.nextBytes(key);
        return "whsec_" + Base64.getEncoder().encodeToString(key);
    }

    UUID merchant() {
        return scalar("INSERT INTO merchants (name) VALUES ('webhook tests') RETURNING id", UUID.class);
    }

    /** An ENABLED endpoint with one current secret, which it returns with the endpoint's id. */
    record Endpoint(UUID id, String secret) {}

    Endpoint endpoint(UUID merchant, String url, String... types) {
        UUID id = UUID.randomUUID();
        update(
                "INSERT INTO webhook_endpoints (id, merchant_id, url, event_types) VALUES (?, ?, ?, ?)",
                id,
                merchant,
                url,
                types);
        String secret = newSecret();
        sealed(id, secret, KEYS);
        return new Endpoint(id, secret);
    }

    /** A current secret row as payments-api writes it: sealed with {@code keys}' current key. Returns the row's id. */
    UUID sealed(UUID endpoint, String secret, WebhookSecretCipher keys) {
        return sealed(endpoint, secret, keys, null);
    }

    /** As {@link #sealed(UUID, String, WebhookSecretCipher)}, expiring in {@code expiresIn} (an SQL interval). */
    UUID sealed(UUID endpoint, String secret, WebhookSecretCipher keys, String expiresIn) {
        UUID row = UUID.randomUUID();
        WebhookSecretCipher.Sealed sealed = keys.seal(endpoint, row, secret);
        update(
                "INSERT INTO webhook_endpoint_secrets (id, endpoint_id, key_id, ciphertext, expires_at)"
                        + " VALUES (?, ?, ?, ?, now() + ?::interval)",
                row,
                endpoint,
                sealed.keyId(),
                sealed.ciphertext(),
                expiresIn);
        return row;
    }

    /** An event in the merchants' feed (as the outbox trigger writes it); returns its payload. */
    String event(UUID eventId, UUID merchant, String type) {
        UUID payment = UUID.randomUUID();
        String payload = "{\"eventId\": \"" + eventId + "\", \"type\": \"" + type + "\", \"paymentId\": \""
                + payment + "\", \"merchantId\": \"" + merchant
                + "\", \"amount\": 2500, \"currency\": \"EUR\","
                + " \"metadata\": {\"order\": \"o-1\"}}";
        update(
                "INSERT INTO merchant_events (id, merchant_id, type, payload, created_at, payment_id, version, payment)"
                        + " VALUES (?, ?, ?, ?::jsonb, clock_timestamp(), ?, 1, jsonb_build_object('id', ?::text,"
                        + " 'status', 'CAPTURED', 'amount', 2500, 'currency', 'EUR', 'refundedAmount', 0))",
                eventId,
                merchant,
                type,
                payload,
                payment,
                payment.toString());
        return payload;
    }

    /** A due 'redeliver' delivery of the event to the endpoint, as payments-api's redeliver writes it. */
    UUID delivery(UUID endpoint, UUID merchant, UUID event) {
        UUID id = UUID.randomUUID();
        update(
                "INSERT INTO webhook_deliveries (id, endpoint_id, event_id, merchant_id, origin, next_attempt_at)"
                        + " VALUES (?, ?, ?, ?, 'redeliver', now())",
                id,
                endpoint,
                event,
                merchant);
        return id;
    }

    String status(UUID delivery) {
        return scalar("SELECT status FROM webhook_deliveries WHERE id = ?", String.class, delivery);
    }

    long count(String query, Object... args) {
        return scalar(query, Long.class, args);
    }

    List<Map<String, Object>> rows(String query, Object... args) {
        return query(
                query,
                rs -> {
                    try {
                        Map<String, Object> row = new java.util.LinkedHashMap<>();
                        for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
                            boolean timestamp =
                                    rs.getMetaData().getColumnTypeName(i).equals("timestamptz");
                            row.put(
                                    rs.getMetaData().getColumnLabel(i),
                                    timestamp ? rs.getObject(i, java.time.OffsetDateTime.class) : rs.getObject(i));
                        }
                        return row;
                    } catch (SQLException e) {
                        throw new IllegalStateException(e);
                    }
                },
                args);
    }

    <T> T scalar(String query, Class<T> type, Object... args) {
        List<T> values = query(
                query,
                rs -> {
                    try {
                        return rs.getObject(1, type);
                    } catch (SQLException e) {
                        throw new IllegalStateException(e);
                    }
                },
                args);
        return values.isEmpty() ? null : values.get(0);
    }

    void update(String query, Object... args) {
        try (PreparedStatement st = prepare(query, args)) {
            st.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private <T> List<T> query(String query, Function<ResultSet, T> map, Object... args) {
        try (PreparedStatement st = prepare(query, args);
                ResultSet rs = st.executeQuery()) {
            List<T> out = new ArrayList<>();
            while (rs.next()) {
                out.add(map.apply(rs));
            }
            return out;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private PreparedStatement prepare(String query, Object... args) throws SQLException {
        PreparedStatement st = sql.prepareStatement(query);
        for (int i = 0; i < args.length; i++) {
            if (args[i] instanceof String[] array) {
                st.setArray(i + 1, sql.createArrayOf("text", array));
            } else {
                st.setObject(i + 1, args[i]);
            }
        }
        return st;
    }

    @Override
    public void close() throws SQLException {
        sql.close();
    }
}
