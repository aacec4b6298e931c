package com.payments.api.merchants;

import io.quarkus.security.identity.request.BaseAuthenticationRequest;

/**
 * The credential of a request: its {@code Authorization} header as sent (null: none) and the client address that
 * its failures count against ({@link AuthFailureLimiter#clientOf}).
 */
public class BearerRequest extends BaseAuthenticationRequest {
    private final String authorization;
    private final String client;

    public BearerRequest(String authorization, String client) {
        this.authorization = authorization;
        this.client = client;
    }

    public String authorization() {
        return authorization;
    }

    public String client() {
        return client;
    }
}
