package com.payments.api.service;

import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;

/**
 * W3C trace context for outbox rows, so that the relay can continue the request's trace. OpenTelemetry is not wired
 * into the service yet: the caller's {@code traceparent} (validated) is kept, otherwise a new one is started here.
 */
public final class TraceContext {
    private static final Pattern TRACEPARENT = Pattern.compile("00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}");
    private static final HexFormat HEX = HexFormat.of();
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
        // HexFormat, not String.format: formatting cost more than the rest of this class per capture
        return "00-" + HEX.toHexDigits(random.nextLong()) + HEX.toHexDigits(random.nextLong()) + "-"
                + HEX.toHexDigits(random.nextLong() | 1L) + "-01";
    }
}
