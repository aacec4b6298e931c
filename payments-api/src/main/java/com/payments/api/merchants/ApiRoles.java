package com.payments.api.merchants;

/**
 * The roles of the API's callers, as {@link BearerIdentityProvider} grants them and the resources'
 * {@code @RolesAllowed} require them. Every endpoint says who may call it; one that says nothing is refused
 * ({@code quarkus.security.jaxrs.deny-unannotated-endpoints}).
 */
public final class ApiRoles {
    /** A merchant, by one of its API keys: the merchant API. */
    public static final String MERCHANT = "merchant";
    /** An operator, by the operator token: the operator API ({@code /v1/admin/*}). */
    public static final String OPERATOR = "operator";

    private ApiRoles() {}
}
