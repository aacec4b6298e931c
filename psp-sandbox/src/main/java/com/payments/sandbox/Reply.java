package com.payments.sandbox;

/**
 * An answer of the PSP API: HTTP status and JSON body, whether it is an idempotent replay, and how long
 * to hold it back (the timeout tokens and knobs), in milliseconds.
 */
public record Reply(int status, byte[] body, boolean replayed, long delayMs) {

    public Reply delayed(long ms) {
        return new Reply(status, body, replayed, ms);
    }

    public Reply asReplay() {
        return new Reply(status, body, true, 0);
    }

    /** A PSP error: {@code {"error":{"code":..., "message":...}}}; code and message are fixed strings, never input. */
    public static Reply error(int status, String code, String message) {
        String json = "{\"error\":{\"code\":\"" + code + "\",\"message\":\"" + message + "\"}}";
        return new Reply(status, json.getBytes(java.nio.charset.StandardCharsets.UTF_8), false, 0);
    }
}
