package com.payments.api.rest;

import io.quarkus.smallrye.openapi.OpenApiFilter;
import org.eclipse.microprofile.openapi.OASFactory;
import org.eclipse.microprofile.openapi.OASFilter;
import org.eclipse.microprofile.openapi.models.responses.APIResponse;

/**
 * Documents the {@code Request-Id} header ({@link RequestIdRoute}) on every answer of the merchant API document, as
 * the header component {@value #COMPONENT}: {@link RequestIdRoute} sets it on every answer, so every response of every
 * operation declares it (a response that is only a reference gets it from the component it points to).
 */
@OpenApiFilter(stages = OpenApiFilter.RunStage.BUILD)
public class RequestIdHeaderFilter implements OASFilter {
    static final String COMPONENT = "RequestId";

    @Override
    public APIResponse filterAPIResponse(APIResponse response) {
        if (response.getRef() == null) {
            response.addHeader(RequestIdRoute.HEADER, OASFactory.createHeader().ref(COMPONENT));
        }
        return response;
    }
}
