package com.payments.api.merchants;

import io.quarkus.security.identity.IdentityProviderManager;
import io.quarkus.security.identity.SecurityIdentity;
import io.quarkus.security.identity.request.AuthenticationRequest;
import io.quarkus.vertx.http.runtime.security.ChallengeData;
import io.quarkus.vertx.http.runtime.security.HttpAuthenticationMechanism;
import io.quarkus.vertx.http.runtime.security.HttpCredentialTransport;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Set;

/**
 * The API's one authentication mechanism: {@code Authorization: Bearer <merchant API key or operator token>}
 * (docs/api.md, Authentication). It hands the header and the client address to {@link BearerIdentityProvider}.
 * Authentication is lazy ({@code quarkus.http.auth.proactive=false}): it runs only for an endpoint whose
 * {@code @RolesAllowed} asks for an identity, after the request matched it, so a PSP webhook or a console page never
 * costs a key lookup and an unknown path stays 404.
 */
@ApplicationScoped
public class BearerAuthMechanism implements HttpAuthenticationMechanism {
    private static final ChallengeData CHALLENGE = new ChallengeData(401, "WWW-Authenticate", "Bearer");

    @Override
    public Uni<SecurityIdentity> authenticate(RoutingContext context, IdentityProviderManager identityProviderManager) {
        return identityProviderManager.authenticate(new BearerRequest(
                context.request().getHeader(HttpHeaders.AUTHORIZATION),
                AuthFailureLimiter.clientOf(context.request().remoteAddress())));
    }

    @Override
    public Uni<ChallengeData> getChallenge(RoutingContext context) {
        return Uni.createFrom().item(CHALLENGE);
    }

    @Override
    public Set<Class<? extends AuthenticationRequest>> getCredentialTypes() {
        return Set.of(BearerRequest.class);
    }

    @Override
    public Uni<HttpCredentialTransport> getCredentialTransport(RoutingContext context) {
        return Uni.createFrom().item(new HttpCredentialTransport(HttpCredentialTransport.Type.AUTHORIZATION, "bearer"));
    }
}
