package com.payments.api.refunds;

import com.payments.api.config.ApiConfig;
import com.payments.api.idempotency.IdempotencyService;
import com.payments.api.idempotency.StoredAnswers;
import com.payments.api.merchants.ApiRoles;
import com.payments.api.merchants.MerchantPrincipal;
import com.payments.api.merchants.RateLimited;
import com.payments.api.rest.IdempotentResponses;
import com.payments.api.rest.PathParams;
import com.payments.contracts.tracing.TraceHeaders;
import io.quarkus.security.identity.SecurityIdentity;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import org.jboss.resteasy.reactive.RestHeader;
import org.jboss.resteasy.reactive.RestPath;
import org.jboss.resteasy.reactive.RestResponse;

/** {@code POST /v1/payments/{id}/refunds} (docs/architecture.md §4, docs/api.md): reserve a refund, 202 while it executes. */
@Path("/v1/payments/{id}/refunds")
@RolesAllowed(ApiRoles.MERCHANT)
@RateLimited
public class RefundResource {
    private final SecurityIdentity identity;
    private final RefundService refunds;
    private final StoredAnswers answers;
    private final TraceHeaders traceHeaders;
    private final int maxBodyBytes;

    public RefundResource(
            SecurityIdentity identity,
            RefundService refunds,
            StoredAnswers answers,
            TraceHeaders traceHeaders,
            ApiConfig config) {
        this.identity = identity;
        this.refunds = refunds;
        this.answers = answers;
        this.traceHeaders = traceHeaders;
        this.maxBodyBytes = config.limits().maxBodyBytes();
    }

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<RestResponse<byte[]>> refund(
            @RestHeader("Idempotency-Key") String idempotencyKey, @RestPath String id, byte[] body) {
        String key = IdempotencyService.validateKey(idempotencyKey);
        RefundRequest request = RefundRequest.parse(body, maxBodyBytes);
        return refunds.refund(MerchantPrincipal.of(identity), PathParams.uuid(id), key, request, traceHeaders.current())
                .map(outcome -> outcome instanceof RefundOutcome.Replayed replayed
                        ? IdempotentResponses.replay(replayed.answer())
                        : IdempotentResponses.first(
                                answers.refundAccepted(((RefundOutcome.Reserved) outcome).refund())));
    }
}
