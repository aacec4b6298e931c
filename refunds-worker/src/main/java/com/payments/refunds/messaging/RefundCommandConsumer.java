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
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.kafka.api.IncomingKafkaRecordMetadata;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.header.Header;
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
    private static final List<String> TRACE_HEADERS = List.of("traceparent", "tracestate");
    private final RefundExecutionService service;
    private final ObjectMapper mapper;
    private final RefundsConfig.Processing processing;
    private final KeyedLanes lanes;
    private final RefundsMetrics metrics;

    public RefundCommandConsumer(
            RefundExecutionService service,
            ObjectMapper mapper,
            RefundsConfig config,
            PspConcurrencyLimit pspLimit,
            MeterRegistry registry,
            RefundsMetrics metrics) {
        this.service = service;
        this.metrics = metrics;
        this.mapper = mapper;
        this.processing = config.processing();
        this.lanes = new KeyedLanes(() -> 2 * pspLimit.limit());
        Gauge.builder("refunds.commands.in.flight", lanes, KeyedLanes::admitted)
                .description("refund-commands records admitted and not yet acknowledged")
                .register(registry);
    }

    /** Completes once the record is admitted; the record is acked or nacked when its processing ends. */
    @Incoming("refund-commands")
    public Uni<Void> consume(Message<String> message) {
        IncomingKafkaRecordMetadata<?, ?> metadata =
                message.getMetadata(IncomingKafkaRecordMetadata.class).orElse(null);
        String key = metadata == null ? null : (String) metadata.getKey();
        Map<String, String> trace = metadata == null ? Map.of() : traceHeaders(metadata.getHeaders());
        return lanes.submit(key, () -> process(message.getPayload(), trace)
                .onItemOrFailure()
                .transformToUni((ignored, failure) -> Uni.createFrom()
                        .completionStage(failure == null ? message.ack() : deadLetter(message, failure))));
    }

    private CompletionStage<Void> deadLetter(Message<String> message, Throwable failure) {
        metrics.deadLettered(failure instanceof InvalidCommandException ? "invalid_command" : "failed");
        return message.nack(failure);
    }

    /**
     * The command's trace context ({@code traceparent}, {@code tracestate}), passed on to the events its outcome
     * enqueues.
     */
    private static Map<String, String> traceHeaders(Headers headers) {
        Map<String, String> trace = new HashMap<>(2);
        for (String name : TRACE_HEADERS) {
            Header header = headers.lastHeader(name);
            if (header != null && header.value() != null) {
                trace.put(name, new String(header.value(), StandardCharsets.UTF_8));
            }
        }
        return trace;
    }

    private Uni<Void> process(String value, Map<String, String> trace) {
        RefundRequested command;
        try {
            command = parse(value);
        } catch (InvalidCommandException e) {
            return Uni.createFrom().failure(e);
        }
        return service.execute(command, trace)
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
