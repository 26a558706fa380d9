package com.supermarket.api.auth;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** scripts/till-keys.sh and the API read the same files: what it issues and rotates, the API accepts. */
class TillKeysScriptTest {

    private static final Path SCRIPT = Path.of("..", "scripts", "till-keys.sh").toAbsolutePath().normalize();

    @TempDir
    Path dir;

    private void run(String... args) throws IOException, InterruptedException {
        List<String> command = new java.util.ArrayList<>(List.of(SCRIPT.toString()));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        assertThat(process.waitFor()).as(output).isZero();
    }

    /** scope -> keys, from till-keys.txt */
    private Map<String, List<String>> plainKeys() throws IOException {
        return Files.readAllLines(dir.resolve("till-keys.txt")).stream().filter(line -> !line.startsWith("#"))
                .map(line -> line.split(" "))
                .collect(Collectors.groupingBy(fields -> fields[0], Collectors.mapping(fields -> fields[1], Collectors.toList())));
    }

    @Test
    void issuedKeysAuthenticateTheirStoreAndRotatedOnesKeepWorkingDuringTheGrace() throws Exception {
        run("issue", "--dir", dir.toString(), "--stores", "1-3,9", "--tills", "2", "--managers", "1");
        Map<String, List<String>> issued = plainKeys();
        assertThat(issued.keySet()).containsExactlyInAnyOrder("1", "2", "3", "9", "manager");
        assertThat(issued.get("2")).hasSize(2).allSatisfy(key -> assertThat(key).matches("tk_[A-Za-z0-9_-]{44}"));

        try (TillKeys keys = new TillKeys(dir.resolve("till-key-hashes.txt"))) {
            TillAuthenticator authenticator = new TillAuthenticator(keys, new SimpleMeterRegistry(), 10, System::currentTimeMillis);
            for (String store : List.of("1", "2", "3", "9")) {
                for (String key : issued.get(store)) {
                    assertThat(authenticator.decide(Access.PURCHASE, store, "Bearer " + key, "POST", "/")).isEqualTo(AuthDecision.ALLOWED);
                }
            }
            assertThat(authenticator.decide(Access.PURCHASE, "3", "Bearer " + issued.get("2").getFirst(), "POST", "/"))
                    .isEqualTo(AuthDecision.OTHER_STORE);
            assertThat(authenticator.decide(Access.ITEM_QUERY, null, "Bearer " + issued.get("manager").getFirst(), "GET", "/"))
                    .isEqualTo(AuthDecision.ALLOWED);

            run("rotate", "--dir", dir.toString(), "--stores", "2", "--grace", "1h");
            run("revoke", "--dir", dir.toString(), "--stores", "9");
            assertThat(keys.reload()).isEqualTo(TillKeys.ReloadOutcome.CHANGED);
            Map<String, List<String>> rotated = plainKeys();
            assertThat(rotated.get("2")).hasSize(2).doesNotContainAnyElementsOf(issued.get("2"));
            assertThat(rotated).doesNotContainKey("9");
            for (String key : rotated.get("2")) {
                assertThat(authenticator.decide(Access.PURCHASE, "2", "Bearer " + key, "POST", "/")).isEqualTo(AuthDecision.ALLOWED);
            }
            for (String key : issued.get("2")) {
                assertThat(authenticator.decide(Access.PURCHASE, "2", "Bearer " + key, "POST", "/")).as("within the grace")
                        .isEqualTo(AuthDecision.ALLOWED);
            }
            assertThat(authenticator.decide(Access.PURCHASE, "9", "Bearer " + issued.get("9").getFirst(), "POST", "/"))
                    .isEqualTo(AuthDecision.UNKNOWN_KEY);
            assertThat(rotated.get("1")).isEqualTo(issued.get("1"));
        }
        assertThat(Files.getPosixFilePermissions(dir.resolve("till-keys.txt")).toString()).isEqualTo("[OWNER_READ, OWNER_WRITE]");
    }
}
