package com.payments.api;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Manual-capture payments (issue 42) in the operator console, written by the test through the schema's state machine
 * (V98) as the services write them: lists and the payment page show the capture method, the authorized and the
 * captured amount and the state; a payment's timeline shows its authorization and then its capture or void; the live
 * page counts a manual payment's PSP call whose outcome is unknown or that is stuck with the unresolved payments.
 */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "8s"),
        scope = TestResourceScope.GLOBAL)
class ConsoleManualCaptureTest {
    private static final Pattern CELLS = Pattern.compile("<td[^>]*>(.*?)</td>", Pattern.DOTALL);

    @Inject
    Pool pool;

    @Test
    void theLookupAndAPaymentsStoryShowTheAuthorizationAndItsCaptureOrVoid() {
        String order = TestSupport.unique("manual");
        UUID merchant = merchant();
        UUID captured = manual(merchant, order, "AUTHORIZED", "CAPTURING", "CAPTURED");
        UUID canceled = manual(merchant, order, "AUTHORIZED", "CANCELING", "CANCELED");
        UUID expired = manual(merchant, order, "AUTHORIZED", "EXPIRING", "EXPIRED");
        UUID automatic = insert(merchant, order, "AUTOMATIC", 1234);
        exec("UPDATE payments SET status = 'CAPTURED', psp_reference = 'ch_" + automatic + "', captured_at = now()"
                + " WHERE id = '" + automatic + "'");
        String session = login("grace");

        String lookup = given().cookie("console_session", session)
                .get("/console/payments?q=" + order)
                .then()
                .statusCode(200)
                .extract()
                .asString();
        Map<String, String> rows = rows(lookup);
        assertThat(rows).hasSize(4);
        // status, capture method, amount (authorized), captured
        assertThat(rows.get(captured.toString())).startsWith("CAPTURED|MANUAL|10.00 EUR|6.00 EUR|");
        assertThat(rows.get(canceled.toString())).startsWith("CANCELED|MANUAL|10.00 EUR|-|");
        assertThat(rows.get(expired.toString())).startsWith("EXPIRED|MANUAL|10.00 EUR|-|");
        assertThat(rows.get(automatic.toString())).startsWith("CAPTURED|AUTOMATIC|12.34 EUR|12.34 EUR|");

        String story = story(session, captured);
        assertThat(fact(story, "payment-status")).isEqualTo("CAPTURED");
        assertThat(fact(story, "payment-capture-method")).isEqualTo("MANUAL");
        assertThat(fact(story, "payment-authorized")).startsWith("10.00 EUR at 20");
        assertThat(fact(story, "payment-captured")).startsWith("6.00 EUR at 20");
        List<String> timeline = timeline(story);
        assertThat(timeline).anyMatch(e -> e.startsWith("api|payment created|") && e.contains("manual capture"));
        assertThat(titles(story))
                .containsSubsequence(
                        "transition|AUTHORIZING → AUTHORIZED: authorized 1000 EUR",
                        "transition|AUTHORIZED → CAPTURING: capture started",
                        "transition|CAPTURING → CAPTURED: captured 600 of 1000 EUR");
        assertThat(timeline).anyMatch(e -> e.startsWith("ledger|ledger CAPTURE psp_receivable 600|"));

        String voided = story(session, canceled);
        assertThat(fact(voided, "payment-status")).isEqualTo("CANCELED");
        assertThat(fact(voided, "payment-captured")).isEqualTo("-");
        assertThat(timeline(voided)).noneMatch(e -> e.startsWith("ledger|"));
        assertThat(titles(voided))
                .containsSubsequence(
                        "transition|AUTHORIZING → AUTHORIZED: authorized 1000 EUR",
                        "transition|AUTHORIZED → CANCELING: void started (cancel)",
                        "transition|CANCELING → CANCELED: authorization voided (canceled)");

        assertThat(titles(story(session, expired)))
                .containsSubsequence(
                        "transition|AUTHORIZED → EXPIRING: void started (expiry)",
                        "transition|EXPIRING → EXPIRED: authorization voided (expired)");

        // an automatic payment's page as before: its amount, captured in full, no authorization of its own
        String plain = story(session, automatic);
        assertThat(fact(plain, "payment-capture-method")).isEqualTo("AUTOMATIC");
        assertThat(fact(plain, "payment-authorized")).isEqualTo("12.34 EUR");
        assertThat(fact(plain, "payment-captured")).startsWith("12.34 EUR at 20");
        assertThat(titles(plain)).contains("transition|PROCESSING → CAPTURED");
    }

