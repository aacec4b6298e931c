package com.payments.api;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.api.resolver.PaymentResolver;
import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;
import io.smallrye.faulttolerance.api.CircuitBreakerMaintenance;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * The operator console (docs/console.md) against PostgreSQL: no page without a session, no POST without the session's
 * CSRF token, resolving writes the item and its audit row in one go, the story shows a payment's records, and a queue
 * of 10,000 items pages through completely.
 */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "8s"),
        scope = TestResourceScope.GLOBAL)
class ConsoleTest {
    private static final Pattern CSRF = Pattern.compile("name=\"csrf\" value=\"([^\"]+)\"");
    private static final Pattern ITEM_ROW = Pattern.compile("data-item=\"(\\d+)\"");

    @Inject
    Pool pool;

    @Inject
    CircuitBreakerMaintenance breakers;

    @Inject
    PaymentResolver resolver;

    @ConfigProperty(name = "psp.url")
    String pspUrl;

    @Test
    void withoutASessionPagesRedirectToTheLoginAndPostsAre401() {
        for (String page : List.of("/console", "/console/operations", "/console/recon", "/console/payments?q=x")) {
            Response r = given().redirects().follow(false).get(page);
            assertThat(r.statusCode()).as(page).isEqualTo(303);
            assertThat(r.header("Location")).as(page).endsWith("/console/login");
        }
        Response forged = given().redirects()
                .follow(false)
                .cookie("console_session", "not-a-session")
                .get("/console/operations");
        assertThat(forged.statusCode()).isEqualTo(303);

        long id = open("console-" + UUID.randomUUID());
        Response post = form().formParam("csrf", "x")
                .formParam("note", "no session")
                .post("/console/operations/" + id + "/resolve");
        assertThat(post.statusCode()).isEqualTo(401);
        assertThat(status(id)).isEqualTo("OPEN");
    }

    @Test
    void loginNeedsTheOperatorTokenAndTheLoginFormsCsrfToken() {
        Response page = given().get("/console/login");
        page.then().statusCode(200);
        assertThat(page.header("Content-Security-Policy"))
                .contains("default-src 'none'")
                .doesNotContain("unsafe");
        String loginCookie = page.cookie("console_login");
        assertThat(csrfOf(page.asString())).isEqualTo(loginCookie);

        String name = "alice-" + UUID.randomUUID().toString().substring(0, 8);
        Response noToken = form().cookie("console_login", loginCookie)
                .formParam("operator", name)
                .formParam("token", TestSupport.ADMIN)
                .post("/console/login");
        assertThat(noToken.statusCode()).isEqualTo(403);

        Response wrong = form().cookie("console_login", loginCookie)
                .formParam("csrf", loginCookie)
                .formParam("operator", name)
                .formParam("token", "not-the-token")
                .post("/console/login");
        assertThat(wrong.statusCode()).isEqualTo(401);
        assertThat(wrong.getCookie("console_session")).isNull();
        assertThat(auditActions(name)).containsExactly("login_refused");

        Response ok = form().cookie("console_login", loginCookie)
                .formParam("csrf", loginCookie)
                .formParam("operator", name)
                .formParam("token", TestSupport.ADMIN)
                .post("/console/login");
        assertThat(ok.statusCode()).isEqualTo(303);
        String setCookie = ok.headers().getValues("Set-Cookie").stream()
                .filter(c -> c.startsWith("console_session="))
                .findFirst()
                .orElseThrow();
        assertThat(setCookie).contains("HttpOnly", "SameSite=Strict", "Path=/console");
        assertThat(auditActions(name)).containsExactly("login_refused", "login");
        assertThat(given().cookie("console_session", ok.getCookie("console_session"))
                        .get("/console")
                        .statusCode())
                .isEqualTo(200);
    }

