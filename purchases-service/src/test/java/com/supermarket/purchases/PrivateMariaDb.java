package com.supermarket.purchases;

import static org.awaitility.Awaitility.await;

import com.supermarket.broker.testing.TestServices;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A MariaDB server of the test's own, for faults that change a server's global state (read-only),
 * which the shared server must never see. In {@link TestServices.Mode#CONTAINERS} a container of
 * its own ({@link TestServices#newMariaDb()}); on local services a fresh data directory
 * ({@code mariadb-install-db}, root without a password) and a {@code mariadbd} on a free port of
 * 127.0.0.1, which takes about a second to start, needs the binaries of the Debian package
 * {@code mariadb-server} (scripts/local-services.sh installs it) and fails, never skips, without
 * them. Started and stopped by the test; {@link #close} stops the server and deletes its data (a
 * JVM that exits first kills a local server through a shutdown hook, and removes a container).
 *
 * <p>Not thread-safe: one test class drives it; each {@link #asRoot} opens a connection of its own.
 */
final class PrivateMariaDb implements AutoCloseable {

    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

    private final TestServices.Database server;
    private final AutoCloseable stop;

    private PrivateMariaDb(TestServices.Database server, AutoCloseable stop) {
        this.server = server;
        this.stop = stop;
    }

    static PrivateMariaDb start() throws IOException, InterruptedException {
        if (TestServices.mode() == TestServices.Mode.CONTAINERS) {
            TestServices.PrivateService<TestServices.Database> container = TestServices.newMariaDb();
            return new PrivateMariaDb(container.service(), container);
        }
        return LocalServer.start();
    }

    String jdbcUrl(String database) {
        return server.jdbcUrl(database);
    }

    String rootUser() {
        return server.username();
    }

    String rootPassword() {
        return server.password();
    }

    /** Runs each statement as root, in one connection of its own. */
    void asRoot(String... statements) throws SQLException {
        try (Connection connection = rootConnection(); Statement statement = connection.createStatement()) {
            for (String sql : statements) {
                statement.execute(sql);
            }
        }
    }

    /** Every stored purchase id of {@code database}, read as root (a read lock on the table lets it through). */
    List<UUID> purchaseIds(String database) throws SQLException {
        List<UUID> ids = new ArrayList<>();
        try (Connection connection = rootConnection(); Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery("SELECT purchase_id FROM " + database + ".purchase")) {
            while (rows.next()) {
                ByteBuffer id = ByteBuffer.wrap(rows.getBytes(1));
                ids.add(new UUID(id.getLong(), id.getLong()));
            }
        }
        return ids;
    }

    Connection rootConnection() throws SQLException {
        return DriverManager.getConnection(jdbcUrl(""), rootUser(), rootPassword());
    }

    @Override
    public void close() throws Exception {
        stop.close();
    }

    /** A {@code mariadbd} of the test's own, from the local binaries. */
    private static final class LocalServer implements AutoCloseable {

        private final Path directory;
        private final Process server;
        private final Thread killOnExit;

        private LocalServer(Path directory, Process server) {
            this.directory = directory;
            this.server = server;
            this.killOnExit = new Thread(server::destroyForcibly, "private-mariadb-kill");
            Runtime.getRuntime().addShutdownHook(killOnExit);
        }

        static PrivateMariaDb start() throws IOException, InterruptedException {
            Path directory = Files.createTempDirectory("private-mariadb-");
            List<String> small = List.of("--innodb-buffer-pool-size=16M", "--innodb-log-file-size=8M");
            List<String> install = new ArrayList<>(List.of(binary("mariadb-install-db", "/usr/bin", "/usr/local/bin"),
                    "--no-defaults", "--datadir=" + directory.resolve("data"), "--auth-root-authentication-method=normal",
                    "--skip-test-db"));
            install.addAll(small);
            install.addAll(asUser());
            run(install, directory.resolve("install.log"));

            int port = freePort();
            List<String> serve = new ArrayList<>(List.of(binary("mariadbd", "/usr/sbin", "/usr/local/sbin"), "--no-defaults",
                    "--datadir=" + directory.resolve("data"), "--port=" + port, "--bind-address=127.0.0.1",
                    "--socket=" + directory.resolve("sock"), "--pid-file=" + directory.resolve("pid"),
                    "--log-error=" + directory.resolve("error.log"), "--skip-log-bin", "--skip-name-resolve"));
            serve.addAll(small);
            serve.addAll(asUser());
            Process process = new ProcessBuilder(serve).redirectErrorStream(true)
                    .redirectOutput(directory.resolve("server.out").toFile()).start();
            LocalServer server = new LocalServer(directory, process);
            PrivateMariaDb mariaDb = new PrivateMariaDb(new TestServices.Database("127.0.0.1", port, "root", ""), server);
            try {
                await("the private mariadbd on port " + port).atMost(START_TIMEOUT).pollInterval(Duration.ofMillis(100))
                        .until(() -> server.answers(mariaDb));
            } catch (RuntimeException | Error e) {
                String log = server.errorLog();
                server.close();
                throw new IllegalStateException("the private mariadbd did not start:\n" + log, e);
            }
            return mariaDb;
        }

        @Override
        public void close() throws IOException, InterruptedException {
            server.destroy(); // SIGTERM: a clean shutdown
            if (!server.waitFor(30, TimeUnit.SECONDS)) {
                server.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            Runtime.getRuntime().removeShutdownHook(killOnExit);
            try (Stream<Path> files = Files.walk(directory)) {
                for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(file);
                }
            }
        }

        private boolean answers(PrivateMariaDb mariaDb) {
            if (!server.isAlive()) {
                throw new IllegalStateException("mariadbd exited with " + server.exitValue() + ":\n" + errorLog());
            }
            try (Connection connection = mariaDb.rootConnection()) {
                return connection.isValid(1);
            } catch (SQLException notYet) {
                return false;
            }
        }

        private String errorLog() {
            try {
                Path log = directory.resolve("error.log");
                return Files.exists(log) ? Files.readString(log) : Files.readString(directory.resolve("server.out"));
            } catch (IOException e) {
                return "(no log: " + e + ")";
            }
        }

        /** mariadbd refuses to run as root unless told to; any other user runs it as itself. */
        private static List<String> asUser() {
            return "root".equals(System.getProperty("user.name")) ? List.of("--user=root") : List.of();
        }

        private static String binary(String name, String... directories) {
            Stream<String> path = Stream.of(System.getenv().getOrDefault("PATH", "").split(":"));
            return Stream.concat(path, Stream.of(directories)).map(directory -> Path.of(directory, name))
                    .filter(Files::isExecutable).findFirst().map(Path::toString)
                    .orElseThrow(() -> new IllegalStateException(name + " is not installed. The tests that need a MariaDB of "
                            + "their own run it from the Debian package mariadb-server: run scripts/local-services.sh (or .ci/run)."));
        }

        private static void run(List<String> command, Path log) throws IOException, InterruptedException {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            if (!process.waitFor(2, TimeUnit.MINUTES) || process.exitValue() != 0) {
                process.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " failed:\n" + Files.readString(log));
            }
        }

        private static int freePort() throws IOException {
            try (ServerSocket socket = new ServerSocket(0)) {
                return socket.getLocalPort();
            }
        }
    }
}
