package com.payments.api;

import java.util.UUID;

/** An authenticated, ACTIVE merchant. */
public record Merchant(UUID id, String name, int rateLimitPerSecond) {}
