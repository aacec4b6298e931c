package com.payments.infra;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * A local process made to look like a host that died without closing its connections: the process is stopped
 * (SIGSTOP) and every TCP packet of its connections is dropped on arrival (an nftables table of its own, one rule per
 * connection and direction). A stopped process alone is not a dead host: its kernel still acknowledges data and answers
 * keepalive probes, so no peer would ever notice. With the drop, a peer's keepalive probes and retransmissions go
 * unanswered, as they would if the machine had lost power or its network. Linux, root and the {@code nft} tool (Debian
 * package {@code nftables}) are needed; see {@link #unsupportedReason()}.
 */
public final class DeadHost implements AutoCloseable {
    private final long pid;
    private final String table;
    private final Thread cleanup;
    private boolean dead = true;

    private DeadHost(long pid, String table) {
        this.pid = pid;
        this.table = table;
        this.cleanup = new Thread(this::removeRules, "dead-host-cleanup-" + pid);
    }

    /** Null when this machine can simulate a dead host; else what is missing. */
    public static String unsupportedReason() {
        if (!"root".equals(System.getProperty("user.name"))) {
            return "needs root (nftables rules and signals), running as " + System.getProperty("user.name");
        }
        if (Stream.of("/usr/sbin/nft", "/sbin/nft", "/usr/bin/nft").noneMatch(p -> Files.isExecutable(Path.of(p)))) {
            return "needs the nft tool: apt-get install nftables";
        }
        return null;
    }

    /** Stops the process and drops every packet of its TCP connections, until {@link #revive()}. */
    public static DeadHost kill(long pid) {
        String reason = unsupportedReason();
        if (reason != null) {
            throw new IllegalStateException("Cannot simulate a dead host: " + reason);
        }
        run("sh", "-c", "kill -STOP " + pid);
        // Stopped, the process opens no new connection: the list below is complete.
        DeadHost host = new DeadHost(pid, "payments_dead_host_" + pid);
        StringBuilder rules = new StringBuilder("table inet " + host.table + " {\n"
                + "  chain input {\n    type filter hook input priority -10; policy accept;\n");
        for (int[] ports : connections(pid)) {
            rules.append("    tcp sport ")
                    .append(ports[0])
                    .append(" tcp dport ")
                    .append(ports[1])
                    .append(" drop\n");
            rules.append("    tcp sport ")
                    .append(ports[1])
                    .append(" tcp dport ")
                    .append(ports[0])
                    .append(" drop\n");
        }
        rules.append("  }\n}\n");
        Runtime.getRuntime().addShutdownHook(host.cleanup);
        runWithInput(rules.toString(), "nft", "-f", "-");
        return host;
    }

    /** The host comes back: its packets flow again, then the process continues where it stopped. */
    public synchronized void revive() {
        if (!dead) {
            return;
        }
        dead = false;
        removeRules();
        Runtime.getRuntime().removeShutdownHook(cleanup);
        run("sh", "-c", "kill -CONT " + pid);
    }

    @Override
    public void close() {
        revive();
    }

    private void removeRules() {
        run("nft", "delete", "table", "inet", table);
    }

    /** [local port, remote port] of every TCP connection of the process (IPv4 and IPv6, listening sockets left out). */
    static List<int[]> connections(long pid) {
        Set<String> inodes = new HashSet<>();
        try (Stream<Path> fds = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
            for (Path fd : (Iterable<Path>) fds::iterator) {
                try {
                    String target = Files.readSymbolicLink(fd).toString();
                    if (target.startsWith("socket:[")) {
                        inodes.add(target.substring(8, target.length() - 1));
                    }
                } catch (IOException e) {
                    // closed meanwhile
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<int[]> connections = new ArrayList<>();
        for (String table : List.of("tcp", "tcp6")) {
            List<String> lines;
            try {
                lines = Files.readAllLines(Path.of("/proc", Long.toString(pid), "net", table));
            } catch (IOException e) {
                continue; // no IPv6
            }
            for (String line : lines.subList(1, lines.size())) {
                // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ...
                String[] f = line.trim().split("\\s+");
                int remotePort = port(f[2]);
                if (inodes.contains(f[9]) && !"0A".equals(f[3]) && remotePort != 0) {
                    connections.add(new int[] {port(f[1]), remotePort});
                }
            }
        }
        if (connections.isEmpty()) {
            throw new IllegalStateException("process " + pid + " has no TCP connection");
        }
        return connections;
    }

    private static int port(String hexAddressAndPort) {
        return Integer.parseInt(hexAddressAndPort.substring(hexAddressAndPort.indexOf(':') + 1), 16);
    }

    private static void run(String... command) {
        runWithInput(null, command);
    }

    private static void runWithInput(String input, String... command) {
        try {
            Process process =
                    new ProcessBuilder(command).redirectErrorStream(true).start();
            if (input != null) {
                process.getOutputStream().write(input.getBytes(StandardCharsets.UTF_8));
            }
            process.getOutputStream().close();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (process.waitFor() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed: " + output);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
