package com.payments.sandbox.rest;

import com.payments.sandbox.Counters;
import com.payments.sandbox.Faults;
import com.payments.sandbox.service.FaultSettings;
import com.payments.sandbox.service.PspService;
import com.payments.sandbox.service.RefundRequestLog;
import com.payments.sandbox.service.SandboxClock;
import com.payments.sandbox.service.SettlementService;
import com.payments.sandbox.service.SettlementService.Injected;
import com.payments.sandbox.service.WebhookService;
import com.payments.sandbox.service.WebhookService.Delivery;
import com.payments.sandbox.stripe.StripeBalance;
import com.payments.sandbox.stripe.StripeIdempotency;
import com.payments.sandbox.stripe.StripeStore;
import io.smallrye.mutiny.Multi;
import io.vertx.mutiny.core.buffer.Buffer;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.MediaType;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import org.jboss.resteasy.reactive.RestQuery;

/**
 * The sandbox's test API (not part of the PSP protocol): counters per reference, the refund request log, runtime
 * fault knobs, a controllable clock, the webhook delivery log, injected settlement discrepancies, synthetic
 * settlement files, and a reset.
 */
@Path("/test")
@Produces(MediaType.APPLICATION_JSON)
public class TestApiResource {

    /** Body of {@code PUT /test/clock}. */
    public record ClockRequest(Instant instant) {}

    /** Answer of the clock endpoints: the frozen instant, null when the clock follows real time. */
    public record ClockState(Instant frozenAt, Instant now) {}

    /** The discrepancies injected into a day's file. */
    public record DiscrepancyReport(LocalDate date, int lines, List<Injected> injected) {}

    static final long MAX_SYNTHETIC_LINES = 100_000_000L;
    private static final int CHUNK_LINES = 8_192;

    private final PspService psp;
    private final FaultSettings faults;
    private final SandboxClock clock;
    private final WebhookService webhooks;
    private final SettlementService settlements;
    private final RefundRequestLog refundLog;
    private final StripeStore stripe;
    private final StripeIdempotency stripeKeys;
    private final StripeBalance stripeBalance;

    public TestApiResource(
            PspService psp,
            FaultSettings faults,
            SandboxClock clock,
            WebhookService webhooks,
            SettlementService settlements,
            RefundRequestLog refundLog,
            StripeStore stripe,
            StripeIdempotency stripeKeys,
            StripeBalance stripeBalance) {
        this.psp = psp;
        this.faults = faults;
        this.clock = clock;
        this.webhooks = webhooks;
        this.settlements = settlements;
        this.refundLog = refundLog;
        this.stripe = stripe;
        this.stripeKeys = stripeKeys;
        this.stripeBalance = stripeBalance;
    }

    @GET
    @Path("/counters/{reference}")
    public Counters counters(@PathParam("reference") String reference) {
        return psp.counters(reference);
    }

    /**
     * Forgets every charge, refund, key, counter, settlement item and webhook log, of both modes; resets knobs and
     * clock.
     */
    @DELETE
    @Path("/state")
    public void reset() {
        psp.reset();
        stripe.reset();
        stripeKeys.reset();
        settlements.reset();
        webhooks.reset();
        refundLog.reset();
        faults.reset();
        clock.release();
    }

    /** The last {@code POST /v1/refunds} requests (of {@code reference}, or all), oldest first, and how many overlap. */
    @GET
    @Path("/refund-requests")
    public RefundRequestLog.Snapshot refundRequests(@RestQuery String reference) {
        return refundLog.snapshot(reference);
    }

    @GET
    @Path("/faults")
    public Faults faults() {
        return faults.current();
    }

    @PUT
    @Path("/faults")
    @Consumes(MediaType.APPLICATION_JSON)
    public Faults updateFaults(Faults patch) {
        if (patch == null) {
            throw new WebApplicationException(400);
        }
        return faults.update(patch);
    }

    @DELETE
    @Path("/faults")
    public Faults resetFaults() {
        return faults.reset();
    }

    @GET
    @Path("/clock")
    public ClockState clock() {
        return new ClockState(clock.frozenAt(), clock.now());
    }

    @PUT
    @Path("/clock")
    @Consumes(MediaType.APPLICATION_JSON)
    public ClockState freeze(ClockRequest request) {
        if (request == null || request.instant() == null) {
            throw new WebApplicationException(400);
        }
        clock.freeze(request.instant());
        return clock();
    }

    @DELETE
    @Path("/clock")
    public ClockState release() {
        clock.release();
        return clock();
    }

    @GET
    @Path("/webhooks")
    public List<Delivery> webhooks(@RestQuery String reference) {
        return webhooks.deliveries(reference);
    }

    @GET
    @Path("/settlements/{date: \\d{4}-\\d{2}-\\d{2}}/discrepancies")
    public DiscrepancyReport discrepancies(@PathParam("date") String date) {
        LocalDate day = SettlementResource.parse(date);
        if (day == null) {
            throw new WebApplicationException(400);
        }
        SettlementService.SettlementFile file = settlements.render(day);
        List<Injected> injected = new ArrayList<>(file.injected());
        injected.addAll(stripeBalance.injected(day));
        return new DiscrepancyReport(day, file.lines(), injected);
    }

    /** A synthetic settlement file of {@code lines} lines, streamed in chunks; see {@link SettlementService#appendSynthetic}. */
    @GET
    @Path("/settlements/synthetic.csv")
    @Produces(SettlementResource.TEXT_CSV)
    public Multi<Buffer> synthetic(
            @RestQuery String date, @RestQuery Long lines, @RestQuery Long seed, @RestQuery String currency) {
        LocalDate day = date == null ? LocalDate.of(2030, 1, 1) : SettlementResource.parse(date);
        long total = lines == null ? 1_000_000L : lines;
        long s = seed == null ? 1L : seed;
        String cur = currency == null ? "EUR" : currency;
        if (day == null || total < 0 || total > MAX_SYNTHETIC_LINES || !cur.matches("[A-Z]{3}")) {
            throw new WebApplicationException(400);
        }
        long chunks = (total + CHUNK_LINES - 1) / CHUNK_LINES;
        Multi<Buffer> body = Multi.createFrom().range(0, (int) chunks).map(chunk -> {
            long from = (long) chunk * CHUNK_LINES;
            long to = Math.min(total, from + CHUNK_LINES);
            StringBuilder sb = new StringBuilder(CHUNK_LINES * 112);
            settlements.appendSynthetic(sb, day, s, cur, from, to, total);
            return Buffer.buffer(sb.toString());
        });
        return Multi.createBy()
                .concatenating()
                .streams(Multi.createFrom().item(Buffer.buffer(SettlementService.HEADER)), body);
    }
}