    @Test
    void resolvingNeedsTheCsrfTokenAndWritesTheAuditRow() {
        String operator = "bob-" + UUID.randomUUID().toString().substring(0, 8);
        String session = login(operator);
        String subject = "console-" + UUID.randomUUID();
        long id = open(subject);

        Response page = given().cookie("console_session", session).get("/console/operations/" + id);
        page.then().statusCode(200);
        assertThat(page.asString()).contains(subject, "refund_pending_too_long");
        String csrf = csrfOf(page.asString());

        Response missing = form().cookie("console_session", session)
                .formParam("note", "no token")
                .post("/console/operations/" + id + "/resolve");
        assertThat(missing.statusCode()).isEqualTo(403);
        Response wrongToken = form().cookie("console_session", session)
                .formParam("csrf", csrf.substring(1) + "x")
                .formParam("note", "wrong token")
                .post("/console/operations/" + id + "/resolve");
        assertThat(wrongToken.statusCode()).isEqualTo(403);
        // A CSRF token of another session does not do either.
        String otherCsrf = csrfOf(given().cookie("console_session", login("mallory"))
                .get("/console/operations/" + id)
                .asString());
        assertThat(form().cookie("console_session", session)
                        .formParam("csrf", otherCsrf)
                        .formParam("note", "other session's token")
                        .post("/console/operations/" + id + "/resolve")
                        .statusCode())
                .isEqualTo(403);
        assertThat(status(id)).isEqualTo("OPEN");
        assertThat(auditOf(id)).isEmpty();

        Response resolved = form().cookie("console_session", session)
                .formParam("csrf", csrf)
                .formParam("note", "refunded by hand, ticket 7")
                .post("/console/operations/" + id + "/resolve");
        assertThat(resolved.statusCode()).isEqualTo(303);
        assertThat(status(id)).isEqualTo("RESOLVED");
        assertThat(auditOf(id))
                .containsExactly(operator + "|console|resolve_operations_item|refunded by hand, ticket 7");

        Response again = form().cookie("console_session", session)
                .formParam("csrf", csrf)
                .formParam("note", "twice")
                .post("/console/operations/" + id + "/resolve");
        assertThat(again.statusCode()).isEqualTo(409);
        assertThat(auditOf(id)).hasSize(1);

        // The operator API resolves by the same rule and is audited too (one token: no person's name).
        long viaApi = open("console-" + UUID.randomUUID());
        given().header("Authorization", "Bearer " + TestSupport.ADMIN)
                .contentType(ContentType.JSON)
                .body("{\"resolution\":\"by the API\"}")
                .post("/v1/admin/operations/" + viaApi + "/resolve")
                .then()
                .statusCode(200);
        assertThat(auditOf(viaApi)).containsExactly("operator-token|api|resolve_operations_item|by the API");

        Response logout = form().cookie("console_session", session)
                .formParam("csrf", csrf)
                .post("/console/logout");
        assertThat(logout.statusCode()).isEqualTo(303);
        assertThat(given().redirects()
                        .follow(false)
                        .cookie("console_session", session)
                        .get("/console")
                        .statusCode())
                .isEqualTo(303);
    }

    @Test
    void aStoryShowsThePaymentsRecords() {
        TestSupport.warmUp(pspUrl, breakers);
        String order = TestSupport.unique("story");
        Response captured = TestSupport.capture(
                TestSupport.KEY_A, TestSupport.unique("key"), TestSupport.body(order, 1234, "EUR", "tok_visa"));
        captured.then().statusCode(201);
        String paymentId = captured.path("id");
        String session = login("carol");

        Response byOrder = given().redirects()
                .follow(false)
                .cookie("console_session", session)
                .get("/console/payments?q=" + order);
        assertThat(byOrder.statusCode()).isEqualTo(303);
        assertThat(byOrder.header("Location")).endsWith("/console/payments/" + paymentId);

        String story = given().cookie("console_session", session)
                .get("/console/payments/" + paymentId)
                .then()
                .statusCode(200)
                .extract()
                .asString();
        assertThat(story).contains("CAPTURED", order, "12.34 EUR");
        assertThat(story)
                .contains(
                        "data-source=\"api\"",
                        "data-source=\"idempotency\"",
                        "data-source=\"ledger\"",
                        "data-source=\"outbox\"");
        assertThat(story).contains("ledger CAPTURE psp_receivable 1234", "ledger CAPTURE merchant_payable -1234");
        // the capture's charge, a plain success, is told from the payment row (V97), before the transition it caused
        List<String> timeline = timeline(story);
        String charge = "psp|PSP charge: captured " + captured.<String>path("pspReference") + "|capture, ";
        assertThat(timeline).anyMatch(e -> e.startsWith(charge) && e.matches(".*\\|capture, \\d+ ms"));
        assertThat(indexOf(timeline, charge)).isLessThan(indexOf(timeline, "transition|PROCESSING → CAPTURED"));
        long calls = pool.preparedQuery("SELECT count(*) FROM psp_calls WHERE payment_id = $1")
                .execute(Tuple.of(UUID.fromString(paymentId)))
                .await()
                .indefinitely()
                .iterator()
                .next()
                .getLong(0);
        assertThat(calls).as("psp_calls rows of a plain capture").isZero();
    }

