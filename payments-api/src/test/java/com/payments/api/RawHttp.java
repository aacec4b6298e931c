package com.payments.api;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * A bare HTTP/1.1 client over a socket: sends the request line, headers and body exactly as given (HTTP clients refuse
 * or rewrite hostile paths and headers before they reach the server, which is the point here).
 */
final class RawHttp {
    record Answer(int status, Map<String, String> headers, String body) {
        String contentType() {
            return headers.getOrDefault("content-type", "");
        }
    }

    private RawHttp() {}

    static Answer send(int port, String method, String path, Map<String, String> headers, byte[] body) {
        return send(null, port, method, path, headers, body, false);
    }

    /** The request from the loopback address {@code from} (any of 127.0.0.0/8), so that the server sees that peer. */
    static Answer sendFrom(String from, int port, String method, String path, Map<String, String> headers) {
        return send(from, port, method, path, headers, null, false);
    }

    /** The body with {@code Transfer-Encoding: chunked} (8 KiB chunks) instead of a Content-Length. */
    static Answer sendChunked(int port, String method, String path, Map<String, String> headers, byte[] body) {
        return send(null, port, method, path, headers, body, true);
    }

    private static Answer send(
            String from,
            int port,
            String method,
            String path,
            Map<String, String> headers,
            byte[] body,
            boolean chunked) {
        try (Socket socket = from == null
                ? new Socket("127.0.0.1", port)
                : new Socket(InetAddress.getByName("127.0.0.1"), port, InetAddress.getByName(from), 0)) {
            socket.setSoTimeout(30_000);
            StringBuilder head =
                    new StringBuilder(method).append(' ').append(path).append(" HTTP/1.1\r\n");
            head.append("Host: localhost\r\nConnection: close\r\n");
            headers.forEach((name, value) ->
                    head.append(name).append(": ").append(value).append("\r\n"));
            if (body != null) {
                head.append(chunked ? "Transfer-Encoding: chunked" : "Content-Length: " + body.length)
                        .append("\r\n");
            }
            head.append("\r\n");
            socket.getOutputStream().write(head.toString().getBytes(StandardCharsets.ISO_8859_1));
            if (body != null) {
                socket.getOutputStream().write(chunked ? chunks(body) : body);
            }
            socket.getOutputStream().flush();
            return parse(readAll(socket.getInputStream()));
        } catch (IOException e) {
            throw new UncheckedIOException(method + " " + path, e);
        }
    }

    private static byte[] chunks(byte[] body) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int offset = 0; offset < body.length; offset += 8192) {
            int length = Math.min(8192, body.length - offset);
            out.writeBytes((Integer.toHexString(length) + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
            out.write(body, offset, length);
            out.writeBytes("\r\n".getBytes(StandardCharsets.ISO_8859_1));
        }
        out.writeBytes("0\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
        return out.toByteArray();
    }

    private static byte[] readAll(InputStream in) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buffer = new byte[8192];
        try {
            for (int n; (n = in.read(buffer)) > 0; ) {
                out.write(buffer, 0, n);
            }
        } catch (java.net.SocketException e) {
            // a reset after the answer (the server closing on a body it will not read) still leaves the answer
            if (out.size() == 0) {
                throw e;
            }
        }
        return out.toByteArray();
    }

    private static Answer parse(byte[] raw) {
        String text = new String(raw, StandardCharsets.ISO_8859_1);
        int end = text.indexOf("\r\n\r\n");
        if (end < 0) {
            throw new IllegalStateException("no HTTP answer: " + text);
        }
        String[] lines = text.substring(0, end).split("\r\n");
        int status = Integer.parseInt(lines[0].split(" ")[1]);
        Map<String, String> headers = new LinkedHashMap<>();
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            headers.put(
                    lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT),
                    lines[i].substring(colon + 1).trim());
        }
        byte[] body = java.util.Arrays.copyOfRange(raw, end + 4, raw.length);
        if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
            body = dechunk(body);
        }
        return new Answer(status, headers, new String(body, StandardCharsets.UTF_8));
    }

    private static byte[] dechunk(byte[] body) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int pos = 0;
        while (pos < body.length) {
            int lineEnd = pos;
            while (lineEnd + 1 < body.length && !(body[lineEnd] == '\r' && body[lineEnd + 1] == '\n')) {
                lineEnd++;
            }
            String sizeText = new String(body, pos, lineEnd - pos, StandardCharsets.ISO_8859_1).split(";")[0].trim();
            int size = sizeText.isEmpty() ? 0 : Integer.parseInt(sizeText, 16);
            if (size == 0) {
                break;
            }
            out.write(body, lineEnd + 2, size);
            pos = lineEnd + 2 + size + 2;
        }
        return out.toByteArray();
    }
}
