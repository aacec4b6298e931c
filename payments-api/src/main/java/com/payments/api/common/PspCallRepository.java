package com.payments.api.common;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.UUID;

/**
 * {@code psp_calls}: each call to the PSP for a payment, for its story on the operator console. The capture's charge
 * is written by the statement that records its outcome ({@link PaymentRepository#recordOutcomes}, no extra round
 * trip on the capture path); the resolver's look-ups and re-sent charges here, in its transaction.
 */
@ApplicationScoped
public class PspCallRepository {

    /**
     * One call: {@code kind} {@code charge} or {@code lookup}; {@code attempt} 0 for the capture's charge, the
     * resolver's attempt number otherwise; what came back in {@code outcome}.
     */
    public record PspCall(String kind, int attempt, Instant startedAt, int durationMs, String outcome) {
        public OffsetDateTime startedAtUtc() {
            return OffsetDateTime.ofInstant(startedAt, ZoneOffset.UTC);
        }
    }

    public Uni<Void> insert(SqlClient client, UUID paymentId, List<PspCall> calls) {
        if (calls.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        return client.preparedQuery(
                        """
                        INSERT INTO psp_calls (payment_id, kind, attempt, started_at, duration_ms, outcome)
                        SELECT $1, * FROM unnest($2::text[], $3::int4[], $4::timestamptz[], $5::int4[], $6::text[])""")
                .execute(Tuple.of(
                        paymentId,
                        calls.stream().map(PspCall::kind).toArray(String[]::new),
                        calls.stream().map(PspCall::attempt).toArray(Integer[]::new),
                        calls.stream().map(PspCall::startedAtUtc).toArray(OffsetDateTime[]::new),
                        calls.stream().map(PspCall::durationMs).toArray(Integer[]::new),
                        calls.stream().map(PspCall::outcome).toArray(String[]::new)))
                .replaceWithVoid();
    }
}
