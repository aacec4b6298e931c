package com.payments.api.idempotency;

/**
 * The answer stored for an idempotency key and replayed for it byte for byte (docs/architecture.md §4): the status
 * code and the exact body bytes. Only the idempotency layer builds one ({@link StoredAnswers}).
 */
public record StoredAnswer(int status, byte[] body) {}
