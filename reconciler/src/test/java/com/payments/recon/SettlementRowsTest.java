package com.payments.recon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.payments.psp.port.SettlementLine;
import com.payments.psp.settlement.SettlementFiles;
import com.payments.psp.settlement.SettlementFormatException;
import com.payments.recon.service.SettlementRows;
import java.io.BufferedReader;
import java.io.StringReader;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Settlement lines as COPY rows: the file formats (psp-common) and the checks of every line, whatever its source. */
class SettlementRowsTest {
    static final String HEADER = "psp_reference,type,reference,amount,fee,currency,settled_at\n";
    static final LocalDate DATE = LocalDate.of(2031, 1, 1);

    static List<String> convert(String file) throws Exception {
        List<String> rows = new ArrayList<>();
        try (var lines = SettlementFiles.read(new BufferedReader(new StringReader(file)))) {
            lines.forEach(l -> rows.add(row(l.lineNo(), l.line())));
        }
        return rows;
    }

    static String row(long lineNo, SettlementLine line) {
        StringBuilder row = new StringBuilder();
        SettlementRows.append(row, DATE.toString(), lineNo, line);
        return row.toString();
    }

    @Test
    void convertsLinesToCopyRowsWithTheirFileLineNumber() throws Exception {
        assertThat(convert(HEADER
                        + "ch_1,CHARGE,p-1,1000,59,EUR,2031-01-01T10:00:00.123Z\r\n"
                        + "fee_1,FEE,,500,0,EUR,2031-01-01T23:00:00Z\n"
                        + "re_1,REFUND,\"r-1\",300,0,USD,2031-01-01T11:00:00Z\n"))
                .containsExactly(
                        "2031-01-01\t2\tch_1\tCHARGE\tp-1\t1000\t59\tEUR\t2031-01-01T10:00:00.123Z\n",
                        "2031-01-01\t3\tfee_1\tFEE\t\\N\t500\t0\tEUR\t2031-01-01T23:00:00Z\n",
                        "2031-01-01\t4\tre_1\tREFUND\tr-1\t300\t0\tUSD\t2031-01-01T11:00:00Z\n");
        assertThat(convert(HEADER)).isEmpty();
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "ch_1,CHARGE,p-1,1000,59,EUR                              | expected 7 fields",
                "ch_1,CHARGE,p-1,1000,59,EUR,2031-01-01T10:00:00Z,x       | expected 7 fields",
                "ch_1,PAYOUT,p-1,1000,59,EUR,2031-01-01T10:00:00Z         | type",
                "ch_1,CHARGE,,1000,59,EUR,2031-01-01T10:00:00Z            | reference is empty",
                ",CHARGE,p-1,1000,59,EUR,2031-01-01T10:00:00Z             | psp_reference is empty",
                "ch_1,CHARGE,p-1,0,59,EUR,2031-01-01T10:00:00Z            | amount out of range",
                "ch_1,CHARGE,p-1,-5,59,EUR,2031-01-01T10:00:00Z           | amount out of range",
                "ch_1,CHARGE,p-1,10.5,59,EUR,2031-01-01T10:00:00Z         | amount must be an integer",
                "ch_1,CHARGE,p-1,10000000000000,59,EUR,2031-01-01T10:00:00Z | amount must be an integer",
                "ch_1,CHARGE,p-1,1000,-1,EUR,2031-01-01T10:00:00Z         | fee must not be negative",
                "ch_1,CHARGE,p-1,1000,59,eur,2031-01-01T10:00:00Z         | currency",
                "ch_1,CHARGE,p-1,1000,59,EUR,2031-01-01 10:00:00          | settled_at",
                "ch_1,CHARGE,\"p-1,1000,59,EUR,2031-01-01T10:00:00Z       | unterminated",
                "ch 1,CHARGE,p-1,1000,59,EUR,2031-01-01T10:00:00Z         | printable ASCII",
            })
    void rejectsAMalformedLineWithItsNumber(String line, String message) {
        String file = HEADER + "ch_0,CHARGE,p-0,1000,59,EUR,2031-01-01T09:00:00Z\n" + line.strip() + "\n";
        assertThatThrownBy(() -> convert(file))
                .isInstanceOf(SettlementFormatException.class)
                .hasMessageContaining("line 3")
                .hasMessageContaining(message);
    }

    @Test
    void aMovementWithoutOurIdIsLoadedUnderThePspsIdAndOtherSourcesAreCheckedAlike() {
        java.time.Instant at = java.time.Instant.parse("2031-01-01T10:00:00Z");
        // A Stripe charge made outside the platform: no payment id in its metadata; a MISSING_INTERNAL, not a failure.
        assertThat(row(7, new SettlementLine("pi_9", "CHARGE", null, 700, 50, "EUR", at)))
                .isEqualTo("2031-01-01\t7\tpi_9\tCHARGE\tpi_9\t700\t50\tEUR\t2031-01-01T10:00:00Z\n");
        assertThat(row(8, new SettlementLine("re_1", "REFUND_FAILURE", "r-1", 300, 0, "EUR", at)))
                .contains("\tREFUND_FAILURE\tr-1\t");
        assertThatThrownBy(() -> row(9, new SettlementLine("txn_1", "PAYOUT", null, 1, 0, "EUR", at)))
                .isInstanceOf(SettlementFormatException.class)
                .hasMessageContaining("line 9");
        assertThatThrownBy(() -> row(10, new SettlementLine("ch_1", "CHARGE", "p 1", 1, 0, "EUR", at)))
                .hasMessageContaining("printable ASCII");
        assertThatThrownBy(() -> row(11, new SettlementLine("ch_1", "CHARGE", "p-1", 1, -3, "EUR", at)))
                .hasMessageContaining("fee must not be negative");
    }

    @Test
    void windowArgumentAcceptsShortAndIsoForms() {
        assertThat(ReconcilerMain.duration("15m")).isEqualTo(java.time.Duration.ofMinutes(15));
        assertThat(ReconcilerMain.duration("PT1H")).isEqualTo(java.time.Duration.ofHours(1));
        assertThatThrownBy(() -> ReconcilerMain.duration("soon")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void exitCodeIsTheWorstOfTheDates() {
        assertThat(ReconcilerMain.worst(ReconcilerMain.OK, ReconcilerMain.BREAKS_REPORTED))
                .isEqualTo(2);
        assertThat(ReconcilerMain.worst(ReconcilerMain.BREAKS_REPORTED, ReconcilerMain.LOCKED))
                .isEqualTo(3);
        assertThat(ReconcilerMain.worst(ReconcilerMain.LOCKED, ReconcilerMain.FAILED))
                .isEqualTo(1);
        assertThat(ReconcilerMain.worst(ReconcilerMain.FAILED, ReconcilerMain.OK))
                .isEqualTo(1);
    }

    @Test
    void rejectsAMissingOrWrongHeaderAndBlankLines() {
        assertThatThrownBy(() -> convert("")).hasMessageContaining("line 1");
        assertThatThrownBy(() -> convert("reference,amount\n")).hasMessageContaining("line 1");
        assertThatThrownBy(() -> convert(HEADER + "\nch_1,CHARGE,p-1,1,0,EUR,2031-01-01T10:00:00Z\n"))
                .hasMessageContaining("line 2");
    }
}
