package com.payments.sandbox.service;

import com.payments.sandbox.Capture;
import com.payments.sandbox.Faults;
import com.payments.sandbox.Movement;
import com.payments.sandbox.config.SandboxConfig;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Settlement files. Every money movement is filed under its settlement day when it happens: the UTC
 * day of its creation, or the next day when it was created in the last {@code psp.settlement.cutoff-window}
 * of the day. A file is rendered on request, sorted by time, with the injected discrepancies in force.
 */
@ApplicationScoped
public class SettlementService {

    public static final String HEADER = "psp_reference,type,reference,amount,fee,currency,settled_at\n";
    private static final long DAY_MS = 86_400_000L;

    /**
     * One line of a settlement file: a money movement as filed, with its amount in the file (an injected mismatch
     * changes it) and its fee. The sandbox stands for the PSP and shares no main code with the services' side of the
     * protocol, which reads these files (psp-common's {@code SettlementLine}), so that neither side can change the
     * format for both unseen (psp-common is only a test dependency here).
     */
    private record Line(Movement movement, long amount, long fee) {
        Line(Movement movement, long fee) {
            this(movement, movement.amount(), fee);
        }
    }

    /** Lines in the file's order: by time, then by PSP reference. */
    private static final Comparator<Line> FILE_ORDER = Comparator.comparing(
                    (Line line) -> line.movement().at())
            .thenComparing(line -> line.movement().pspReference());

    /** A discrepancy injected into a file: DROPPED, AMOUNT_CHANGED or PHANTOM_CHARGE. */
    public record Injected(String kind, String pspReference, String reference, long originalAmount, long fileAmount) {}

    /** A rendered file and what was injected into it. */
    public record SettlementFile(LocalDate date, String csv, int lines, List<Injected> injected) {}

    private final ConcurrentHashMap<Long, ConcurrentLinkedQueue<Movement>> days = new ConcurrentHashMap<>();
    private final FaultSettings faults;
    private final long windowMs;
    private final long feeBps;
    private final long feeFixed;
    private final long seed;

    public SettlementService(FaultSettings faults, SandboxConfig config) {
        this.faults = faults;
        this.windowMs = config.settlement().cutoffWindow().toMillis();
        this.feeBps = config.settlement().feeBps();
        this.feeFixed = config.settlement().feeFixed();
        this.seed = config.settlement().discrepancies().seed();
    }

    /** Files a money movement under its settlement day. */
    public void record(Movement movement) {
        long day = settlementDay(movement.at());
        ConcurrentLinkedQueue<Movement> queue = days.get(day);
        if (queue == null) {
            queue = days.computeIfAbsent(day, d -> new ConcurrentLinkedQueue<>());
        }
        queue.add(movement);
    }

    /** Epoch day of the file an item created at {@code at} goes to. */
    public long settlementDay(Instant at) {
        return Math.floorDiv(at.toEpochMilli() + windowMs, DAY_MS);
    }

    /** Fee of a line: basis points of the amount rounded half up plus the fixed fee for charges, 0 otherwise. */
    public long fee(String type, long amount) {
        return "CHARGE".equals(type) ? (amount * feeBps + 5_000) / 10_000 + feeFixed : 0;
    }

    public void reset() {
        days.clear();
    }

    /** The file of {@code date} with the discrepancy knobs in force. */
    public SettlementFile render(LocalDate date) {
        Faults f = faults.current();
        return render(date, f.settlementDrop(), f.settlementAmountMismatch(), f.settlementPhantom());
    }

    SettlementFile render(LocalDate date, int drop, int mismatch, int phantom) {
        ConcurrentLinkedQueue<Movement> queue = days.get(date.toEpochDay());
        List<Line> lines = new ArrayList<>();
        if (queue != null) {
            for (Movement m : queue) {
                lines.add(new Line(m, fee(m.type(), m.amount())));
            }
        }
        lines.sort(FILE_ORDER);
        List<Injected> injected = new ArrayList<>();
        if (drop > 0 || mismatch > 0 || phantom > 0) {
            inject(date, lines, drop, mismatch, phantom, injected);
        }
        StringBuilder csv = new StringBuilder(HEADER.length() + lines.size() * 120);
        csv.append(HEADER);
        for (Line line : lines) {
            appendLine(csv, line);
        }
        return new SettlementFile(date, csv.toString(), lines.size(), List.copyOf(injected));
    }

