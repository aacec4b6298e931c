package com.payments.contracts;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * Long SQL statements live in {@code .sql} resources next to the code that runs them, read once into a constant. Native
 * builds include them through {@code quarkus.native.resources.includes=sql/**}.
 */
public final class SqlResource {
    private SqlResource() {}

    /** The text of {@code /sql/<name>} on the class path of {@code owner}; fails when it is missing. */
    public static String load(Class<?> owner, String name) {
        String path = "/sql/" + name;
        try (InputStream in = owner.getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException("SQL resource " + path + " not found");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read SQL resource " + path, e);
        }
    }
}
