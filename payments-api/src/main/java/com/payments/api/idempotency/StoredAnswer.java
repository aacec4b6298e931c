package com.payments.api.idempotency;

/** A finished merchant answer: status and the exact body bytes (stored for replays), and whether it is a replay. */
public record ApiResponse(int status, byte[] body, boolean replayed) {}
