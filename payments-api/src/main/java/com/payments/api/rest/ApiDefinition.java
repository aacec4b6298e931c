package com.payments.api.rest;

import jakarta.ws.rs.core.Application;
import org.eclipse.microprofile.openapi.annotations.OpenAPIDefinition;
import org.eclipse.microprofile.openapi.annotations.enums.SecuritySchemeType;
import org.eclipse.microprofile.openapi.annotations.info.Info;
import org.eclipse.microprofile.openapi.annotations.security.SecurityScheme;

/** OpenAPI metadata: merchants authenticate with {@code Authorization: Bearer <api key>}. */
@OpenAPIDefinition(
        info =
                @Info(
                        title = "Payments API",
                        version = "1",
                        description = "Merchant API of design.md §4; see docs/api.md"))
@SecurityScheme(
        securitySchemeName = "merchantKey",
        type = SecuritySchemeType.HTTP,
        scheme = "bearer",
        description = "Merchant API key")
public class ApiDefinition extends Application {}
