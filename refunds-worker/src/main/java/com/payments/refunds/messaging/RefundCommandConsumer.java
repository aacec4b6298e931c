package com.payments.refunds.messaging;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.payments.contracts.events.RefundRequested;
import com.payments.psp.PspConcurrencyLimit;
import com.payments.refunds.config.RefundsConfig;
import com.payments.refunds.repository.DeadLetterRepository;
import com.payments.refunds.repository.DeadLetterRepository.DeadLetter;
import com.payments.refunds.service.InvalidCommandException;
import com.payments.refunds.service.RefundExecutionService;
import com.payments.refunds.service.RefundsMetrics;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.api.trace.Span;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.kafka.api.IncomingKafkaRecordMetadata;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.apache.kafka.common.header.Headers;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;

/**
 * Consumes {@code refund-commands}, many records at once and one at a time per payment (the record key), in their
 * order: see {@link KeyedLanes}. The records in flight are twice the current PSP limit ({@link PspConcurrencyLimit}),
 * so that the PSP calls, not the database phases around them, fill it; the connector waits while they are all taken.
 * A payment's lane holds at most {@code refunds.lanes.max-waiting} records behind its running one; a record beyond
 * that is handed to the pending-refund sync (its refund made due in the database), so that no record waits past
 * {@code throttled.unprocessed-record-max-age.ms} and one payment's refunds cannot hold the others back. A record is
 * acknowledged after its outcome transaction (or its hand-off) committed, and the throttled commit strategy commits
 * an offset only once every record before it is acknowledged too. A record that fails (unparseable, invalid, or
 * failing after {@code refunds.processing.retries} retries) is first recorded in {@code refund_dead_letters} (the
 * operator console's DLQ), then nacked, and goes to {@code refund-commands-dlq} with the reason in its
 * {@code dead-letter-reason} header.
 */
@ApplicationScoped
public class RefundCommandConsumer {
    /** How long a dead letter's row is retried before the record goes to the topic without it. */
    static final Duration RECORD_WITHIN = Duration.ofSeconds(30);

    private final RefundExecutionService service;
    private final ObjectMapper mapper;
    private final RefundsConfig.Processing processing;
    private final KeyedLanes lanes;
    private final RefundsMetrics metrics;
    private final RecordTracing tracing;
    private final DeadLetterRepository deadLetters;
    private final Pool pool;

    public RefundCommandConsumer(
            RefundExecutionService service,
            ObjectMapper mapper,
            RefundsConfig config,
            PspConcurrencyLimit pspLimit,
            MeterRegistry registry,
            RefundsMetrics metrics,
            RecordTracing tracing,
            DeadLetterRepository deadLetters,
            Pool pool) {
        this.service = service;
        this.deadLetters = deadLetters;
        this.pool = pool;
        this.metrics = metrics;
        this.mapper = mapper;
        this.processing = config.processing();
        this.tracing = tracing;
        this.lanes = new KeyedLanes(() -> 2 * pspLimit.limit(), config.lanes().maxWaiting());
        Gauge.builder("refunds.commands.in.flight", lanes, KeyedLanes::admitted)
                .description("refund-commands records admitted and not yet acknowledged")
                .register(registry);
    }

    /** Completes once the record is admitted; the record is acked or nacked when its processing ends. */
    @Incoming("refund-commands")
    public Uni<Void> consume(Message<String> message) {
        Optional<IncomingKafkaRecordMetadata> metadata = message.getMetadata(IncomingKafkaRecordMetadata.class);
        String key = metadata.map(m -> (String) m.getKey()).orElse(null);
        Headers headers = metadata.map(IncomingKafkaRecordMetadata::getHeaders).orElse(null);
        return lanes.submit(
                key,
                () -> handle(message, metadata, key, headers, service::execute),
                () -> handle(message, metadata, key, headers, this::handOff));
    }

    /**
     * Takes no more records ({@link KeyedLanes#stop}): a record not yet started (waiting in its payment's lane or for
     * admission) stays unacknowledged, so its offset is not committed and the next worker gets it again. Completes
     * once every record already started is acknowledged (its refund's outcome committed) or dead-lettered.
     */
    public CompletionStage<Void> stop() {
        return lanes.stop();
    }

    /** Records started and not yet acknowledged or dead-lettered. */
    public int inFlight() {
        return lanes.admitted();
    }

    /** Runs {@code action} on the record's command, then acks the record, or dead-letters it when that failed. */
    private Uni<Void> handle(
            Message<String> message,
            Optional<IncomingKafkaRecordMetadata> metadata,
            String key,
            Headers headers,
            Function<RefundRequested, Uni<Void>> action) {
        return tracing.process("refund-commands", headers, key, () -> process(message.getPayload(), action))
                .onItemOrFailure()
                .transformToUni((ignored, failure) -> failure == null
                        ? Uni.createFrom().completionStage(message.ack())
                        : deadLetter(message, metadata, key, failure));
    }

