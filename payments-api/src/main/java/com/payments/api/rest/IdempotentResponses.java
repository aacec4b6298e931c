package com.payments.api.rest;

import com.payments.api.idempotency.StoredAnswer;
import jakarta.ws.rs.core.MediaType;
import org.jboss.resteasy.reactive.RestResponse;

/** The HTTP answer of a request under an Idempotency-Key: the stored status and bytes, marked when replayed. */
public final class IdempotentResponses {
    /** The header of a replayed answer (IETF Idempotency-Key draft). */
    public static final String REPLAYED_HEADER = "Idempotent-Replayed";

    private IdempotentResponses() {}

    /** The first answer to the key's request: the bytes that the key stores. */
    public static RestResponse<byte[]> first(StoredAnswer answer) {
        return builder(answer).build();
    }

    /** A replay: the stored status and body byte for byte, with {@code Idempotent-Replayed: true}. */
    public static RestResponse<byte[]> replay(StoredAnswer answer) {
        return builder(answer).header(REPLAYED_HEADER, "true").build();
    }

    private static RestResponse.ResponseBuilder<byte[]> builder(StoredAnswer answer) {
        return RestResponse.ResponseBuilder.<byte[]>create(answer.status())
                .entity(answer.body())
                .type(MediaType.APPLICATION_JSON_TYPE);
    }
}
