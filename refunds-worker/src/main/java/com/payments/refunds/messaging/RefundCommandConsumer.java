package com.payments.refunds.messaging;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.payments.contracts.events.RefundRequested;
import com.payments.psp.PspConcurrencyLimit;
import com.payments.refunds.config.RefundsConfig;
import com.payments.refunds.service.InvalidCommandException;
import com.payments.refunds.service.RefundExecutionService;
import com.payments.refunds.service.RefundsMetrics;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.api.trace.Span;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.kafka.api.IncomingKafkaRecordMetadata;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.header.Headers;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;

/**
 * Consumes {@code refund-commands}, many records at once and one at a time per payment (the record key), in their
 * order: see {@link KeyedLanes}. The records in flight are twice the current PSP limit ({@link PspConcurrencyLimit}),
 * so that the PSP calls, not the database phases around them, fill it; the connector waits while they are all taken.
 * A record is acknowledged after its outcome transaction committed, and the throttled commit strategy commits an
 * offset only once every record before it is acknowledged too. A record that fails (unparseable, invalid, or failing
 * after {@code refunds.processing.retries} retries) is nacked and goes to {@code refund-commands-dlq} with the reason
 * in its {@code dead-letter-reason} header.
 */
@ApplicationScoped
public class RefundCommandConsumer {
    private final RefundExecutionService service;
    private final ObjectMapper mapper;
    private final RefundsConfig.Processing processing;
    private final KeyedLanes lanes;
    private final RefundsMetrics metrics;
    private final RecordTracing tracing;

    public RefundCommandConsumer(
            RefundExecutionService service,
            ObjectMapper mapper,
            RefundsConfig config,
            PspConcurrencyLimit pspLimit,
            MeterRegistry registry,
            RefundsMetrics metrics,
            RecordTracing tracing) {
        this.service = service;
        this.metrics = metrics;
        this.mapper = mapper;
        this.processing = config.processing();
        this.tracing = tracing;
        this.lanes = new KeyedLanes(() -> 2 * pspLimit.limit());
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
                key, () -> tracing.process("refund-commands", headers, key, () -> process(message.getPayload()))
                        .onItemOrFailure()
                        .transformToUni((ignored, failure) -> Uni.createFrom()
                                .completionStage(failure == null ? message.ack() : deadLetter(message, failure))));
    }

    private CompletionStage<Void> deadLetter(Message<String> message, Throwable failure) {
        metrics.deadLettered(failure instanceof InvalidCommandException ? "invalid_command" : "failed");
        return message.nack(failure);
    }

    private Uni<Void> process(String value) {
        RefundRequested command;
        try {
            command = parse(value);
        } catch (InvalidCommandException e) {
            return Uni.createFrom().failure(e);
        }
        Span.current().setAttribute(RecordTracing.REFUND_ID, command.refundId().toString());
        return service.execute(command)
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
