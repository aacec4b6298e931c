package com.payments.psp.settlement;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Cuts a byte stream that arrives in chunks (an HTTP body) into UTF-8 lines, without the {@code \n}; a line may span
 * chunks. Not thread-safe: one per stream.
 */
public final class LineSplitter {
    private final ByteArrayOutputStream pending = new ByteArrayOutputStream();

    /** The lines that end in {@code chunk}. */
    public List<String> feed(byte[] chunk) {
        List<String> lines = new ArrayList<>();
        int start = 0;
        for (int i = 0; i < chunk.length; i++) {
            if (chunk[i] == '\n') {
                pending.write(chunk, start, i - start);
                lines.add(pending.toString(StandardCharsets.UTF_8));
                pending.reset();
                start = i + 1;
            }
        }
        pending.write(chunk, start, chunk.length - start);
        return lines;
    }

    /** The last line when the stream did not end with {@code \n}; empty otherwise. */
    public List<String> rest() {
        return pending.size() == 0 ? List.of() : List.of(pending.toString(StandardCharsets.UTF_8));
    }
}
