package com.supermarket.tools.soak;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.OptionalLong;

/** The two readings a soak takes of a Redis: its used memory and its key count, over RESP. Stateless. */
final class RedisInfo {

    private static final int TIMEOUT_MILLIS = 5000;

    private RedisInfo() {
    }

    /** {@code used_memory} of an {@code INFO memory} answer; empty when it is not there. */
    static OptionalLong usedMemory(String info) {
        for (String line : info.split("\r?\n")) {
            if (line.startsWith("used_memory:")) {
                return OptionalLong.of(Long.parseLong(line.substring("used_memory:".length()).strip()));
            }
        }
        return OptionalLong.empty();
    }

    /** Used memory and key count of the Redis on loopback port {@code port}; empty ones when it does not answer. */
    static OptionalLong[] read(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), TIMEOUT_MILLIS);
            socket.setSoTimeout(TIMEOUT_MILLIS);
            OutputStream out = socket.getOutputStream();
            BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            out.write("INFO memory\r\nDBSIZE\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String info = bulkString(in);
            String keys = in.readLine();
            return new OptionalLong[] { usedMemory(info),
                keys != null && keys.startsWith(":") ? OptionalLong.of(Long.parseLong(keys.substring(1))) : OptionalLong.empty() };
        } catch (IOException | RuntimeException e) {
            return new OptionalLong[] { OptionalLong.empty(), OptionalLong.empty() };
        }
    }

    /** A RESP bulk string ("$LENGTH" line, then that many bytes and CRLF); ASCII, so characters are bytes. */
    private static String bulkString(BufferedReader in) throws IOException {
        String header = in.readLine();
        if (header == null || !header.startsWith("$")) {
            throw new IOException("not a bulk string: " + header);
        }
        char[] body = new char[Integer.parseInt(header.substring(1))];
        for (int read = 0; read < body.length; ) {
            int n = in.read(body, read, body.length - read);
            if (n < 0) {
                throw new IOException("the answer ended early");
            }
            read += n;
        }
        in.readLine();
        return new String(body);
    }
}
