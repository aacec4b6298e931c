package com.payments.api;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jboss.logmanager.ExtLogRecord;

/**
 * Captures every log record the application emits while open (a handler on the root logger of JBoss LogManager,
 * which Quarkus logs through), as the formatted text an operator would see: logger, message with its arguments and
 * the stack trace with every exception message.
 */
final class LogCapture implements AutoCloseable {
    private static final Pattern DIGIT_RUN = Pattern.compile("(?<![0-9])[0-9](?:[ -]?[0-9]){12,18}(?![0-9])");
    /**
     * A UUID (payment, refund, event ids): its digit groups can read as a Luhn-valid run across its dashes, as
     * {@code evt_74b2f49c-e373-4034-8548-42073a63f414} did ("373-4034-8548-42073", CI on 2026-12-07).
     */
    private static final Pattern UUID =
            Pattern.compile("(?<![0-9a-fA-F])\\p{XDigit}{8}(?:-\\p{XDigit}{4}){3}-\\p{XDigit}{12}(?![0-9a-fA-F])");

    private final List<String> lines = new ArrayList<>();
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord record) {
            String message = record instanceof ExtLogRecord ext
                    ? ext.getFormattedMessage()
                    : record.getMessage() + " " + java.util.Arrays.toString(record.getParameters());
            StringBuilder line =
                    new StringBuilder(record.getLoggerName()).append(' ').append(message);
            if (record.getThrown() != null) {
                StringWriter trace = new StringWriter();
                record.getThrown().printStackTrace(new PrintWriter(trace));
                line.append('\n').append(trace);
            }
            synchronized (lines) {
                lines.add(line.toString());
            }
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    };
    private final Logger root = Logger.getLogger("");

    LogCapture() {
        handler.setLevel(Level.ALL);
        root.addHandler(handler);
    }

    List<String> lines() {
        synchronized (lines) {
            return List.copyOf(lines);
        }
    }

    /** Lines containing any of the given values (values shorter than 6 characters are too common to mean a leak). */
    List<String> linesContaining(List<String> values) {
        List<String> found = new ArrayList<>();
        for (String line : lines()) {
            for (String value : values) {
                if (value != null && value.length() >= 6 && line.contains(value)) {
                    found.add("[" + value + "] " + line);
                }
            }
        }
        return found;
    }

    /**
     * Lines with something that looks like a card number: 13–19 digits (spaces or dashes allowed), Luhn valid, outside
     * the UUIDs.
     */
    List<String> linesWithCardNumbers() {
        List<String> found = new ArrayList<>();
        for (String line : lines()) {
            Matcher m = DIGIT_RUN.matcher(UUID.matcher(line).replaceAll("<uuid>"));
            while (m.find()) {
                if (luhn(m.group().replaceAll("[ -]", ""))) {
                    found.add("[" + m.group() + "] " + line);
                }
            }
        }
        return found;
    }

    static boolean luhn(String digits) {
        int sum = 0;
        for (int i = 0; i < digits.length(); i++) {
            int d = digits.charAt(digits.length() - 1 - i) - '0';
            if (i % 2 == 1) {
                d *= 2;
                if (d > 9) {
                    d -= 9;
                }
            }
            sum += d;
        }
        return sum % 10 == 0;
    }

    @Override
    public void close() {
        root.removeHandler(handler);
    }
}
