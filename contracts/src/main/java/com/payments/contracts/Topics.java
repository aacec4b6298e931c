package com.payments.contracts;

/** Kafka topics of docs/architecture.md §6. Record key = payment id, so each payment's events keep their order. */
public final class Topics {
    public static final String REFUND_COMMANDS = "refund-commands";
    public static final String PAYMENT_EVENTS = "payment-events";
    public static final String REFUND_COMMANDS_DLQ = "refund-commands-dlq";

    private Topics() {}
}