    @Test
    void aManualPaymentsCallWithAnUnknownOutcomeOrStuckShowsOnTheLivePage() {
        String order = TestSupport.unique("live");
        UUID merchant = merchant();
        // all created long ago, so that they are among the oldest (the page lists the oldest 100)
        // an authorization in flight for 30 days: stuck
        UUID authorizingStuck = UUID.fromString(
                query("INSERT INTO payments (merchant_id, order_id, amount, currency, source, capture_method, status,"
                        + " created_at, updated_at) VALUES ('" + merchant + "', '" + order + "', 1000, 'EUR',"
                        + " 'tok_visa', 'MANUAL', 'AUTHORIZING', now() - interval '30 days',"
                        + " now() - interval '30 days') RETURNING id"));
        UUID authorizingUnknown = old(insert(merchant, order, "MANUAL", 1000));
        exec("UPDATE payments SET last_error = 'TimeoutException' WHERE id = '" + authorizingUnknown + "'");
        UUID authorizingInFlight = old(insert(merchant, order, "MANUAL", 1000));
        UUID capturingUnknown = old(manual(merchant, order, "AUTHORIZED", "CAPTURING"));
        exec("UPDATE payments SET last_error = 'TimeoutException' WHERE id = '" + capturingUnknown + "'");
        // created 30 days ago, but its capture has just started: in flight, not stuck
        UUID capturingInFlight = old(manual(merchant, order, "AUTHORIZED", "CAPTURING"));
        UUID cancelingUnknown = old(manual(merchant, order, "AUTHORIZED", "CANCELING"));
        exec("UPDATE payments SET last_error = 'TimeoutException' WHERE id = '" + cancelingUnknown + "'");
        UUID expiringUnknown = old(manual(merchant, order, "AUTHORIZED", "EXPIRING"));
        exec("UPDATE payments SET last_error = 'TimeoutException' WHERE id = '" + expiringUnknown + "'");
        // at rest: an authorization is not unresolved, whatever error an earlier call left
        UUID authorized = old(manual(merchant, order, "AUTHORIZED"));
        exec("UPDATE payments SET last_error = 'TimeoutException' WHERE id = '" + authorized + "'");

        String live = given().cookie("console_session", login("heidi"))
                .get("/console")
                .then()
                .statusCode(200)
                .extract()
                .asString();
        Map<String, String> rows = rows(live);
        // status, capture method, amount (authorized), capturing, ...
        assertThat(rows.get(authorizingStuck.toString())).startsWith("AUTHORIZING|MANUAL|10.00 EUR|-|");
        assertThat(rows.get(authorizingUnknown.toString())).startsWith("AUTHORIZING|MANUAL|10.00 EUR|-|");
        assertThat(rows.get(capturingUnknown.toString())).startsWith("CAPTURING|MANUAL|10.00 EUR|6.00 EUR|");
        assertThat(rows.get(cancelingUnknown.toString())).startsWith("CANCELING|MANUAL|10.00 EUR|-|");
        assertThat(rows.get(expiringUnknown.toString())).startsWith("EXPIRING|MANUAL|10.00 EUR|-|");
        assertThat(rows.get(capturingUnknown.toString())).endsWith("|TimeoutException");
        assertThat(rows)
                .doesNotContainKeys(
                        authorizingInFlight.toString(), capturingInFlight.toString(), authorized.toString());
        Matcher count = Pattern.compile("<strong id=\"count-unresolved\">(\\d+)</strong>")
                .matcher(live);
        assertThat(count.find()).isTrue();
        assertThat(Long.parseLong(count.group(1))).isGreaterThanOrEqualTo(5);
    }

    private UUID merchant() {
        return UUID.fromString(query("INSERT INTO merchants (name) VALUES ('console manual') RETURNING id"));
    }

    private UUID insert(UUID merchant, String order, String method, long amount) {
        return UUID.fromString(query("INSERT INTO payments (merchant_id, order_id, amount, currency, source,"
                + " capture_method, status) VALUES ('" + merchant + "', '" + order + "', " + amount
                + ", 'EUR', 'tok_visa', '" + method + "', '"
                + (method.equals("MANUAL") ? "AUTHORIZING" : "PROCESSING") + "') RETURNING id"));
    }

    /** Moves the payment's creation 30 days back (its own column: the transitions leave it alone). */
    private UUID old(UUID payment) {
        exec("UPDATE payments SET created_at = now() - interval '30 days' WHERE id = '" + payment + "'");
        return payment;
    }

