package com.payments.infra;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The real psp-sandbox application in its own process, started from {@code
 * psp-sandbox/target/quarkus-app/quarkus-run.jar} (the reactor builds psp-sandbox before the modules that test against
 * it). Each instance is one process; {@link #stop()} or {@link #kill()} ends it.
 */
public final class PspSandbox implements AutoCloseable {
    private static final String JAR = "psp-sandbox/target/quarkus-app/quarkus-run.jar";

    private final Process process;
    private final int port;

    private PspSandbox(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    /** Starts a sandbox with these {@code psp.*} (or other Quarkus) properties and waits until it is ready. */
    public static PspSandbox start(Map<String, String> properties) {
        Path jar = locateJar();
        int port = freePort();
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m",
                "-Dquarkus.http.port=" + port,
                "-Dquarkus.http.host=127.0.0.1"));
        properties.forEach((key, value) -> command.add("-D" + key + "=" + value));
        command.addAll(List.of("-jar", jar.toString()));
        try {
            Path log = Files.createTempFile("psp-sandbox-", ".log");
            Process process = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();
            PspSandbox sandbox = new PspSandbox(process, port);
            sandbox.awaitReady(Duration.ofSeconds(60), log);
            return sandbox;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public String url() {
        return "http://127.0.0.1:" + port;
    }

    public int port() {
        return port;
    }

    /** Graceful stop (SIGTERM), waiting for the process to end. */
    public void stop() {
        process.destroy();
        waitForExit();
    }

    /** kill -9: the process dies without finishing anything in flight. */
    public void kill() {
        process.destroyForcibly();
        waitForExit();
    }

    @Override
    public void close() {
        stop();
    }

    private void waitForExit() {
        try {
            process.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void awaitReady(Duration timeout, Path log) {
        HttpClient client =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        HttpRequest ready = HttpRequest.newBuilder(URI.create(url() + "/q/health/ready"))
                .timeout(Duration.ofSeconds(2))
                .build();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("psp-sandbox exited with " + process.exitValue() + "; see " + log);
            }
            try {
                if (client.send(ready, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
                    return;
                }
            } catch (IOException e) {
                // not listening yet
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
            sleep(100);
        }
        process.destroyForcibly();
        throw new IllegalStateException("psp-sandbox not ready within " + timeout + "; see " + log);
    }

    private static Path locateJar() {
        for (File dir = new File("").getAbsoluteFile(); dir != null; dir = dir.getParentFile()) {
            Path candidate = dir.toPath().resolve(JAR);
            if (Files.isRegularFile(candidate)) {
                return candidate;
            }
        }
        throw new IllegalStateException("No " + JAR + " above " + new File("").getAbsolutePath()
                + ": build it first (./mvnw -pl psp-sandbox package -DskipTests)");
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
