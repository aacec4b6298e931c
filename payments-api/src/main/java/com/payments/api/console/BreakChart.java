package com.payments.api.console;

import com.payments.api.console.ConsoleReconRepository.DayBreaks;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The reconciliation chart, drawn on the server as SVG: one bar per business date (open breaks), and under it the
 * unmatched amount of that date per currency. Coordinates are computed here; the template only places them.
 */
public record BreakChart(int width, int height, int maxBreaks, List<Bar> bars) {
    static final int BAR_WIDTH = 20;
    static final int GAP = 4;
    static final int PLOT_HEIGHT = 160;
    static final int TOP = 10;
    static final int LEFT = 40;

    /** One day: its bar's geometry, and what the day holds. */
    public record Bar(
            LocalDate date,
            long breaks,
            String unmatched,
            int x,
            int y,
            int barHeight,
            String label,
            int labelX,
            int labelY) {}

    /** The chart of the {@code days} dates ending with {@code last}, from the breaks per date and currency. */
    static BreakChart of(LocalDate last, int days, List<DayBreaks> rows) {
        Map<LocalDate, Long> counts = new TreeMap<>();
        Map<LocalDate, Map<String, Long>> amounts = new TreeMap<>();
        for (DayBreaks row : rows) {
            counts.merge(row.date(), row.breaks(), Long::sum);
            amounts.computeIfAbsent(row.date(), d -> new LinkedHashMap<>())
                    .merge(row.currency(), row.unmatched(), Long::sum);
        }
        long max = Math.max(
                1, counts.values().stream().mapToLong(Long::longValue).max().orElse(1));
        List<Bar> bars = new ArrayList<>(days);
        for (int i = 0; i < days; i++) {
            LocalDate date = last.minusDays(days - 1 - i);
            long n = counts.getOrDefault(date, 0L);
            int h = (int) Math.round((double) n * PLOT_HEIGHT / max);
            int x = LEFT + i * (BAR_WIDTH + GAP);
            StringBuilder unmatched = new StringBuilder();
            amounts.getOrDefault(date, Map.of()).forEach((currency, amount) -> unmatched
                    .append(unmatched.isEmpty() ? "" : ", ")
                    .append(ConsoleFormat.money(amount, currency)));
            bars.add(new Bar(
                    date,
                    n,
                    unmatched.isEmpty() ? "none" : unmatched.toString(),
                    x,
                    TOP + PLOT_HEIGHT - h,
                    h,
                    i % 5 == 0 || i == days - 1 ? date.getDayOfMonth() + "/" + date.getMonthValue() : null,
                    x + BAR_WIDTH / 2,
                    TOP + PLOT_HEIGHT + 16));
        }
        return new BreakChart(LEFT + days * (BAR_WIDTH + GAP) + 10, TOP + PLOT_HEIGHT + 30, (int) max, bars);
    }

    /** y of the plot's baseline. */
    public int baseline() {
        return TOP + PLOT_HEIGHT;
    }

    /** y of the top of the plot, where the maximum sits. */
    public int top() {
        return TOP;
    }

    public int left() {
        return LEFT;
    }

    /** x of the y axis' labels, right-aligned left of the axis. */
    public int tickX() {
        return LEFT - 6;
    }

    /** y of the top label (the maximum). */
    public int topLabelY() {
        return TOP + 4;
    }

    public int barWidth() {
        return BAR_WIDTH;
    }
}