    /**
     * A MANUAL payment of 1000 EUR, inserted AUTHORIZING and moved through {@code steps} as the services move it: the
     * authorization with the PSP's reference, a capture of 600, and CAPTURED with its CAPTURE ledger transaction in the
     * same transaction.
     */
    private UUID manual(UUID merchant, String order, String... steps) {
        UUID id = insert(merchant, order, "MANUAL", 1000);
        String where = " WHERE id = '" + id + "'";
        for (String step : steps) {
            switch (step) {
                case "AUTHORIZED" ->
                    exec("UPDATE payments SET status = 'AUTHORIZED', psp_reference = 'ch_" + id + "'" + where);
                case "CAPTURING" -> exec("UPDATE payments SET status = 'CAPTURING', captured_amount = 600" + where);
                case "CAPTURED" ->
                    pool.withTransaction(c -> c.query(
                                            "UPDATE payments SET status = 'CAPTURED', captured_at = now()" + where)
                                    .execute()
                                    .flatMap(r -> c.query("SELECT book_ledger_transaction('CAPTURE', 'psp_receivable',"
                                                    + " 'merchant_payable', '" + id + "', '" + merchant
                                                    + "', 'payment captured', 600, 'EUR', false)")
                                            .execute()))
                            .await()
                            .indefinitely();
                default -> exec("UPDATE payments SET status = '" + step + "'" + where);
            }
        }
        return id;
    }

    private void exec(String sql) {
        pool.query(sql).execute().await().indefinitely();
    }

    private String query(String sql) {
        return String.valueOf(pool.query(sql)
                .execute()
                .await()
                .indefinitely()
                .iterator()
                .next()
                .getValue(0));
    }

    private String story(String session, UUID payment) {
        return given().cookie("console_session", session)
                .get("/console/payments/" + payment)
                .then()
                .statusCode(200)
                .extract()
                .asString();
    }

    /** The rows of a page's table with {@code data-payment}: payment id → its cells after the first, "|"-joined. */
    private static Map<String, String> rows(String html) {
        Map<String, String> rows = new LinkedHashMap<>();
        Matcher row = Pattern.compile("<tr data-payment=\"([0-9a-f-]+)\">(.*?)</tr>", Pattern.DOTALL)
                .matcher(html);
        while (row.find()) {
            List<String> cells = new ArrayList<>();
            Matcher cell = CELLS.matcher(row.group(2));
            while (cell.find()) {
                cells.add(cell.group(1).replaceAll("<[^>]+>", "").strip());
            }
            rows.put(row.group(1), String.join("|", cells.subList(1, cells.size())));
        }
        return rows;
    }

    /** The text of the story's fact with that id. */
    private static String fact(String html, String id) {
        Matcher m = Pattern.compile("<dd id=\"" + id + "\">(.*?)</dd>", Pattern.DOTALL)
                .matcher(html);
        assertThat(m.find()).as(id).isTrue();
        return m.group(1).replaceAll("<[^>]+>", "").strip();
    }

    /** The story's timeline rows as "source|what|details", in page order (as ConsoleTest reads them). */
    private static List<String> timeline(String html) {
        List<String> rows = new ArrayList<>();
        Matcher m = Pattern.compile(
                        "<tr data-source=\"([a-z]+)\"><td>[^<]*</td><td><span[^>]*>[^<]*</span></td><td>([^<]*)</td><td>([^<]*)</td></tr>")
                .matcher(html);
        while (m.find()) {
            rows.add(m.group(1) + "|" + unescape(m.group(2)) + "|" + unescape(m.group(3)));
        }
        return rows;
    }

    /**
     * The timeline's "source|what", without the details (a transition's actor is whatever the connection's
     * {@code payments.actor} was).
     */
    private static List<String> titles(String html) {
        return timeline(html).stream()
                .map(e -> e.substring(0, e.lastIndexOf('|')))
                .toList();
    }

    private static String unescape(String html) {
        return html.replace("&gt;", ">")
                .replace("&lt;", "<")
                .replace("&#39;", "'")
                .replace("&quot;", "\"")
                .replace("&amp;", "&");
    }

    private static String login(String operator) {
        Response page = given().get("/console/login");
        String loginCookie = page.cookie("console_login");
        Response ok = given().redirects()
                .follow(false)
                .contentType("application/x-www-form-urlencoded")
                .cookie("console_login", loginCookie)
                .formParam("csrf", loginCookie)
                .formParam("operator", operator)
                .formParam("token", TestSupport.ADMIN)
                .post("/console/login");
        assertThat(ok.statusCode()).isEqualTo(303);
        return ok.getCookie("console_session");
    }
}
