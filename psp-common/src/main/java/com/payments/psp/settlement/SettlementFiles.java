package com.payments.psp.settlement;

import com.payments.psp.port.SettlementLine;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.function.Consumer;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * Reads a settlement file of either format, told apart by its header: the sandbox protocol's settlement file ({@link
 * SandboxSettlementFile}) or Stripe's itemized payout reconciliation report ({@link StripeItemizedReport}). Lazily, one
 * line at a time: a day of a million lines never sits in memory.
 */
public final class SettlementFiles {
    private SettlementFiles() {}

    /** A format's reading of one line (null: a line to skip). */
    @FunctionalInterface
    public interface LineParser {
        SettlementLine parse(String line, long lineNo);
    }

    /** The parser of the lines under {@code header} (line 1), or a {@link SettlementFormatException}. */
    public static LineParser parserFor(String header) {
        String h = header == null ? null : Csv.stripBom(Csv.stripCr(header));
        if (h == null) {
            throw new SettlementFormatException(1, "empty file, expected the header " + SandboxSettlementFile.HEADER);
        }
        if (SandboxSettlementFile.HEADER.equals(h)) {
            return SandboxSettlementFile::parseLine;
        }
        if (StripeItemizedReport.isHeader(h)) {
            return StripeItemizedReport.forHeader(h)::parseLine;
        }
        throw new SettlementFormatException(
                1,
                "expected the header " + SandboxSettlementFile.HEADER
                        + " or a Stripe itemized payout reconciliation report with the columns "
                        + String.join(",", StripeItemizedReport.REQUIRED));
    }

    /**
     * The lines of a file, in file order, each with its line number as {@link Numbered#lineNo()} (the header is line
     * 1). The stream reads {@code in} as it is consumed and does not close it.
     */
    public static Stream<Numbered> read(BufferedReader in) throws IOException {
        LineParser parser = parserFor(in.readLine());
        Spliterator<Numbered> lines = new Spliterators.AbstractSpliterator<>(Long.MAX_VALUE, Spliterator.ORDERED) {
            long lineNo = 1;

            @Override
            public boolean tryAdvance(Consumer<? super Numbered> action) {
                while (true) {
                    String line;
                    try {
                        line = in.readLine();
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                    if (line == null) {
                        return false;
                    }
                    lineNo++;
                    SettlementLine parsed = parser.parse(line, lineNo);
                    if (parsed != null) {
                        action.accept(new Numbered(lineNo, parsed));
                        return true;
                    }
                }
            }
        };
        return StreamSupport.stream(lines, false);
    }

    /** A settlement line and where it was read. */
    public record Numbered(long lineNo, SettlementLine line) {}
}
