package com.payments.api.client;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * A PSP answer about a charge: {@code id, reference, status ("succeeded"|"declined"), declineCode}, or, for an
 * error status, {@code error.code}.
 */
@RegisterForReflection
@JsonIgnoreProperties(ignoreUnknown = true)
public record PspCharge(String id, String reference, String status, String declineCode, PspError error) {

    @RegisterForReflection
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record PspError(String code, String message) {}

    public boolean succeeded() {
        return "succeeded".equals(status);
    }

    public boolean declined() {
        return "declined".equals(status);
    }
}