    /**
     * The record came while its payment's lane was full: instead of waiting there (past the record's time budget,
     * and taking a slot from other payments), the refund is left to the pending-refund sync, due at once, and the
     * record is acknowledged once that is committed.
     */
    private Uni<Void> handOff(RefundRequested command) {
        return service.handOff(command)
                .invoke(handed -> {
                    if (handed) {
                        metrics.handedOff();
                        Log.infof(
                                "refund %s handed to the pending-refund sync: the lane of payment %s is full (command %s)",
                                command.refundId(), command.paymentId(), command.eventId());
                    }
                })
                .replaceWithVoid();
    }

    /**
     * Records the record in {@code refund_dead_letters}, then nacks it (the connector sends it to the dead-letter
     * topic). The row comes first: a crash between the two delivers the record again, and its row (one per source
     * offset) is not written twice. While the database refuses the row, the record waits unacknowledged, retried for
     * up to {@link #RECORD_WITHIN} (well inside the throttled strategy's 60 s max age); then it is dead-lettered
     * without its row (the topic, {@code refunds_dlq_records} and the log at ERROR still have it).
     */
    private Uni<Void> deadLetter(
            Message<String> message, Optional<IncomingKafkaRecordMetadata> metadata, String key, Throwable failure) {
        metrics.deadLettered(failure instanceof InvalidCommandException ? "invalid_command" : "failed");
        Uni<Void> recorded = metadata.map(m -> deadLetters
                        .record(pool, deadLetter(m, key, message.getPayload(), failure))
                        .onFailure()
                        .retry()
                        .withBackOff(processing.initialBackoff(), processing.maxBackoff())
                        .expireIn(RECORD_WITHIN.toMillis())
                        .onFailure()
                        .recoverWithItem(e -> {
                            Log.errorf(
                                    "Dead letter %s-%d@%d not recorded in refund_dead_letters (%s): it goes to the"
                                            + " dead-letter topic without its row",
                                    m.getTopic(), m.getPartition(), m.getOffset(), e.getMessage());
                            return null;
                        }))
                .orElseGet(() -> Uni.createFrom().voidItem());
        return recorded.chain(() -> Uni.createFrom().completionStage(message.nack(failure)));
    }

    private DeadLetter deadLetter(IncomingKafkaRecordMetadata<?, ?> m, String key, String value, Throwable failure) {
        UUID refundId = null;
        UUID paymentId = null;
        try {
            JsonNode node = value == null ? null : mapper.readTree(value);
            refundId = node == null ? null : uuid(node.path("refundId"));
            paymentId = node == null ? null : uuid(node.path("paymentId"));
        } catch (Exception unparseable) {
            // the reason says so; the row keeps the record's key
        }
        // as the connector's dead-letter-reason header: the message, else the exception itself
        String reason = failure.getMessage() != null ? failure.getMessage() : failure.toString();
        return new DeadLetter(m.getTopic(), m.getPartition(), m.getOffset(), key, refundId, paymentId, reason);
    }

    private static UUID uuid(JsonNode node) {
        try {
            return node.isTextual() ? UUID.fromString(node.asText()) : null;
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    private Uni<Void> process(String value, Function<RefundRequested, Uni<Void>> action) {
        RefundRequested command;
        try {
            command = parse(value);
        } catch (InvalidCommandException e) {
            return Uni.createFrom().failure(e);
        }
        Span.current().setAttribute(RecordTracing.REFUND_ID, command.refundId().toString());
        return action.apply(command)
                .onFailure(e -> !(e instanceof InvalidCommandException))
                .retry()
                .withBackOff(processing.initialBackoff(), processing.maxBackoff())
                .atMost(processing.retries());
    }

    private RefundRequested parse(String value) {
        if (value == null) {
            throw new InvalidCommandException("empty record value");
        }
        RefundRequested command;
        try {
            command = mapper.readValue(value, RefundRequested.class);
        } catch (Exception e) {
            throw new InvalidCommandException(
                    "unparseable RefundRequested: " + e.getClass().getSimpleName());
        }
        if (!RefundRequested.TYPE.equals(command.type())) {
            throw new InvalidCommandException("unexpected event type " + command.type());
        }
        if (command.eventId() == null
                || command.refundId() == null
                || command.paymentId() == null
                || command.currency() == null
                || command.amount() <= 0) {
            throw new InvalidCommandException(
                    "RefundRequested without eventId, refundId, paymentId, currency or amount");
        }
        return command;
    }
}
