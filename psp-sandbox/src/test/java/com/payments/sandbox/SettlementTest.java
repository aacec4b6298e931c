package com.payments.sandbox;

import static com.payments.sandbox.Sandbox.charge;
import static com.payments.sandbox.Sandbox.freezeClock;
import static com.payments.sandbox.Sandbox.refund;
import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Settlement files of days no other test uses, built with the frozen test clock. */
@QuarkusTest
class SettlementTest {

    static final String HEADER = "psp_reference,type,reference,amount,fee,currency,settled_at";

    @AfterEach
    void reset() {
        Sandbox.resetFaultsAndClock();
    }

    private static String csv(String date) {
        return given().get("/v1/settlements/{d}.csv", date)
                .then()
                .statusCode(200)
                .contentType("text/csv")
                .extract()
                .asString();
    }

    @Test
    void fileOfAKnownDayWithLateItemsFeesAndRefunds() {
        freezeClock("2031-03-10T10:00:00Z");
        String c1 = charge("s1-pay1", 10_000, "tok_visa").path("id");
        freezeClock("2031-03-10T11:30:00.250Z");
        String r1 = refund("s1-ref1", c1, 2_500).path("id");
        freezeClock("2031-03-10T12:00:00Z");
        charge("s1-declined", 700, "tok_chargeDeclined");
        String c0 = charge("s1-refundfails", 999, "tok_refundFails").path("id");
        refund("s1-failedref", c0, 100);
        freezeClock("2031-03-10T23:54:59.999Z"); // just before the 5-minute cut-off: same day
        String c2 = charge("s1-pay2", 1_234, "tok_mastercard").path("id");
        freezeClock("2031-03-10T23:55:00Z"); // in the cut-off window: next day's file
        String late = charge("s1-late", 5_000, "tok_visa").path("id");
        freezeClock("2031-03-11T00:01:00Z");
        String c3 = charge("s1-pay3", 1, "tok_visa").path("id");
        freezeClock("2031-03-09T23:59:00Z"); // late item of the previous day lands on the 10th, first line
        String early = charge("s1-early", 200, "tok_visa").path("id");

        // fee = round_half_up(amount * 290 / 10000) + 30
        assertEquals(
                List.of(
                        HEADER,
                        early + ",CHARGE,s1-early,200,36,EUR,2031-03-09T23:59:00.000Z",
                        c1 + ",CHARGE,s1-pay1,10000,320,EUR,2031-03-10T10:00:00.000Z",
                        r1 + ",REFUND,s1-ref1,2500,0,EUR,2031-03-10T11:30:00.250Z",
                        c0 + ",CHARGE,s1-refundfails,999,59,EUR,2031-03-10T12:00:00.000Z",
                        c2 + ",CHARGE,s1-pay2,1234,66,EUR,2031-03-10T23:54:59.999Z"),
                Arrays.asList(csv("2031-03-10").split("\n")));
        assertEquals(
                List.of(
                        HEADER,
                        late + ",CHARGE,s1-late,5000,175,EUR,2031-03-10T23:55:00.000Z",
                        c3 + ",CHARGE,s1-pay3,1,30,EUR,2031-03-11T00:01:00.000Z"),
                Arrays.asList(csv("2031-03-11").split("\n")));
        assertEquals(List.of(HEADER), Arrays.asList(csv("2031-03-12").split("\n")));
        given().get("/v1/settlements/2031-13-45.csv").then().statusCode(400);
    }

    @Test
    void injectedDiscrepanciesAreReportedAndStable() {
        freezeClock("2031-04-01T09:00:00Z");
        for (int i = 0; i < 10; i++) {
            charge("s2-pay" + i, 1_000 + i, "tok_visa").then().statusCode(200);
        }
        String clean = csv("2031-04-01");
        assertEquals(11, clean.split("\n").length);

        Sandbox.faults("{\"settlementDrop\":1,\"settlementAmountMismatch\":2,\"settlementPhantom\":1}");
        String dirty = csv("2031-04-01");
        assertEquals(dirty, csv("2031-04-01"), "the same file on every fetch");
        given().get("/v1/settlements/2031-04-01.csv").then().header("Psp-Sandbox-Injected-Discrepancies", "4");

        JsonPath report = given().get("/test/settlements/2031-04-01/discrepancies")
                .then()
                .statusCode(200)
                .extract()
                .jsonPath();
        List<Map<String, Object>> injected = report.getList("injected");
        assertEquals(4, injected.size());
        List<String> dirtyLines = Arrays.asList(dirty.split("\n"));
        assertEquals(11, dirtyLines.size(), "10 - 1 dropped + 1 phantom, plus the header");
        for (Map<String, Object> item : injected) {
            String psp = (String) item.get("pspReference");
            String ref = (String) item.get("reference");
            long original = ((Number) item.get("originalAmount")).longValue();
            long inFile = ((Number) item.get("fileAmount")).longValue();
            switch ((String) item.get("kind")) {
                case "DROPPED" -> {
                    assertTrue(clean.contains(psp));
                    assertFalse(dirty.contains(psp));
                }
                case "AMOUNT_CHANGED" -> {
                    assertTrue(clean.contains(psp + ",CHARGE," + ref + "," + original + ","));
                    assertTrue(dirty.contains(psp + ",CHARGE," + ref + "," + inFile + ","));
                    assertTrue(inFile != original);
                }
                case "PHANTOM_CHARGE" -> {
                    assertFalse(clean.contains(psp));
                    assertTrue(dirty.contains(psp + ",CHARGE," + ref + "," + inFile + ","));
                }
                default -> throw new AssertionError(item);
            }
        }
    }

    @Test
    void syntheticFileIsStreamedWithTheDocumentedLines() {
        String body = given().queryParam("date", "2032-02-02")
                .queryParam("lines", 40)
                .queryParam("seed", 7)
                .get("/test/settlements/synthetic.csv")
                .then()
                .statusCode(200)
                .extract()
                .asString();
        String[] lines = body.split("\n");
        assertEquals(41, lines.length);
        assertEquals(HEADER, lines[0]);
        // line 0: amount 100 + (0 * 7919 + 7) mod 100000 = 107, fee round(107 * 0.029) + 30 = 33
        assertEquals(
                "ch_000000070000000000000000,CHARGE,00000007-0000-4000-8000-000000000000,107,33,EUR,"
                        + "2032-02-02T00:00:00.000Z",
                lines[1]);
        // line 19 is a refund: amount 100 + (19 * 7919 + 7) mod 100000 = 50568, settled at 19/40 of the day
        assertEquals(
                "re_000000070000000000000013,REFUND,00000007-0000-4000-9000-000000000013,50568,0,EUR,"
                        + "2032-02-02T11:24:00.000Z",
                lines[20]);
    }
}
