package com.payments.psp.settlement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.payments.psp.port.SettlementLine;
import com.payments.psp.settlement.SettlementFiles.Numbered;
import java.io.BufferedReader;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SettlementFilesTest {
    /** The columns in another order than the sandbox writes them, with two Stripe columns we do not read. */
    static final String REPORT_HEADER = "balance_transaction_id,automatic_payout_id,created_utc,currency,gross,fee,net,"
            + "reporting_category,source_id,description,payment_intent_id,customer_facing_amount,"
            + "payment_metadata[payment_id],refund_metadata[refund_id]\r\n";

    static List<Numbered> read(String file) throws Exception {
        try (var lines = SettlementFiles.read(new BufferedReader(new StringReader(file)))) {
            return lines.toList();
        }
    }

    @Test
    void theItemizedPayoutReconciliationReportIsReadByColumnName() throws Exception {
        List<Numbered> lines = read(REPORT_HEADER
                + "txn_1,po_1,2031-04-02 12:00:00,eur,100.00,3.20,96.80,charge,ch_1,\"Payment, for order 7\",pi_1,,pay-1,\r\n"
                + "txn_2,po_1,2031-04-02 12:00:01,eur,-25.00,0.00,-25.00,refund,re_1,REFUND FOR CHARGE,pi_1,,pay-1,ref-1\n"
                + "txn_3,po_1,2031-04-02 12:00:02,eur,25.00,0.00,25.00,refund_failure,re_1,REFUND FAILURE,pi_1,,pay-1,ref-1\n"
                + "txn_4,po_1,2031-04-02 12:00:03,eur,-5.00,15.00,-20.00,dispute,dp_1,Chargeback,pi_2,,pay-2,\n"
                + "txn_5,po_1,2031-04-02 12:00:04,jpy,-500,0,-500,fee,,Radar,,,,\n"
                + "txn_6,po_1,2031-04-02 12:00:05,eur,-96.80,0.00,-96.80,payout,po_1,STRIPE PAYOUT,,,,\n"
                + "txn_7,po_1,2031-04-02 12:00:06,eur,7.00,0.50,6.50,charge,ch_9,Made in the Dashboard,,,,\n");
        Instant noon = Instant.parse("2031-04-02T12:00:00Z");
        assertThat(lines)
                .containsExactly(
                        new Numbered(2, new SettlementLine("pi_1", "CHARGE", "pay-1", 10_000, 320, "EUR", noon)),
                        new Numbered(
                                3, new SettlementLine("re_1", "REFUND", "ref-1", 2_500, 0, "EUR", noon.plusSeconds(1))),
                        new Numbered(
                                4,
                                new SettlementLine(
                                        "re_1", "REFUND_FAILURE", "ref-1", 2_500, 0, "EUR", noon.plusSeconds(2))),
                        new Numbered(
                                5,
                                new SettlementLine(
                                        "dp_1", "CHARGEBACK", "pay-2", 500, 1_500, "EUR", noon.plusSeconds(3))),
                        new Numbered(6, new SettlementLine("txn_5", "FEE", null, 500, 0, "JPY", noon.plusSeconds(4))),
                        // the payout (line 7) is not a movement to match; a charge without our metadata is not ours
                        new Numbered(
                                8, new SettlementLine("ch_9", "CHARGE", null, 700, 50, "EUR", noon.plusSeconds(6))));
    }

    @Test
    void theReportsMajorUnitsBecomeIsoMinorUnitsOfEachCurrency() throws Exception {
        // Stripe prints major units: JPY and MGA without decimals, KWD with three, ISK with two (always .00)
        List<Numbered> lines = read(REPORT_HEADER
                + "txn_1,po_1,2031-04-02 12:00:00,jpy,5000,150,4850,charge,ch_1,,pi_1,,pay-1,\n"
                + "txn_2,po_1,2031-04-02 12:00:00,kwd,5.120,0.250,4.870,charge,ch_2,,pi_2,,pay-2,\n"
                + "txn_3,po_1,2031-04-02 12:00:00,kwd,-1.230,0.000,-1.230,refund,re_3,,pi_2,,pay-2,ref-3\n"
                + "txn_4,po_1,2031-04-02 12:00:00,isk,5000.00,150.00,4850.00,charge,ch_4,,pi_4,,pay-4,\n"
                + "txn_5,po_1,2031-04-02 12:00:00,mga,5000,100,4900,charge,ch_5,,pi_5,,pay-5,\n");
        Instant noon = Instant.parse("2031-04-02T12:00:00Z");
        assertThat(lines)
                .extracting(Numbered::line)
                .containsExactly(
                        new SettlementLine("pi_1", "CHARGE", "pay-1", 5000, 150, "JPY", noon),
                        new SettlementLine("pi_2", "CHARGE", "pay-2", 5120, 250, "KWD", noon),
                        new SettlementLine("re_3", "REFUND", "ref-3", 1230, 0, "KWD", noon),
                        new SettlementLine("pi_4", "CHARGE", "pay-4", 5000, 150, "ISK", noon),
                        new SettlementLine("pi_5", "CHARGE", "pay-5", 500_000, 10_000, "MGA", noon));
    }

    @Test
    void aReportAmountFinerThanTheIsoMinorUnitIsRejected() {
        // 5,000.50 ISK cannot be booked in ISO minor units (the krona has none)
        assertThatThrownBy(() -> read(
                        REPORT_HEADER + "txn_1,po_1,2031-04-02 12:00:00,isk,5000.50,0,5000.50,charge,ch_1,,pi_1,,p,\n"))
                .isInstanceOf(SettlementFormatException.class)
                .hasMessageContaining("line 2")
                .hasMessageContaining("gross");
    }

    @Test
    void aReportLineThatIsNotExactIsRejectedWithItsNumber() {
        assertThatThrownBy(() ->
                        read(REPORT_HEADER + "txn_1,po_1,2031-04-02 12:00:00,eur,1.005,0,1,charge,ch_1,,pi_1,,p,\n"))
                .isInstanceOf(SettlementFormatException.class)
                .hasMessageContaining("line 2")
                .hasMessageContaining("gross");
        assertThatThrownBy(
                        () -> read(REPORT_HEADER + "txn_1,po_1,2031-04-02T12:00:00Z,eur,1,0,1,charge,ch_1,,pi_1,,p,\n"))
                .hasMessageContaining("line 2")
                .hasMessageContaining("created_utc");
        assertThatThrownBy(() -> read(REPORT_HEADER + "txn_1,po_1\n"))
                .hasMessageContaining("line 2")
                .hasMessageContaining("fields");
    }

    @Test
    void aFileIsToldApartByItsHeader() throws Exception {
        assertThat(read("\uFEFFpsp_reference,type,reference,amount,fee,currency,settled_at\r\n"
                        + "ch_1,CHARGE,p-1,1000,59,EUR,2031-01-01T10:00:00.123Z\r\n"))
                .containsExactly(new Numbered(
                        2,
                        new SettlementLine(
                                "ch_1", "CHARGE", "p-1", 1000, 59, "EUR", Instant.parse("2031-01-01T10:00:00.123Z"))));
        // A report without our metadata columns cannot name our ids: refused, not read as "nothing is ours".
        assertThatThrownBy(() -> read(REPORT_HEADER.replace(",payment_metadata[payment_id]", "")))
                .isInstanceOf(SettlementFormatException.class)
                .hasMessageContaining("line 1")
                .hasMessageContaining("payment_metadata[payment_id]");
        assertThatThrownBy(() -> read("")).hasMessageContaining("line 1");
    }

    @Test
    void linesMaySpanChunksOfTheBody() {
        LineSplitter splitter = new LineSplitter();
        List<String> lines = new ArrayList<>();
        byte[] text = "header\nch_1,é\nch_2".getBytes(StandardCharsets.UTF_8);
        for (byte b : text) {
            lines.addAll(splitter.feed(new byte[] {b})); // one byte per chunk: "é" is cut in two
        }
        lines.addAll(splitter.rest());
        assertThat(lines).containsExactly("header", "ch_1,é", "ch_2");
    }
}
