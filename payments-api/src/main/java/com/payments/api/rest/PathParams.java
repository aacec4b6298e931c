package com.payments.api.rest;

import com.payments.api.common.Refusal;
import java.util.UUID;

/** Path parameters that name a resource: one that cannot name any is not found, as an unknown one is. */
public final class PathParams {
    private PathParams() {}

    /** A resource id that is a UUID. */
    public static UUID uuid(String id) {
        try {
            return UUID.fromString(id);
        } catch (IllegalArgumentException e) {
            throw Refusal.notFound();
        }
    }

    /** A resource id that is a positive integer. */
    public static long positiveLong(String id) {
        try {
            long value = Long.parseLong(id);
            if (value > 0) {
                return value;
            }
        } catch (NumberFormatException e) {
            // 404 below, as for any path that names no resource
        }
        throw Refusal.notFound();
    }
}
