package com.payments.recon;

import static com.payments.recon.Fixture.at;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import com.payments.recon.service.ReconciliationService;
import com.payments.recon.service.RunResult;
import com.payments.recon.service.SettlementSource;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Settlement files from the real psp-sandbox, with its clock set: a payment charged late on D whose outcome we recorded
 * on D+1 (captured_at is when we learned it) is in D's file, not D+1's.
 */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.RESTRICTED_TO_CLASS)
@WithTestResource(value = PspSandboxTestResource.class, scope = TestResourceScope.RESTRICTED_TO_CLASS)
class LateResolutionTest {
    @Inject
    ReconciliationService service;

    @Inject
    DataSource dataSource;

    // Not an injected @ConfigProperty: the other test classes of the module run without a sandbox (no psp.url).
    final String psp = ConfigProvider.getConfig().getValue("psp.url", String.class);

    @AfterEach
    void releaseClock() {
        given().baseUri(psp).delete("/test/clock").then().statusCode(200);
    }

    @Test
    void aChargeOfDResolvedOnDPlusOneIsNotMissingAtPsp() {
        Fixture fx = new Fixture(dataSource);
        LocalDate d = LocalDate.of(2033, 3, 10);
        LocalDate next = d.plusDays(1);

        // Charged at 23:50 on D (before the sandbox's 5-minute cut-off: D's file); the resolver recorded it at 02:00.
        String late = UUID.randomUUID().toString();
        fx.captured(late, 4_200, "EUR", charge(late, 4_200, at(d, "23:50")), at(next, "02:00"));
        // Same, but the PSP charged another amount than the one we recorded: that amount was never settled.
        String lateOtherAmount = UUID.randomUUID().toString();
        fx.captured(lateOtherAmount, 5_000, "EUR", charge(lateOtherAmount, 5_100, at(d, "23:51")), at(next, "02:01"));
        // A normal charge of D+1, and one of ours the PSP never charged.
        String normal = UUID.randomUUID().toString();
        fx.captured(normal, 1_000, "EUR", charge(normal, 1_000, at(next, "10:00")), at(next, "10:00"));
        String neverCharged = fx.captured(3_000, "EUR", at(next, "11:00"));

        RunResult dayD = run(d, fx);
        RunResult dayAfter = run(next, fx);

        assertThat(fx.rows(
                        "SELECT business_date::text FROM psp_settlements WHERE reference = ? AND type = 'CHARGE'",
                        late))
                .containsExactly(List.of(d.toString()));
        assertThat(fx.rows("SELECT business_date::text, break_type FROM recon_breaks WHERE reference = ?", late))
                .isEmpty();
        assertThat(fx.rows(
                        "SELECT business_date::text, break_type FROM recon_breaks WHERE reference <> ? ORDER BY 1, 2",
                        late))
                .containsExactly(
                        List.of(d.toString(), "AMOUNT_MISMATCH"),
                        List.of(next.toString(), "MISSING_AT_PSP"),
                        List.of(next.toString(), "MISSING_AT_PSP"));
        assertThat(fx.rows(
                        "SELECT reference FROM recon_breaks WHERE business_date = ?::date ORDER BY 1", next.toString()))
                .containsExactlyInAnyOrderElementsOf(List.of(List.of(lateOtherAmount), List.of(neverCharged)));
        assertThat(dayD.summary().match().outcomes())
                .isEqualTo(Map.of("MATCHED_OUTSIDE_WINDOW", 1L, "AMOUNT_MISMATCH", 1L));
        assertThat(dayAfter.summary().match().outcomes())
                .isEqualTo(Map.of("MATCHED", 1L, "SETTLED_EARLIER", 1L, "MISSING_AT_PSP", 2L));
    }

    private RunResult run(LocalDate date, Fixture fx) {
        RunResult result = service.run(date, SettlementSource.PSP, Duration.ofMinutes(15));
        assertThat(result.status()).as("%s", result.summary()).isEqualTo(RunResult.SUCCEEDED);
        return result;
    }

    /** A charge made at the PSP at {@code when} (the sandbox's clock); returns the PSP's charge id. */
    private String charge(String paymentId, long amount, Instant when) {
        given().baseUri(psp)
                .contentType(ContentType.JSON)
                .body("{\"instant\":\"" + when + "\"}")
                .put("/test/clock")
                .then()
                .statusCode(200);
        return given().baseUri(psp)
                .contentType(ContentType.JSON)
                .header("Idempotency-Key", paymentId)
                .body("{\"reference\":\"" + paymentId + "\",\"amount\":" + amount
                        + ",\"currency\":\"EUR\",\"source\":\"tok_visa\"}")
                .post("/v1/charges")
                .then()
                .statusCode(200)
                .extract()
                .path("id");
    }
}