    /**
     * The PSP calls and the key's replays, as the database records them and the story shows them: the capture's
     * charge whose answer never came, the resolver's look-up (not found) and re-sent charge (captured), a replay of
     * the key and a reuse with another request.
     */
    @Test
    void aStoryShowsEachPspCallAndEachReplayOfTheKey() {
        TestSupport.warmUp(pspUrl, breakers);
        String key = TestSupport.unique("key");
        String json = TestSupport.body(TestSupport.unique("story"), 2700, "EUR", "tok_timeoutNotReceived");
        Response unknown = TestSupport.capture(TestSupport.KEY_A, key, json);
        unknown.then().statusCode(202);
        UUID paymentId = UUID.fromString(unknown.path("id"));
        TestSupport.capture(TestSupport.KEY_A, key, json).then().statusCode(202).header("Idempotent-Replayed", "true");
        TestSupport.capture(TestSupport.KEY_A, key, TestSupport.body("another", 1, "EUR", "tok_visa"))
                .then()
                .statusCode(422);
        Awaitility.await()
                .atMost(Duration.ofSeconds(40))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    resolver.runOnce().await().atMost(Duration.ofSeconds(30));
                    return TestSupport.paymentStatus(pool, paymentId).equals("CAPTURED");
                });

        List<String> calls = new ArrayList<>();
        for (Row r : pool.preparedQuery(
                        "SELECT kind, attempt, outcome, duration_ms FROM psp_calls WHERE payment_id = $1 ORDER BY started_at")
                .execute(Tuple.of(paymentId))
                .await()
                .indefinitely()) {
            calls.add(r.getString("kind") + " " + r.getInteger("attempt") + " " + r.getString("outcome"));
            assertThat(r.getInteger("duration_ms")).isNotNegative();
        }
        assertThat(calls).hasSize(3);
        assertThat(calls.get(0)).isEqualTo("charge 0 error TimeoutException");
        assertThat(calls.get(1)).isEqualTo("lookup 1 not found");
        assertThat(calls.get(2)).startsWith("charge 1 captured ");
        List<String> replays = new ArrayList<>();
        for (Row r : pool.preparedQuery(
                        "SELECT answer, response_status FROM idempotency_replays WHERE resource_id = $1 ORDER BY at")
                .execute(Tuple.of(paymentId))
                .await()
                .indefinitely()) {
            replays.add(r.getString("answer") + " " + r.getInteger("response_status"));
        }
        assertThat(replays).containsExactly("replayed 202", "different_request null");

        String story = given().cookie("console_session", login("erin"))
                .get("/console/payments/" + paymentId)
                .then()
                .statusCode(200)
                .extract()
                .asString();
        List<String> timeline = timeline(story);
        assertThat(timeline)
                .contains(
                        "replay|idempotency key " + key + ": replayed|stored answer 202 replayed",
                        "replay|idempotency key " + key
                                + ": different request|answered 422, the key was used with another request");
        assertThat(timeline)
                .anyMatch(e -> e.matches("psp\\|PSP charge: error TimeoutException\\|capture, \\d+ ms"))
                .anyMatch(e -> e.matches("psp\\|PSP lookup: not found\\|resolver attempt 1, \\d+ ms"))
                .anyMatch(e -> e.matches("psp\\|PSP charge re-sent: captured \\S+\\|resolver attempt 1, \\d+ ms"));
        // In time order: the capture's call before the UNKNOWN transition, the look-up before the re-send.
        assertThat(indexOf(timeline, "psp|PSP charge: error"))
                .isLessThan(indexOf(timeline, "transition|PROCESSING → UNKNOWN"));
        assertThat(indexOf(timeline, "psp|PSP lookup"))
                .isLessThan(indexOf(timeline, "psp|PSP charge re-sent"))
                .isLessThan(indexOf(timeline, "transition|UNKNOWN → CAPTURED"));
    }

    /** What refunds-worker writes when it dead-letters a command (RefundCommandConsumer) shows on the live page. */
    @Test
    void deadLetteredRefundCommandsShowOnTheLivePage() {
        UUID refundId = UUID.randomUUID();
        UUID paymentId = UUID.randomUUID();
        String reason = "unknown refund " + refundId;
        pool.preparedQuery(
                        """
                        INSERT INTO refund_dead_letters
                               (topic, kafka_partition, kafka_offset, record_key, refund_id, payment_id, reason,
                                dead_lettered_at)
                        VALUES ('refund-commands', 0, $1, $2, $3, $4, $5, now() - interval '2 hours')""")
                .execute(Tuple.of(
                        Math.abs(refundId.getLeastSignificantBits()),
                        paymentId.toString(),
                        refundId,
                        paymentId,
                        reason))
                .await()
                .indefinitely();
        long total = TestSupport.count(pool, "SELECT count(*) FROM refund_dead_letters");

        String live = given().cookie("console_session", login("frank"))
                .get("/console")
                .then()
                .statusCode(200)
                .extract()
                .asString();
        assertThat(live).contains("<strong id=\"count-dlq\">" + total + "</strong>");
        Matcher row = Pattern.compile("<tr data-refund=\"" + refundId + "\">(.*?)</tr>", Pattern.DOTALL)
                .matcher(live);
        assertThat(row.find()).as("the dead letter's row on the live page").isTrue();
        assertThat(row.group(1))
                .contains(reason, "2h", "href=\"/console/payments/" + paymentId + "\"", "refund-commands 0@");
    }

    /** The story's timeline rows as "source|what|details", in page order. */
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

    private static String unescape(String html) {
        return html.replace("&gt;", ">")
                .replace("&lt;", "<")
                .replace("&#39;", "'")
                .replace("&quot;", "\"")
                .replace("&amp;", "&");
    }

    private static int indexOf(List<String> timeline, String prefix) {
        for (int i = 0; i < timeline.size(); i++) {
            if (timeline.get(i).startsWith(prefix)) {
                return i;
            }
        }
        throw new AssertionError("no timeline entry starting with " + prefix + " in " + timeline);
    }

    @Test
    void tenThousandItemsPageThroughCompletely() {
        String reason = "console_paging_" + UUID.randomUUID().toString().substring(0, 8);
        pool.preparedQuery(
                        """
                        INSERT INTO operations_queue (subject_type, subject_id, reason)
                        SELECT 'recon', 'item-' || n, $1 FROM generate_series(1, 10000) n""")
                .execute(Tuple.of(reason))
                .await()
                .indefinitely();
        String session = login("dave");
        Set<Long> seen = new HashSet<>();
        List<Integer> pageSizes = new ArrayList<>();
        String url = "/console/operations?status=OPEN&reason=" + reason;
        while (url != null) {
            String html = given().cookie("console_session", session)
                    .urlEncodingEnabled(false)
                    .get(url)
                    .then()
                    .statusCode(200)
                    .extract()
                    .asString();
            Matcher rows = ITEM_ROW.matcher(html);
            int n = 0;
            while (rows.find()) {
                assertThat(seen.add(Long.parseLong(rows.group(1)))).isTrue();
                n++;
            }
            pageSizes.add(n);
            Matcher next = Pattern.compile("rel=\"next\" href=\"([^\"]+)\"").matcher(html);
            url = next.find() ? next.group(1).replace("&amp;", "&") : null;
        }
        // Remove them again: other test classes list the oldest OPEN and RESOLVED items of this shared database.
        pool.preparedQuery("DELETE FROM operations_queue WHERE reason = $1")
                .execute(Tuple.of(reason))
                .await()
                .indefinitely();
        assertThat(seen).hasSize(10_000);
        assertThat(pageSizes).hasSize(200).allMatch(n -> n == 50);
    }

    @Test
    void reconciliationDrawsOneBarPerDayAndListsADaysBreaks() {
        java.time.LocalDate day =
                java.time.LocalDate.now(java.time.ZoneOffset.UTC).minusDays(3);
        pool.preparedQuery("DELETE FROM recon_breaks WHERE business_date = $1")
                .execute(Tuple.of(day))
                .await()
                .indefinitely();
        long run = pool.preparedQuery(
                        """
                        INSERT INTO recon_runs (business_date, status, finished_at, summary)
                        VALUES ($1, 'SUCCEEDED', now(), '{"linesLoaded": 7, "outcomes": {"MATCHED": 5},
                                "breaks": {"AMOUNT_MISMATCH": 1, "MISSING_INTERNAL": 1}, "openBreaks": 2,
                                "reportedBreaks": 0}') RETURNING id""")
                .execute(Tuple.of(day))
                .await()
                .indefinitely()
                .iterator()
                .next()
                .getLong("id");
        String paymentRef = UUID.randomUUID().toString();
        pool.preparedQuery(
                        """
                        INSERT INTO recon_breaks (business_date, break_type, reference, internal_amount, psp_amount,
                                                  currency, first_run_id, last_run_id)
                        VALUES ($1, 'AMOUNT_MISMATCH', $2, 1000, 1100, 'EUR', $3, $3),
                               ($1, 'MISSING_INTERNAL', 'psp-only-' || $2, NULL, 500, 'EUR', $3, $3)""")
                .execute(Tuple.of(day, paymentRef, run))
                .await()
                .indefinitely();
        String session = login("erin");

        String recon = given().cookie("console_session", session)
                .get("/console/recon")
                .then()
                .statusCode(200)
                .extract()
                .asString();
        Matcher bars = Pattern.compile("<rect class=\"bar\" data-date=\"([0-9-]+)\" data-breaks=\"(\\d+)\"")
                .matcher(recon);
        List<String> dates = new ArrayList<>();
        while (bars.find()) {
            dates.add(bars.group(1) + "=" + bars.group(2));
        }
        assertThat(dates).hasSize(30).contains(day + "=2");
        assertThat(dates.get(29))
                .startsWith(java.time.LocalDate.now(java.time.ZoneOffset.UTC).toString());
        assertThat(recon).contains("AMOUNT_MISMATCH 1, MISSING_INTERNAL 1", "6.00 EUR");

        String page = given().cookie("console_session", session)
                .get("/console/recon/" + day)
                .then()
                .statusCode(200)
                .extract()
                .asString();
        assertThat(page)
                .contains("data-type=\"AMOUNT_MISMATCH\"", "data-type=\"MISSING_INTERNAL\"", paymentRef)
                .contains("10.00 EUR", "11.00 EUR");
    }

    private String login(String operator) {
        Response page = given().get("/console/login");
        String loginCookie = page.cookie("console_login");
        Response ok = form().cookie("console_login", loginCookie)
                .formParam("csrf", loginCookie)
                .formParam("operator", operator)
                .formParam("token", TestSupport.ADMIN)
                .post("/console/login");
        assertThat(ok.statusCode()).isEqualTo(303);
        return ok.getCookie("console_session");
    }

    private static RequestSpecification form() {
        return given().redirects().follow(false).contentType("application/x-www-form-urlencoded");
    }

    private static String csrfOf(String html) {
        Matcher m = CSRF.matcher(html);
        assertThat(m.find()).as("a csrf field in the page").isTrue();
        return m.group(1);
    }

    private long open(String subjectId) {
        return pool.preparedQuery(
                        """
                        INSERT INTO operations_queue (subject_type, subject_id, reason, details)
                        VALUES ('refund', $1, 'refund_pending_too_long', '{"amount": 900}') RETURNING id""")
                .execute(Tuple.of(subjectId))
                .await()
                .indefinitely()
                .iterator()
                .next()
                .getLong("id");
    }

    private String status(long id) {
        return pool.preparedQuery("SELECT status FROM operations_queue WHERE id = $1")
                .execute(Tuple.of(id))
                .await()
                .indefinitely()
                .iterator()
                .next()
                .getString("status");
    }

    private List<String> auditOf(long itemId) {
        List<String> rows = new ArrayList<>();
        for (Row r : pool.preparedQuery(
                        "SELECT operator, channel, action, note FROM operator_audit WHERE subject = $1 ORDER BY id")
                .execute(Tuple.of("operations_item:" + itemId))
                .await()
                .indefinitely()) {
            rows.add(String.join(
                    "|", r.getString("operator"), r.getString("channel"), r.getString("action"), r.getString("note")));
        }
        return rows;
    }

    private List<String> auditActions(String operator) {
        List<String> rows = new ArrayList<>();
        for (Row r : pool.preparedQuery("SELECT action FROM operator_audit WHERE operator = $1 ORDER BY id")
                .execute(Tuple.of(operator))
                .await()
                .indefinitely()) {
            rows.add(r.getString("action"));
        }
        return rows;
    }
}
