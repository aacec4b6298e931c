package com.payments.api.rest;

import com.payments.api.config.ApiConfig;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Optional;

/**
 * The operator API's credential: {@code Authorization: Bearer <payments.admin.token>}, compared in constant time.
 * Without a configured token every operator call answers 401.
 */
@ApplicationScoped
public class OperatorAuth {
    private final Optional<byte[]> token;

    public OperatorAuth(ApiConfig config) {
        this.token = config.admin().token().filter(t -> !t.isBlank()).map(t -> t.getBytes(StandardCharsets.UTF_8));
    }

    /** Throws 401 unless the header carries the operator token. */
    public void check(String authorization) {
        byte[] given = authorization != null && authorization.startsWith("Bearer ")
                ? authorization.substring(7).getBytes(StandardCharsets.UTF_8)
                : new byte[0];
        if (token.isEmpty() || !MessageDigest.isEqual(token.get(), given)) {
            throw ApiProblem.unauthorized();
        }
    }
}
