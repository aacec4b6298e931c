package com.payments.api.console;

import com.payments.api.config.ApiConfig;
import com.payments.api.config.ConsoleConfig;
import com.payments.api.operations.OperatorAuditRepository;
import com.payments.api.operations.OperatorAuditRepository.Entry;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Console logins (table console_sessions, V82). The operator proves the operator token once and gets a random session
 * id in a cookie; only its SHA-256 is stored, with the operator's name and the session's CSRF token. Logout and
 * expiry end a session for every replica at once.
 */
@ApplicationScoped
public class ConsoleSessions {
    /** Names an operator may log in with: what the audit's "who" shows. */
    static final Pattern OPERATOR_NAME = Pattern.compile("[A-Za-z0-9._@-]{1,100}");

    /** A live session. */
    public record Session(String operator, String csrfToken) {}

    /** A new session: the cookie value to hand out (never stored) and the session. */
    public record Login(String cookieValue, Session session) {}

    private final Pool pool;
    private final OperatorAuditRepository audit;
    private final Optional<byte[]> token;
    private final ConsoleConfig config;

    public ConsoleSessions(Pool pool, OperatorAuditRepository audit, ApiConfig api, ConsoleConfig config) {
        this.pool = pool;
        this.audit = audit;
        this.token = api.admin().token().filter(t -> !t.isBlank()).map(t -> t.getBytes(StandardCharsets.UTF_8));
        this.config = config;
    }

    /** True when {@code given} is the operator token (constant time); false when none is configured. */
    boolean isOperatorToken(String given) {
        return token.isPresent()
                && given != null
                && MessageDigest.isEqual(token.get(), given.getBytes(StandardCharsets.UTF_8));
    }

    /** Starts a session for an operator who gave the right token, audited; expired sessions are purged here. */
    public Uni<Login> start(String operator, String client) {
        String cookie = randomToken();
        Session session = new Session(operator, randomToken());
        OffsetDateTime expires = OffsetDateTime.now(ZoneOffset.UTC).plus(config.sessionTtl());
        return pool.withTransaction(conn -> conn.preparedQuery(
                                "DELETE FROM console_sessions WHERE expires_at < now() - interval '1 day'")
                        .execute()
                        .flatMap(purged -> conn.preparedQuery(
                                        """
                                        INSERT INTO console_sessions (id_hash, operator, csrf_token, expires_at)
                                        VALUES ($1, $2, $3, $4)""")
                                .execute(Tuple.of(sha256(cookie), operator, session.csrfToken(), expires)))
                        .flatMap(inserted ->
                                audit.record(conn, new Entry(operator, "console", "login", null, null, client))))
                .replaceWith(new Login(cookie, session));
    }

    /** Audits a refused login (wrong token) under the name that was given. */
    public Uni<Void> refused(String operator, String client) {
        String who = operator != null && OPERATOR_NAME.matcher(operator).matches() ? operator : "(invalid name)";
        return audit.record(pool, new Entry(who, "console", "login_refused", null, null, client));
    }

    /** The live session of this cookie, or null (none, unknown, ended or expired). */
    public Uni<Session> find(String cookie) {
        if (cookie == null || cookie.isEmpty() || cookie.length() > 100) {
            return Uni.createFrom().nullItem();
        }
        return pool.preparedQuery(
                        """
                        SELECT operator, csrf_token FROM console_sessions
                         WHERE id_hash = $1 AND ended_at IS NULL AND expires_at > now()""")
                .execute(Tuple.of(sha256(cookie)))
                .map(rows -> rows.rowCount() == 0
                        ? null
                        : new Session(
                                rows.iterator().next().getString("operator"),
                                rows.iterator().next().getString("csrf_token")));
    }

    /** Ends the session of this cookie, audited. */
    public Uni<Void> end(String cookie, Session session, String client) {
        return pool.withTransaction(conn -> conn.preparedQuery(
                                "UPDATE console_sessions SET ended_at = now() WHERE id_hash = $1 AND ended_at IS NULL")
                        .execute(Tuple.of(sha256(cookie)))
                        .flatMap(ended -> audit.record(
                                conn, new Entry(session.operator(), "console", "logout", null, null, client))))
                .replaceWithVoid();
    }

    /** Constant-time comparison of a form's CSRF token with the expected one. */
    static boolean sameToken(String expected, String given) {
        return expected != null
                && given != null
                && MessageDigest.isEqual(
                        expected.getBytes(StandardCharsets.UTF_8), given.getBytes(StandardCharsets.UTF_8));
    }

    static String randomToken() {
        byte[] bytes = new byte[32];
        // No static SecureRandom: the native build initializes this class at build time and refuses a seeded
        // generator in the image. A new instance is cheap: it draws from the operating system's (NativePRNG).
        new SecureRandom().nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    private static byte[] sha256(String value) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
