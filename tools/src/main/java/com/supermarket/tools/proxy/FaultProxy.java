package com.supermarket.tools.proxy;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@link TcpProxy} as a process of its own, steered while it runs over a control port, so a
 * script (scripts/faults.sh) can put it between the platform and the real broker or database and
 * strike mid-run. The tests use the same {@link TcpProxy} in-process.
 * <pre>
 * java -jar tools/target/tools-0.1.0-SNAPSHOT-exec.jar fault-proxy LISTEN_PORT TARGET_HOST:TARGET_PORT CONTROL_PORT
 * </pre>
 * Both ports listen on loopback only. The control port takes one command per line and answers
 * each with one line, {@code ok <state>} or {@code error <why>} (a cut or disconnect adds how many
 * connections it reset):
 * <pre>
 * cut SECONDS      reset every connection, refuse new ones for SECONDS (0: reset only)
 * disconnect       reset every connection, refuse new ones until restore
 * freeze           stop the bytes, keep the connections
 * latency MILLIS   hold each chunk that long, each way
 * loss FRACTION    hold that fraction of chunks for a retransmission timeout (200 ms)
 * restore          end every fault
 * status           the state, e.g. "connected latency=0ms loss=0.0 connections=12"
 * </pre>
 * One control connection at a time is enough for a script; each is served in turn.
 */
@Command(name = "fault-proxy", mixinStandardHelpOptions = true,
        description = { "A TCP proxy on loopback, steered over a control port, until killed.",
                "One command a line: cut SECONDS, disconnect, freeze, latency MILLIS, loss FRACTION, restore, status;",
                "each answered with one line, ok STATE or error WHY." })
public final class FaultProxy implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "LISTEN_PORT", description = "Where the application connects.")
    private int listenPort;

    @Parameters(index = "1", paramLabel = "TARGET_HOST:TARGET_PORT", description = "The real service.")
    private String target;

    @Parameters(index = "2", paramLabel = "CONTROL_PORT", description = "Where the commands come in.")
    private int controlPort;

    @Spec
    private CommandSpec spec;

    @Override
    public Integer call() throws IOException {
        int colon = target.lastIndexOf(':');
        if (colon <= 0) {
            throw new ParameterException(spec.commandLine(), "not HOST:PORT: " + target);
        }
        TcpProxy proxy = new TcpProxy(target.substring(0, colon), Integer.parseInt(target.substring(colon + 1)), listenPort);
        try (ServerSocket control = new ServerSocket(controlPort, 8, InetAddress.getLoopbackAddress())) {
            System.out.printf("fault proxy: 127.0.0.1:%d -> %s, control port %d%n", proxy.port(), target,
                    control.getLocalPort());
            System.out.flush();
            while (true) {
                try (Socket client = control.accept();
                     BufferedReader in = new BufferedReader(new InputStreamReader(client.getInputStream(), StandardCharsets.UTF_8));
                     PrintWriter out = new PrintWriter(client.getOutputStream(), true, StandardCharsets.UTF_8)) {
                    for (String line; (line = in.readLine()) != null; ) {
                        String answer = execute(proxy, line);
                        System.out.printf("fault proxy %d: %s -> %s%n", proxy.port(), line.strip(), answer);
                        System.out.flush();
                        out.println(answer);
                    }
                } catch (IOException e) {
                    // that control connection broke; take the next one
                }
            }
        }
    }

    /** Carries out one control command; the answer line. */
    static String execute(TcpProxy proxy, String line) {
        String[] words = line.strip().toLowerCase(Locale.ROOT).split("\\s+");
        int open = proxy.openConnections();
        try {
            switch (words[0]) {
                case "cut" -> proxy.cut(Duration.ofMillis(Math.round(1000 * Double.parseDouble(argument(words)))));
                case "disconnect" -> proxy.disconnect();
                case "freeze" -> proxy.freeze();
                case "latency" -> proxy.latency(Duration.ofMillis(Long.parseLong(argument(words))));
                case "loss" -> proxy.loss(Double.parseDouble(argument(words)));
                case "restore" -> proxy.restore();
                case "status" -> { }
                default -> {
                    return "error unknown command: " + words[0];
                }
            }
            String reset = words[0].equals("cut") || words[0].equals("disconnect") ? " (reset " + open + ")" : "";
            return "ok " + proxy.describe() + reset;
        } catch (IllegalArgumentException e) {
            return "error " + e.getMessage();
        }
    }

    private static String argument(String[] words) {
        if (words.length != 2) {
            throw new IllegalArgumentException(words[0] + " takes one number");
        }
        return words[1];
    }
}
