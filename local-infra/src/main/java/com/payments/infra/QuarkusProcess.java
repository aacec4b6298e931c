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
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * A packaged Quarkus application of this repository in its own process, on a free port and a free management port,
 * ready when {@code /q/health/ready} answers 200 on either (the management interface where the module enables it,
 * docs/deployment.md). The artifact is the one the module's last build made, as named by
 * {@code <module>/target/quarkus-artifact.properties}: the native executable after {@code -Dnative}, else
 * {@code target/quarkus-app/quarkus-run.jar}. The reactor must build the module first (system-tests, the reactor's
 * last module, depends on every service it starts; a module whose tests start only psp-sandbox orders itself after it
 * with a test-scoped {@code type=pom} dependency with {@code *} exclusions).
 */
public final class QuarkusProcess implements AutoCloseable {
    /**
     * The keys that encrypt merchants' webhook signing secrets in tests ({@code webhook.secrets.keys}, the %test
     * profiles of payments-api and webhook-delivery: test-2 current, test-1 retired). Public, so never for production.
     * Every process started here gets them unless its properties name others: the prod profile refuses to start
     * without.
     */
    public static final String TEST_WEBHOOK_SECRETS_KEYS = "test-2:cCbMHXCtovoscsrbC0Qq+xgE7/C9yCnAp7JVvfchv8k=,"
            + "test-1:hKD7axaK/7kqV566y+hfw40AqChE4ya73yS9BZcSJNc=";

    private final String module;
    private final Process process;
    private final int port;
    private final int managementPort;
    private final Path log;

    private QuarkusProcess(String module, Process process, int port, int managementPort, Path log) {
        this.module = module;
        this.process = process;
        this.port = port;
        this.managementPort = managementPort;
        this.log = log;
    }

    /**
     * Starts {@code module}'s artifact with these system properties (Quarkus config) and waits until it is ready. It
     * listens on a free port, or on {@code quarkus.http.port} when the properties name one (a port from
     * {@link #freePort()}, for two processes that must know each other's address before either starts).
     */
    public static QuarkusProcess start(String module, String heap, Map<String, String> properties) {
        return start(module, heap, properties, Duration.ofSeconds(180)); // a loaded 2-core CI machine took over 120 s
    }

    /** As {@link #start(String, String, Map)}, waiting at most {@code readyWithin} (several JVMs starting at once). */
    public static QuarkusProcess start(
            String module, String heap, Map<String, String> properties, Duration readyWithin) {
        Path executable = nativeExecutable(module);
        int port = properties.containsKey("quarkus.http.port")
                ? Integer.parseInt(properties.get("quarkus.http.port"))
                : freePort();
        int managementPort = freePort();
        List<String> command = new ArrayList<>();
        if (executable == null) {
            command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        } else {
            command.add(executable.toString()); // takes -Xmx and -D like a JVM
        }
        command.addAll(List.of(
                "-Xmx" + heap,
                "-Dquarkus.http.port=" + port,
                "-Dquarkus.http.host=127.0.0.1",
                "-Dquarkus.management.port=" + managementPort,
                "-Dquarkus.management.host=127.0.0.1"));
        if (!properties.containsKey("webhook.secrets.keys")) {
            command.add("-Dwebhook.secrets.keys=" + TEST_WEBHOOK_SECRETS_KEYS);
        }
        properties.forEach((key, value) -> command.add("-D" + key + "=" + value));
        if (executable == null) {
            command.addAll(List.of(
                    "-jar",
                    locate(module + "/target/quarkus-app/quarkus-run.jar").toString()));
        }
        try {
            Path log = Files.createTempFile(module + "-", ".log");
            Process process = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();
            QuarkusProcess app = new QuarkusProcess(module, process, port, managementPort, log);
            app.awaitReady(readyWithin);
            return app;
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

    /** The management interface (health, metrics) of a module that enables it. */
    public String managementUrl() {
        return "http://127.0.0.1:" + managementPort;
    }

    /** The operating system's process id (for signals such as SIGSTOP, see {@link DeadHost}). */
    public long pid() {
        return process.pid();
    }

    /** The process's output (stdout and stderr). */
    public Path log() {
        return log;
    }

    /** Graceful stop (SIGTERM), waiting for the process to end. */
    public void stop() {
        process.destroy();
        waitForExit();
    }

    /** SIGTERM, as Kubernetes stops a container, without waiting: the process drains while the caller goes on. */
    public void terminate() {
        process.destroy();
    }

    /** Waits at most {@code within} for the process to end; its exit code, or null while it still runs. */
    public Integer awaitExit(Duration within) {
        try {
            return process.waitFor(within.toMillis(), TimeUnit.MILLISECONDS) ? process.exitValue() : null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
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

    private void awaitReady(Duration timeout) {
        HttpClient client =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        List<HttpRequest> ready = List.of(managementUrl(), url()).stream()
                .map(base -> HttpRequest.newBuilder(URI.create(base + "/q/health/ready"))
                        .timeout(Duration.ofSeconds(2))
                        .build())
                .toList();
        long deadline = System.nanoTime() + timeout.toNanos();
        String lastAnswer = "no answer";
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException(
                        module + " exited with " + process.exitValue() + "; see " + log + logTail());
            }
            for (HttpRequest request : ready) {
                try {
                    HttpResponse<String> answer = client.send(request, HttpResponse.BodyHandlers.ofString());
                    if (answer.statusCode() == 200) {
                        return;
                    }
                    if (answer.statusCode() != 404) { // 404: the port without the health endpoint
                        lastAnswer = answer.statusCode() + " " + answer.body().replaceAll("\\s+", " ");
                    }
                } catch (IOException e) {
                    // not listening yet (or no management interface in this module)
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
            }
            sleep(100);
        }
        process.destroyForcibly();
        throw new IllegalStateException(module + " not ready within " + timeout + "; readiness last answered "
                + lastAnswer + "; see " + log + logTail());
    }

    /** The log's last lines, for a failure message read where the log file is gone (a CI machine). */
    private String logTail() {
        try {
            List<String> lines = Files.readAllLines(log);
            return "; its last lines:\n  "
                    + String.join(
                            "\n  ",
                            lines.subList(Math.max(0, lines.size() - 15), lines.size()).stream()
                                    .map(line -> line.length() > 400 ? line.substring(0, 400) + "..." : line)
                                    .toList());
        } catch (IOException | UncheckedIOException e) {
            return "";
        }
    }

    /** The native executable that {@code quarkus-artifact.properties} names, or null when the last build made a jar. */
    private static Path nativeExecutable(String module) {
        Path target = locate(module + "/target");
        Path descriptor = target.resolve("quarkus-artifact.properties");
        if (!Files.isRegularFile(descriptor)) {
            return null;
        }
        Properties artifact = new Properties();
        try (var in = Files.newInputStream(descriptor)) {
            artifact.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return "native".equals(artifact.getProperty("type")) ? target.resolve(artifact.getProperty("path")) : null;
    }

    private static Path locate(String relative) {
        for (File dir = new File("").getAbsoluteFile(); dir != null; dir = dir.getParentFile()) {
            Path candidate = dir.toPath().resolve(relative);
            if (Files.exists(candidate)) {
                return candidate;
            }
        }
        throw new IllegalStateException("No " + relative + " above " + new File("").getAbsolutePath()
                + ": build it first (./mvnw -pl <module> -am package -DskipTests)");
    }

    /** A port free on this machine now (the operating system's choice). */
    public static int freePort() {
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
