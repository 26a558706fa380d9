package com.supermarket.api.auth;

import static com.supermarket.api.auth.TillKeysTesting.line;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.supermarket.api.testing.ApiClient;
import com.supermarket.api.testing.ServedApiTest;
import com.supermarket.broker.testing.TestBroker;
import com.supermarket.contract.Topology;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Till authentication through the whole application (Tomcat, Spring MVC, the interceptor, the
 * publisher on the real broker): missing, wrong, other-store and rotated keys, manager queries,
 * and the refusal metrics. No store-service runs, so an allowed GET ends as a 504.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"api.auth.enabled=true", "api.auth.reload-interval=100ms",
                "api.store-query.reply-timeout=500ms", "api.store-query.request-expiry=300ms",
                "logging.structured.format.console="})
@DirtiesContext
class TillAuthIT extends ServedApiTest {

    private static final String SEVEN = "tk_it_store7_Qm9yaW5nIGJ1dCBsb25nIGVub3VnaCBrZXk";
    private static final String SEVEN_NEXT = "tk_it_store7_next_bmV4dCBrZXkgb2Ygc3RvcmUgc2V2ZW4";
    private static final String EIGHT = "tk_it_store8_ZWlnaHQgZWlnaHQgZWlnaHQgZWlnaHQgZWln";
    private static final String MANAGER = "tk_it_manager_bWFuYWdlciBtYW5hZ2VyIG1hbmFnZXIgbWFu";
    private static final TestBroker broker = TestBroker.create("auth-web");
    private static final Path keysFile;

