package com.supermarket.tools.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;

import org.junit.jupiter.api.Test;

/** The control commands the scripts send. */
class FaultProxyTest {

    @Test
    void answersEachCommandWithTheProxysState() throws IOException {
        try (ServerSocket target = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
             TcpProxy proxy = new TcpProxy("127.0.0.1", target.getLocalPort(), 0)) {
            assertThat(FaultProxy.execute(proxy, "latency 50")).startsWith("ok ").contains("latency=50ms");
            assertThat(FaultProxy.execute(proxy, "LOSS 0.25")).contains("loss=0.25");
            assertThat(FaultProxy.execute(proxy, "cut 0")).startsWith("ok ").endsWith("(reset 0)");
            assertThat(FaultProxy.execute(proxy, "restore")).contains("latency=0ms");
            assertThat(FaultProxy.execute(proxy, "status")).startsWith("ok ");
            assertThat(FaultProxy.execute(proxy, "latency")).isEqualTo("error latency takes one number");
            assertThat(FaultProxy.execute(proxy, "explode")).isEqualTo("error unknown command: explode");
        }
    }
}
