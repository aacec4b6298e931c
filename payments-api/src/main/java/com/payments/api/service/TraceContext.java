package com.payments.api.service;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;

/**
 * W3C trace context for outbox rows, so that the relay can continue the request's trace. OpenTelemetry is not wired
 * into the service yet: the caller's {@code traceparent} (validated) is kept, otherwise a new one is started here.
 */
public final class TraceContext {
    private static final Pattern TRACEPARENT = Pattern.compile("00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}");
    private static final Pattern TRACESTATE = Pattern.compile("[\\x20-\\x7E]{1,512}");

    private TraceContext() {}

    /** Headers for the outbox row: {@code traceparent} and, when valid, {@code tracestate}. */
    public static Map<String, String> headers(String traceparent, String tracestate) {
        Map<String, String> headers = new HashMap<>(2);
        if (traceparent != null && TRACEPARENT.matcher(traceparent).matches()) {
            headers.put("traceparent", traceparent);
            if (tracestate != null && TRACESTATE.matcher(tracestate).matches()) {
                headers.put("tracestate", tracestate);
            }
        } else {
            headers.put("traceparent", newTraceparent());
        }
        return headers;
    }

    static String newTraceparent() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        StringBuilder out = new StringBuilder(55).append("00-");
        hex(out, random.nextLong());
        hex(out, random.nextLong());
        out.append('-');
        hex(out, random.nextLong() | 1L);
        return out.append("-01").toString();
    }

    /** 16 lowercase hex digits, zero-padded (String.format costs more than the rest of this class per capture). */
    private static void hex(StringBuilder out, long value) {
        for (int shift = 60; shift >= 0; shift -= 4) {
            out.append(Character.forDigit((int) (value >>> shift) & 0xF, 16));
        }
    }
}
