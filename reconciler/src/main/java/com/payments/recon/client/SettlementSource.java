package com.payments.recon.client;

import com.payments.recon.config.ReconConfig;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;

/** Opens the settlement file of a date: from the PSP ({@code GET /v1/settlements/{date}.csv}) or a file path. */
@ApplicationScoped
public class SettlementSource {
    private final Duration timeout;
    private final HttpClient http;

    SettlementSource(ReconConfig config) {
        this.timeout = config.downloadTimeout();
        this.http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    }

    /** Where the file of {@code date} is read from, for logs and the run summary. */
    public static String location(String source, LocalDate date) {
        if (isHttp(source)) {
            String base = source.endsWith("/") ? source.substring(0, source.length() - 1) : source;
            return base + "/v1/settlements/" + date + ".csv";
        }
        return source.replace("{date}", date.toString());
    }

    /** Blocking: the reconciler runs on the main thread of a command-mode application. */
    public InputStream open(String source, LocalDate date) throws IOException {
        String location = location(source, date);
        if (!isHttp(source)) {
            return Files.newInputStream(Path.of(location));
        }
        HttpRequest request = HttpRequest.newBuilder(URI.create(location))
                .timeout(timeout)
                .header("Accept", "text/csv")
                .GET()
                .build();
        HttpResponse<InputStream> response;
        try {
            response = http.send(request, HttpResponse.BodyHandlers.ofInputStream());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while downloading " + location, e);
        }
        if (response.statusCode() != 200) {
            response.body().close();
            throw new IOException("GET " + location + " answered " + response.statusCode());
        }
        return response.body();
    }

    private static boolean isHttp(String source) {
        return source.startsWith("http://") || source.startsWith("https://");
    }
}
