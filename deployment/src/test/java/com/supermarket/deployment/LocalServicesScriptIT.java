package com.supermarket.deployment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * scripts/local-services.sh starts this machine's MariaDB while another process whose executable
 * path reads /usr/sbin/mariadbd is running, as a database container's is. The stand-in for the
 * container is sleep, bind-mounted over that path in a mount namespace of its own. Stops the
 * machine's MariaDB on the way, as the script is what must bring it back.
 */
class LocalServicesScriptIT {

    private static final String DECOY = "mount --bind /bin/sleep /usr/sbin/mariadbd && exec /usr/sbin/mariadbd 300";

    @Test
    void startsTheMachinesMariaDbBesideAContainersDatabaseProcess() throws Exception {
        Path log = Files.createTempFile("local-services", ".log");
        assertThat(run(log, "scripts/local-services.sh")).as(Files.readString(log)).isZero();
        assertThat(run(log, "mariadb-admin", "--protocol=socket", "-uroot", "shutdown")).as(Files.readString(log)).isZero();
        await("the machine's MariaDB stopped").atMost(Duration.ofSeconds(30))
                .until(() -> run(log, "mariadb-admin", "--protocol=tcp", "-h", "127.0.0.1", "-uroot", "ping") != 0);

        Process decoy = new ProcessBuilder("unshare", "--mount", "--propagation", "private", "--", "sh", "-c", DECOY)
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            await("a process running as /usr/sbin/mariadbd").atMost(Duration.ofSeconds(10))
                    .until(() -> run(log, "start-stop-daemon", "--test", "--start", "--exec", "/usr/sbin/mariadbd") == 1);

            int status = run(log, "scripts/local-services.sh");
            assertThat(status).as(Files.readString(log)).isZero();
            assertThat(run(log, "mariadb", "--protocol=tcp", "-h", "127.0.0.1", "-uroot", "-e", "SELECT 1"))
                    .as(Files.readString(log)).isZero();
        } finally {
            decoy.destroy();
            decoy.waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** The command's exit status; its output goes to the log, as services it starts may keep the file open. */
    private static int run(Path log, String... command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(List.of(command)).directory(DeploymentFiles.root().toFile())
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.to(log.toFile())).start();
        if (!process.waitFor(5, TimeUnit.MINUTES)) {
            process.destroyForcibly();
            throw new AssertionError(String.join(" ", command) + " did not finish within 5 minutes");
        }
        return process.exitValue();
    }
}
