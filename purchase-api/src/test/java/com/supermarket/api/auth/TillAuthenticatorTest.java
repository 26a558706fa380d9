package com.supermarket.api.auth;

import static com.supermarket.api.auth.TillKeysTesting.line;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TillAuthenticatorTest {

    private static final String SEVEN = "tk_store7_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    private static final String EIGHT = "tk_store8_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
    private static final String MANAGER = "tk_manager_ccccccccccccccccccccccccccccccccccccccccc";

    @TempDir
    Path dir;

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final AtomicLong now = new AtomicLong(Instant.parse("2026-11-23T12:00:00Z").toEpochMilli());
    private Path file;
    private TillKeys keys;
    private TillAuthenticator authenticator;

    @BeforeEach
    void keys() throws IOException {
        file = dir.resolve("till-key-hashes");
        Files.writeString(file, line("7", SEVEN, "label=till-1") + line("8", EIGHT) + line("manager", MANAGER));
        keys = new TillKeys(file);
        authenticator = new TillAuthenticator(keys, registry, 100, now::get);
    }

    @AfterEach
    void close() {
        keys.close();
    }

    private AuthDecision post(String store, String authorization) {
        return authenticator.decide(Access.PURCHASE, store, authorization, "POST", "/purchase/" + store + "/customer/1/date/20210101");
    }

    private double refused(AuthDecision reason) {
        return registry.get("api.till.auth.refused").tag("reason", reason.name()).counter().count();
    }

    @Test
    void aStoreKeyPostsForItsOwnStore() {
        assertThat(post("7", "Bearer " + SEVEN)).isEqualTo(AuthDecision.ALLOWED);
        assertThat(post("8", "bearer " + EIGHT)).isEqualTo(AuthDecision.ALLOWED);
        assertThat(post("007", "Bearer " + SEVEN)).as("the same store, numerically").isEqualTo(AuthDecision.ALLOWED);
    }

    @Test
    void withoutAValidKeyItIs401() {
        assertThat(post("7", null)).isEqualTo(AuthDecision.MISSING_KEY);
        assertThat(post("7", "")).isEqualTo(AuthDecision.MISSING_KEY);
        assertThat(post("7", "Basic dXNlcjpwYXNz")).isEqualTo(AuthDecision.MALFORMED_HEADER);
        assertThat(post("7", "Bearer ")).isEqualTo(AuthDecision.MALFORMED_HEADER);
        assertThat(post("7", "Bearer " + SEVEN + " extra")).isEqualTo(AuthDecision.MALFORMED_HEADER);
        assertThat(post("7", "Bearer " + "x".repeat(300))).isEqualTo(AuthDecision.MALFORMED_HEADER);
        assertThat(post("7", "Bearer " + SEVEN + "x")).isEqualTo(AuthDecision.UNKNOWN_KEY);
        assertThat(post("7", "Bearer " + SEVEN.toUpperCase())).isEqualTo(AuthDecision.UNKNOWN_KEY);
        for (AuthDecision decision : new AuthDecision[] {AuthDecision.MISSING_KEY, AuthDecision.MALFORMED_HEADER,
                AuthDecision.UNKNOWN_KEY}) {
            assertThat(decision.status()).isEqualTo(401);
            assertThat(decision.body()).startsWith("{\"message\":\"").doesNotContain(SEVEN);
        }
        assertThat(refused(AuthDecision.MISSING_KEY)).isEqualTo(2);
        assertThat(refused(AuthDecision.MALFORMED_HEADER)).isEqualTo(4);
        assertThat(refused(AuthDecision.UNKNOWN_KEY)).isEqualTo(2);
    }

    @Test
    void anotherStoresKeyIs403() {
        assertThat(post("8", "Bearer " + SEVEN)).isEqualTo(AuthDecision.OTHER_STORE);
        assertThat(AuthDecision.OTHER_STORE.status()).isEqualTo(403);
        assertThat(refused(AuthDecision.OTHER_STORE)).isEqualTo(1);
    }

    @Test
    void aValidKeyWithAPathThatIsNoStoreIdIsLeftToValidation() {
        assertThat(post("abc", "Bearer " + SEVEN)).isEqualTo(AuthDecision.ALLOWED);
        assertThat(post("abc", "Bearer nope")).isEqualTo(AuthDecision.UNKNOWN_KEY);
    }

    @Test
    void managersReadEveryStoreAndPostNothingWhileTillsReadOnlyTheirOwnStore() {
        assertThat(authenticator.decide(Access.STORE_QUERY, "8", "Bearer " + MANAGER, "GET", "/items/store/8"))
                .isEqualTo(AuthDecision.ALLOWED);
        assertThat(authenticator.decide(Access.ITEM_QUERY, null, "Bearer " + MANAGER, "GET", "/items/top10/5"))
                .isEqualTo(AuthDecision.ALLOWED);
        assertThat(post("8", "Bearer " + MANAGER)).isEqualTo(AuthDecision.MANAGER_CANNOT_POST);

        assertThat(authenticator.decide(Access.STORE_QUERY, "7", "Bearer " + SEVEN, "GET", "/items/store/7"))
                .isEqualTo(AuthDecision.ALLOWED);
        assertThat(authenticator.decide(Access.STORE_QUERY, "8", "Bearer " + SEVEN, "GET", "/items/store/8"))
                .isEqualTo(AuthDecision.OTHER_STORE);
        assertThat(authenticator.decide(Access.ITEM_QUERY, null, "Bearer " + SEVEN, "GET", "/items/top10/5"))
                .isEqualTo(AuthDecision.MANAGER_ONLY);
        assertThat(authenticator.decide(Access.ITEM_QUERY, null, null, "GET", "/items/top10/5"))
                .isEqualTo(AuthDecision.MISSING_KEY);
    }

    @Test
    void aRotatedKeyStaysValidUntilItsGraceEndsAlongsideTheNewOne() throws IOException {
        String newSeven = "tk_store7_new_dddddddddddddddddddddddddddddddddddddd";
        Files.writeString(file, line("7", SEVEN, "until=2026-11-24T12:00:00Z") + line("7", newSeven) + line("8", EIGHT));

        assertThat(post("7", "Bearer " + newSeven)).as("not yet reloaded").isEqualTo(AuthDecision.UNKNOWN_KEY);
        assertThat(keys.reload()).isEqualTo(TillKeys.ReloadOutcome.CHANGED);
        assertThat(keys.reload()).isEqualTo(TillKeys.ReloadOutcome.UNCHANGED);

        assertThat(post("7", "Bearer " + newSeven)).isEqualTo(AuthDecision.ALLOWED);
        assertThat(post("7", "Bearer " + SEVEN)).as("within the grace period").isEqualTo(AuthDecision.ALLOWED);
        assertThat(post("7", "Bearer " + MANAGER)).as("revoked: no longer listed").isEqualTo(AuthDecision.UNKNOWN_KEY);

        now.set(Instant.parse("2026-11-24T12:00:00.001Z").toEpochMilli());
        assertThat(post("7", "Bearer " + SEVEN)).isEqualTo(AuthDecision.EXPIRED_KEY);
        assertThat(post("7", "Bearer " + newSeven)).isEqualTo(AuthDecision.ALLOWED);
        assertThat(registry.get("api.till.auth.keys").gauge().value()).isEqualTo(3);
    }

    @Test
    void aBrokenFileKeepsThePreviousKeysInForce() throws IOException {
        Files.writeString(file, "7 not-a-hash\n");

        assertThat(keys.reload()).isEqualTo(TillKeys.ReloadOutcome.FAILED);
        Files.delete(file);
        assertThat(keys.reload()).isEqualTo(TillKeys.ReloadOutcome.FAILED);

        assertThat(post("7", "Bearer " + SEVEN)).isEqualTo(AuthDecision.ALLOWED);
        assertThat(registry.get("api.till.auth.reload.failures").gauge().value()).isEqualTo(2);
    }

    @Test
    void theFileIsReloadedOnItsOwn() throws Exception {
        String newSeven = "tk_store7_new_eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee";
        keys.startReloading(java.time.Duration.ofMillis(20));
        Files.writeString(file, line("7", newSeven));

        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(5))
                .until(() -> post("7", "Bearer " + newSeven) == AuthDecision.ALLOWED);
        assertThat(post("7", "Bearer " + SEVEN)).isEqualTo(AuthDecision.UNKNOWN_KEY);
    }

    @Test
    void aMissingFileStopsTheStart() {
        assertThatThrownBy(() -> new TillKeys(dir.resolve("absent")))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("cannot load the till key hashes");
    }
}