    /** Deterministic for a given day, seed and content: re-fetching a file gives the same discrepancies. */
    private void inject(LocalDate date, List<Line> lines, int drop, int mismatch, int phantom, List<Injected> out) {
        Random random = new Random(seed * 1_000_003L + date.toEpochDay());
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            order.add(i);
        }
        Collections.shuffle(order, random);
        int next = 0;
        List<Integer> toDrop = new ArrayList<>();
        for (int i = 0; i < drop && next < order.size(); i++) {
            int index = order.get(next++);
            Line line = lines.get(index);
            out.add(new Injected(
                    "DROPPED", line.movement().pspReference(), line.movement().reference(), line.amount(), 0));
            toDrop.add(index);
        }
        for (int i = 0; i < mismatch && next < order.size(); i++) {
            int index = order.get(next++);
            Line line = lines.get(index);
            long changed = line.amount() + 1 + random.nextInt(1_000);
            out.add(new Injected(
                    "AMOUNT_CHANGED",
                    line.movement().pspReference(),
                    line.movement().reference(),
                    line.amount(),
                    changed));
            lines.set(index, new Line(line.movement(), changed, line.fee()));
        }
        toDrop.sort(Comparator.reverseOrder());
        for (int index : toDrop) {
            lines.remove(index);
        }
        String currency = lines.isEmpty() ? "EUR" : lines.get(0).movement().currency();
        long dayStart = date.toEpochDay() * DAY_MS;
        for (int i = 0; i < phantom; i++) {
            String pspReference = String.format("ch_phantom%014x", random.nextLong() & 0xffffffffffffffL);
            String reference = new UUID(random.nextLong(), random.nextLong()).toString();
            long amount = 100 + random.nextInt(100_000);
            Instant at = Instant.ofEpochMilli(dayStart + (long) (random.nextDouble() * (DAY_MS - windowMs)));
            out.add(new Injected("PHANTOM_CHARGE", pspReference, reference, 0, amount));
            // a CHARGE line nobody made, written as a capture's
            lines.add(new Line(new Capture(pspReference, reference, amount, currency, at), fee("CHARGE", amount)));
        }
        lines.sort(FILE_ORDER);
    }

    private static void appendLine(StringBuilder sb, Line line) {
        Movement m = line.movement();
        sb.append(m.pspReference()).append(',').append(m.type()).append(',');
        appendCsvField(sb, m.reference());
        sb.append(',')
                .append(line.amount())
                .append(',')
                .append(line.fee())
                .append(',')
                .append(m.currency())
                .append(',');
        appendTimestamp(sb, m.at().toEpochMilli());
        sb.append('\n');
    }

    private static void appendCsvField(StringBuilder sb, String value) {
        if (value.indexOf(',') < 0 && value.indexOf('"') < 0) {
            sb.append(value);
        } else {
            sb.append('"').append(value.replace("\"", "\"\"")).append('"');
        }
    }

    /** {@code yyyy-MM-ddTHH:mm:ss.SSSZ} in UTC, without allocating a formatter per line. */
    static void appendTimestamp(StringBuilder sb, long epochMilli) {
        long day = Math.floorDiv(epochMilli, DAY_MS);
        long ms = Math.floorMod(epochMilli, DAY_MS);
        LocalDate date = LocalDate.ofEpochDay(day);
        sb.append(date).append('T');
        pad(sb, ms / 3_600_000, 2);
        sb.append(':');
        pad(sb, ms / 60_000 % 60, 2);
        sb.append(':');
        pad(sb, ms / 1_000 % 60, 2);
        sb.append('.');
        pad(sb, ms % 1_000, 3);
        sb.append('Z');
    }

    private static void pad(StringBuilder sb, long value, int width) {
        String s = Long.toString(value);
        for (int i = s.length(); i < width; i++) {
            sb.append('0');
        }
        sb.append(s);
    }

    // ---------------------------------------------------------------- synthetic files

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    /**
     * Appends lines {@code [from, to)} of the synthetic file of {@code total} lines for {@code date}. Line
     * {@code i} (0-based): REFUND when {@code i % 20 == 19}, CHARGE otherwise; psp_reference {@code ch_} or
     * {@code re_} + 8 hex digits of the seed + 16 hex digits of i; reference
     * {@code SSSSSSSS-0000-4000-8000-IIIIIIIIIIII} for charges and {@code SSSSSSSS-0000-4000-9000-IIIIIIIIIIII}
     * for refunds (S = low 32 bits of the seed, I = i, hex); amount {@code 100 + (i * 7919 + seed) mod
     * 100000}; fee by the configured formula; settled_at {@code date + floor(i * 86400000 / total)} ms.
     */
    public void appendSynthetic(
            StringBuilder sb, LocalDate date, long seed, String currency, long from, long to, long total) {
        long dayStart = date.atStartOfDay().toInstant(ZoneOffset.UTC).toEpochMilli();
        for (long i = from; i < to; i++) {
            boolean refund = i % 20 == 19;
            String type = refund ? "REFUND" : "CHARGE";
            long amount = 100 + Math.floorMod(i * 7919 + seed, 100_000L);
            sb.append(refund ? "re_" : "ch_");
            hex(sb, seed, 8);
            hex(sb, i, 16);
            sb.append(',').append(type).append(',');
            hex(sb, seed, 8);
            sb.append(refund ? "-0000-4000-9000-" : "-0000-4000-8000-");
            hex(sb, i, 12);
            sb.append(',')
                    .append(amount)
                    .append(',')
                    .append(fee(type, amount))
                    .append(',')
                    .append(currency)
                    .append(',');
            appendTimestamp(sb, dayStart + i * DAY_MS / total);
            sb.append('\n');
        }
    }

    private static void hex(StringBuilder sb, long value, int digits) {
        for (int i = digits - 1; i >= 0; i--) {
            sb.append(HEX[(int) (value >>> (4 * i)) & 0xf]);
        }
    }
}
