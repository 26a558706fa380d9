package com.supermarket.tools.proxy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The proxy's faults, against an echo server on loopback. */
class TcpProxyTest {

    private ServerSocket echo;
    private TcpProxy proxy;

    @BeforeEach
    void start() throws IOException {
        echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().start(() -> {
            while (!echo.isClosed()) {
                try {
                    Socket socket = echo.accept();
                    Thread.ofVirtual().start(() -> {
                        try (socket; InputStream in = socket.getInputStream(); OutputStream out = socket.getOutputStream()) {
                            in.transferTo(out);
                        } catch (IOException e) {
                            // the test or the proxy closed it
                        }
                    });
                } catch (IOException e) {
                    return;
                }
            }
        });
        proxy = new TcpProxy("127.0.0.1", echo.getLocalPort());
    }

    @AfterEach
    void stop() throws IOException {
        proxy.close();
        echo.close();
    }

    @Test
    void bytesArriveIntactAndInOrderThroughLossAndLatency() throws Exception {
        proxy.latency(Duration.ofMillis(2));
        proxy.loss(0.02);
        byte[] sent = new byte[1 << 20];
        new Random(7).nextBytes(sent);
        try (Socket socket = connect()) {
            Thread.ofVirtual().start(() -> {
                try {
                    socket.getOutputStream().write(sent);
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            assertThat(socket.getInputStream().readNBytes(sent.length)).isEqualTo(sent);
        }
    }

    @Test
    void latencyHoldsEachChunkEachWay() throws Exception {
        try (Socket socket = connect()) {
            assertThat(roundTripMillis(socket)).isLessThan(150);
            proxy.latency(Duration.ofMillis(150));
            assertThat(roundTripMillis(socket)).isGreaterThanOrEqualTo(300);
            proxy.restore();
            assertThat(roundTripMillis(socket)).isLessThan(150);
        }
    }

    @Test
    void aLostChunkIsHeldForARetransmissionTimeout() throws Exception {
        try (Socket socket = connect()) {
            proxy.loss(1.0);
            assertThat(roundTripMillis(socket)).isGreaterThanOrEqualTo(2 * TcpProxy.RETRANSMISSION_TIMEOUT.toMillis());
        }
    }

    @Test
    void aCutResetsOpenConnectionsAndRefusesNewOnesUntilItEnds() throws Exception {
        try (Socket open = connect()) {
            roundTripMillis(open);
            proxy.cut(Duration.ofSeconds(2));
            assertThat(broken(open)).as("the open connection is reset").isTrue();
            try (Socket refused = connect()) {
                assertThat(broken(refused)).as("a new connection during the cut is refused").isTrue();
            }
            assertThat(proxy.describe()).startsWith("cut(");
        }
        await("the cut ends by itself").atMost(Duration.ofSeconds(10)).pollDelay(Duration.ofSeconds(1))
                .until(() -> {
                    try (Socket again = connect()) {
                        return roundTripMillis(again) >= 0;
                    } catch (IOException e) {
                        return false;
                    }
                });
    }

    @Test
    void aDisconnectLastsUntilRestore() throws Exception {
        proxy.disconnect();
        try (Socket refused = connect()) {
            assertThat(broken(refused)).isTrue();
        }
        proxy.restore();
        try (Socket socket = connect()) {
            assertThat(roundTripMillis(socket)).isLessThan(1000);
        }
    }

    @Test
    void freezingTheOpenConnectionsStopsTheirBytesForGoodWhileANewConnectionGoesThrough() throws Exception {
        try (Socket dead = connect()) {
            roundTripMillis(dead);
            proxy.freezeOpenConnections();
            dead.setSoTimeout(500);
            dead.getOutputStream().write(42);
            assertThatThrownBy(() -> dead.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);
            try (Socket fresh = connect()) {
                assertThat(roundTripMillis(fresh)).isLessThan(1000);
            }
            assertThat(proxy.describe()).contains("frozen-open");
            proxy.restore();
            dead.setSoTimeout(5000);
            assertThat(dead.getInputStream().read()).as("the held byte, once restored").isEqualTo(42);
        }
    }

    @Test
    void theControlCommandsSteerTheProxy() {
        assertThat(FaultProxy.execute(proxy, "latency 40")).isEqualTo("ok connected latency=40ms loss=0.0 connections=0");
        assertThat(FaultProxy.execute(proxy, "loss 0.25")).contains("loss=0.25");
        assertThat(FaultProxy.execute(proxy, "cut 5")).startsWith("ok cut(").endsWith("(reset 0)");
        assertThat(FaultProxy.execute(proxy, "restore")).isEqualTo("ok connected latency=0ms loss=0.0 connections=0");
        assertThat(FaultProxy.execute(proxy, "loss 2")).startsWith("error loss must be within 0..1");
        assertThat(FaultProxy.execute(proxy, "latency")).isEqualTo("error latency takes one number");
        assertThat(FaultProxy.execute(proxy, "reboot")).isEqualTo("error unknown command: reboot");
    }

    private Socket connect() throws IOException {
        Socket socket = new Socket(proxy.host(), proxy.port());
        socket.setSoTimeout(5000);
        return socket;
    }

    private static long roundTripMillis(Socket socket) throws IOException {
        long start = System.nanoTime();
        socket.getOutputStream().write(42);
        int answer = socket.getInputStream().read();
        assertThat(answer).isEqualTo(42);
        return (System.nanoTime() - start) / 1_000_000;
    }

    private static boolean broken(Socket socket) {
        try {
            socket.getOutputStream().write(42);
            return socket.getInputStream().read() < 0;
        } catch (IOException e) {
            return true;
        }
    }
}
