package com.payments.api.merchants;

import com.payments.api.Merchant;
import io.quarkus.security.identity.SecurityIdentity;
import java.security.Principal;

/** The principal of a request authenticated by a merchant's API key: the merchant as of its key's lookup. */
public record MerchantPrincipal(Merchant merchant) implements Principal {
    @Override
    public String getName() {
        return merchant.id().toString();
    }

    /** The merchant of a request that {@code @RolesAllowed(ApiRoles.MERCHANT)} let through. */
    public static Merchant of(SecurityIdentity identity) {
        return ((MerchantPrincipal) identity.getPrincipal()).merchant();
    }
}
