package com.payments.recon.service;

import com.payments.psp.port.PspPort;
import com.payments.psp.settlement.SettlementFiles;
import com.payments.psp.settlement.SettlementFiles.Numbered;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.stream.Stream;

/**
 * The settlement lines of a date: from the PSP through the port of {@code psp.provider} ({@code recon.source=psp}), or
 * from a file (any other value: a path in which {@code {date}} is replaced). Both are read lazily, as the load consumes
 * them.
 */
@ApplicationScoped
public class SettlementSource {
    /** The value of {@code recon.source} that reads the lines from the PSP. */
    public static final String PSP = "psp";

    private final PspPort psp;

    SettlementSource(PspPort psp) {
        this.psp = psp;
    }

    /** Null when {@code source} is usable, else why not (for the argument check). */
    public static String problem(String source) {
        if (source == null || source.isBlank()) {
            return "no settlement source: set recon.source or --source (psp, or a file path with {date})";
        }
        if (source.startsWith("http://") || source.startsWith("https://")) {
            return "recon.source is psp or a file path, not a URL: the PSP's address is psp.url (PSP_URL) or"
                    + " psp.stripe.api-base, chosen by psp.provider (PSP_PROVIDER)";
        }
        return null;
    }

    /** Where the lines of {@code date} are read, for logs and the run summary. */
    public String location(String source, LocalDate date) {
        return PSP.equals(source) ? "psp:" + psp.provider() : source.replace("{date}", date.toString());
    }

    /**
     * The lines of {@code date} with their numbers (a file's line number, its header being line 1; the position in the
     * PSP's list). Blocking as it is consumed: the reconciler reads on the main thread of a command-mode app, while the
     * port's calls run on the event loop. Close the stream (it cancels the PSP's paging or closes the file).
     */
    public Stream<Numbered> open(String source, LocalDate date) throws IOException {
        if (PSP.equals(source)) {
            long[] position = {0};
            return psp.settlementLines(date).subscribe().asStream().map(line -> new Numbered(++position[0], line));
        }
        BufferedReader reader = new BufferedReader(
                new InputStreamReader(Files.newInputStream(Path.of(location(source, date))), StandardCharsets.UTF_8),
                1 << 16);
        try {
            return SettlementFiles.read(reader).onClose(() -> {
                try {
                    reader.close();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException | RuntimeException e) {
            reader.close();
            throw e;
        }
    }
}
