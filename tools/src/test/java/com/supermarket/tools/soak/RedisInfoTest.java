package com.supermarket.tools.soak;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

class RedisInfoTest {

    private static final String INFO = "# Memory\r\nused_memory:1024512\r\nused_memory_human:1000.50K\r\nused_memory_rss:9\r\n";

    @Test
    void usedMemoryOfAnInfoAnswer() {
        assertThat(RedisInfo.usedMemory(INFO)).hasValue(1024512);
        assertThat(RedisInfo.usedMemory("# Memory\r\n")).isEmpty();
    }

    @Test
    void readsBothAnswersOfAServer() throws IOException {
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Thread.ofVirtual().start(() -> {
                try (Socket s = server.accept(); InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
                    in.readNBytes("INFO memory\r\nDBSIZE\r\n".length());
                    out.write(("$" + INFO.length() + "\r\n" + INFO + "\r\n:42\r\n").getBytes(StandardCharsets.US_ASCII));
                } catch (IOException e) {
                    // the test fails on the answer
                }
            });

            assertThat(RedisInfo.read(server.getLocalPort())).satisfiesExactly(
                    used -> assertThat(used).hasValue(1024512), keys -> assertThat(keys).hasValue(42));
        }
    }

    @Test
    void noServerGivesEmptyReadings() throws IOException {
        int port;
        try (ServerSocket closed = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = closed.getLocalPort();
        }
        assertThat(RedisInfo.read(port)).allSatisfy(reading -> assertThat(reading).isEmpty());
    }
}
