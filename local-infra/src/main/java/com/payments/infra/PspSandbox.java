package com.payments.infra;

import java.util.Map;

/**
 * The real psp-sandbox application in its own process, started from {@code
 * psp-sandbox/target/quarkus-app/quarkus-run.jar} (the reactor builds psp-sandbox before the modules that test against
 * it). Each instance is one process; {@link #stop()} or {@link #kill()} ends it.
 */
public final class PspSandbox implements AutoCloseable {
    private final QuarkusProcess process;

    private PspSandbox(QuarkusProcess process) {
        this.process = process;
    }

    /** Starts a sandbox with these {@code psp.*} (or other Quarkus) properties and waits until it is ready. */
    public static PspSandbox start(Map<String, String> properties) {
        return new PspSandbox(QuarkusProcess.start("psp-sandbox", "256m", properties));
    }

    public String url() {
        return process.url();
    }

    public int port() {
        return process.port();
    }

    /** Graceful stop (SIGTERM), waiting for the process to end. */
    public void stop() {
        process.stop();
    }

    /** kill -9: the process dies without finishing anything in flight. */
    public void kill() {
        process.kill();
    }

    @Override
    public void close() {
        stop();
    }
}