    static {
        try {
            keysFile = Files.createTempFile("till-key-hashes", ".txt");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @DynamicPropertySource
    static void settings(DynamicPropertyRegistry registry) {
        broker.applyTopology(2);
        broker.springProperties().forEach((key, value) -> registry.add(key, () -> value));
        writeKeys(line("7", SEVEN) + line("8", EIGHT) + line("manager", MANAGER));
        registry.add("api.auth.keys-file", keysFile::toString);
    }

    @AfterAll
    static void cleanUp() throws IOException {
        broker.close();
        Files.deleteIfExists(keysFile);
    }

    private static void writeKeys(String text) {
        try {
            Path next = keysFile.resolveSibling(keysFile.getFileName() + ".next");
            Files.writeString(next, text);
            Files.move(next, keysFile, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                    java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @BeforeEach
    void ready() {
        await().atMost(Duration.ofSeconds(30)).until(() -> api.actuator("/health/readiness").statusCode() == 200);
    }

    private HttpResponse<String> post(int store, String... headers) {
        return api.send("POST", "/purchase/" + store + "/customer/" + (store * 1000) + "/date/20210101",
                ApiClient.body(101), headers);
    }

    private static String bearer(String key) {
        return "Bearer " + key;
    }

    private long messagesBehindPurchaseX() {
        return broker.messageCountBehind(Topology.SHARDED_EXCHANGES.getFirst());
    }

    @Test
    void aPurchaseWithItsStoresKeyIsAccepted() {
        HttpResponse<String> response = post(7, "Authorization", bearer(SEVEN));

        assertThat(response.statusCode()).isEqualTo(201);
        assertThat(response.body()).contains("purchaseId");
    }

    @Test
    void withoutAKeyItIs401AndNothingIsPublished() {
        long before = messagesBehindPurchaseX();

        HttpResponse<String> response = post(7);

        assertThat(response.statusCode()).isEqualTo(401);
        assertThat(response.headers().firstValue("WWW-Authenticate")).hasValue("Bearer");
        assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(type -> assertThat(type).startsWith("application/json"));
        assertThat(response.body()).isEqualTo(AuthDecision.MISSING_KEY.body());
        assertThat(messagesBehindPurchaseX()).isEqualTo(before);
    }

    @Test
    void aWrongOrMalformedKeyIs401WithoutEchoingIt() {
        HttpResponse<String> wrong = post(7, "Authorization", bearer(SEVEN + "x"));
        HttpResponse<String> basic = post(7, "Authorization", "Basic " + SEVEN);

        assertThat(wrong.statusCode()).isEqualTo(401);
        assertThat(wrong.body()).isEqualTo("{\"message\":\"the key is not valid\"}").doesNotContain(SEVEN);
        assertThat(basic.statusCode()).isEqualTo(401);
        assertThat(basic.body()).startsWith("{\"message\":").doesNotContain(SEVEN);
    }

    @Test
    void anotherStoresKeyIs403() {
        HttpResponse<String> response = post(8, "Authorization", bearer(SEVEN));

        assertThat(response.statusCode()).isEqualTo(403);
        assertThat(response.body()).isEqualTo("{\"message\":\"the key belongs to another store\"}");
    }

    @Test
    void theKeyIsCheckedBeforeTheBodyAndAValidKeyStillMeetsValidation() {
        assertThat(api.send("POST", "/purchase/7/customer/7000/date/20210230", "{}").statusCode()).isEqualTo(401);
        HttpResponse<String> invalid = api.send("POST", "/purchase/7/customer/7000/date/20210230", "{}",
                "Authorization", bearer(SEVEN));
        assertThat(invalid.statusCode()).isEqualTo(400);
        assertThat(invalid.body()).contains("date");
    }

    @Test
    void managersReadAnyStoreAndTillsOnlyTheirOwn() {
        // No store-service answers: an allowed query goes to the broker and times out (504).
        assertThat(api.send("GET", "/items/store/8", null, "Authorization", bearer(MANAGER)).statusCode()).isEqualTo(504);
        assertThat(api.send("GET", "/items/top10/101", null, "Authorization", bearer(MANAGER)).statusCode()).isEqualTo(504);
        assertThat(api.send("GET", "/items/store/7", null, "Authorization", bearer(SEVEN)).statusCode()).isEqualTo(504);

        assertThat(api.send("GET", "/items/store/8", null, "Authorization", bearer(SEVEN)).statusCode()).isEqualTo(403);
        assertThat(api.send("GET", "/items/top5/101", null, "Authorization", bearer(SEVEN)).statusCode()).isEqualTo(403);
        assertThat(api.send("GET", "/items/top10/101", null).statusCode()).isEqualTo(401);
        assertThat(post(8, "Authorization", bearer(MANAGER)).statusCode()).isEqualTo(403);
    }

    @Test
    void aRotatedKeyWorksAlongsideTheNewOneUntilItIsDropped() {
        try {
            String grace = Instant.now().plus(Duration.ofHours(1)).toString();
            writeKeys(line("7", SEVEN, "until=" + grace) + line("7", SEVEN_NEXT) + line("8", EIGHT) + line("manager", MANAGER));

            await().atMost(Duration.ofSeconds(10)).until(() -> post(7, "Authorization", bearer(SEVEN_NEXT)).statusCode() == 201);
            assertThat(post(7, "Authorization", bearer(SEVEN)).statusCode()).as("during the grace period").isEqualTo(201);

            writeKeys(line("7", SEVEN_NEXT) + line("8", EIGHT) + line("manager", MANAGER));

            await().atMost(Duration.ofSeconds(10)).until(() -> post(7, "Authorization", bearer(SEVEN)).statusCode() == 401);
            assertThat(post(7, "Authorization", bearer(SEVEN_NEXT)).statusCode()).isEqualTo(201);

            String past = Instant.now().minus(Duration.ofSeconds(1)).toString();
            writeKeys(line("7", SEVEN_NEXT, "until=" + past) + line("7", SEVEN) + line("8", EIGHT) + line("manager", MANAGER));
            await().atMost(Duration.ofSeconds(10)).until(() -> post(7, "Authorization", bearer(SEVEN)).statusCode() == 201);
            HttpResponse<String> expired = post(7, "Authorization", bearer(SEVEN_NEXT));
            assertThat(expired.statusCode()).isEqualTo(401);
            assertThat(expired.body()).contains("rotated out");
        } finally {
            writeKeys(line("7", SEVEN) + line("8", EIGHT) + line("manager", MANAGER));
            await().atMost(Duration.ofSeconds(10)).until(() -> post(7, "Authorization", bearer(SEVEN)).statusCode() == 201);
        }
    }

    @Test
    void refusalsAreCountedByReason() {
        post(8, "Authorization", bearer(SEVEN));

        String metrics = api.actuator("/prometheus").body();

        assertThat(metrics).containsPattern("api_till_auth_refused_total\\{[^}]*reason=\"OTHER_STORE\"[^}]*} [1-9]");
        assertThat(metrics).contains("api_till_auth_refused_total{application=\"purchase-api\",reason=\"MISSING_KEY\"");
        assertThat(metrics).containsPattern("api_till_auth_keys\\{[^}]*} [3-9]");
    }

    @Test
    void theOpenApiDescriptionAndTheProbesNeedNoKey() {
        assertThat(api.get("/openapi.yaml").statusCode()).isEqualTo(200);
        assertThat(api.actuator("/health/liveness").statusCode()).isEqualTo(200);
    }
}
