package com.payments.api.merchants;

import com.payments.api.config.ApiConfig;
import io.quarkus.security.identity.AuthenticationRequestContext;
import io.quarkus.security.identity.IdentityProvider;
import io.quarkus.security.identity.SecurityIdentity;
import io.quarkus.security.runtime.QuarkusSecurityIdentity;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Optional;

/**
 * Who a bearer credential is: the operator token ({@code payments.admin.token}, compared in constant time; without
 * one configured no request is an operator) grants {@link ApiRoles#OPERATOR}; anything else is a merchant API key,
 * looked up by {@link MerchantAuthService} (from memory when known, else one query on the reactive pool: nothing
 * blocks) and granted {@link ApiRoles#MERCHANT} with the merchant as principal ({@link MerchantPrincipal}).
 */
@ApplicationScoped
public class BearerIdentityProvider implements IdentityProvider<BearerRequest> {
    /** The operator's principal: one shared token names no person (the audit's "who", docs/console.md). */
    public static final String OPERATOR_TOKEN = "operator-token";

    private static final SecurityIdentity OPERATOR = QuarkusSecurityIdentity.builder()
            .setPrincipal(() -> OPERATOR_TOKEN)
            .addRole(ApiRoles.OPERATOR)
            .build();

    private final MerchantAuthService merchants;
    private final Optional<byte[]> operatorToken;

    public BearerIdentityProvider(MerchantAuthService merchants, ApiConfig config) {
        this.merchants = merchants;
        this.operatorToken =
                config.admin().token().filter(t -> !t.isBlank()).map(t -> t.getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public Class<BearerRequest> getRequestType() {
        return BearerRequest.class;
    }

    @Override
    public Uni<SecurityIdentity> authenticate(BearerRequest request, AuthenticationRequestContext context) {
        if (isOperatorToken(request.authorization())) {
            return Uni.createFrom().item(OPERATOR);
        }
        return merchants
                .authenticate(request.authorization(), request.client())
                .map(merchant -> QuarkusSecurityIdentity.builder()
                        .setPrincipal(new MerchantPrincipal(merchant))
                        .addRole(ApiRoles.MERCHANT)
                        .build());
    }

    private boolean isOperatorToken(String authorization) {
        return operatorToken.isPresent()
                && authorization != null
                && authorization.startsWith("Bearer ")
                && MessageDigest.isEqual(
                        operatorToken.get(), authorization.substring(7).getBytes(StandardCharsets.UTF_8));
    }
}
