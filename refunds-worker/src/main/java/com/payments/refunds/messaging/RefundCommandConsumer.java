package com.payments.refunds.messaging;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.payments.contracts.events.RefundRequested;
import com.payments.refunds.config.RefundsConfig;
import com.payments.refunds.service.InvalidCommandException;
import com.payments.refunds.service.RefundExecutionService;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.reactive.messaging.Incoming;

/**
 * Consumes {@code refund-commands}. The returned {@code Uni} completes after the outcome transaction committed, and
 * only then is the record acknowledged (its offset committed). A record that fails (unparseable, invalid, or failing
 * after {@code refunds.processing.retries} retries) is nacked and goes to {@code refund-commands-dlq} with the reason
 * in its {@code dead-letter-reason} header; the consumer goes on with the next record.
 */
@ApplicationScoped
public class RefundCommandConsumer {
    private final RefundExecutionService service;
    private final ObjectMapper mapper;
    private final RefundsConfig.Processing processing;

    public RefundCommandConsumer(RefundExecutionService service, ObjectMapper mapper, RefundsConfig config) {
        this.service = service;
        this.mapper = mapper;
        this.processing = config.processing();
    }

    @Incoming("refund-commands")
    public Uni<Void> consume(String value) {
        RefundRequested command;
        try {
            command = parse(value);
        } catch (InvalidCommandException e) {
            return Uni.createFrom().failure(e);
        }
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
