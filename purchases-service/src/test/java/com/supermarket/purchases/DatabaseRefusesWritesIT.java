package com.supermarket.purchases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.supermarket.broker.testing.TestBroker;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.Topology;
import com.supermarket.contract.WireFormat;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The service on the {@code mysql} profile while the database refuses every write for a few
 * seconds, mid-stream: nothing is parked, readiness is DOWN with the reason meanwhile, and every
 * purchase is stored exactly once afterwards. The database is a {@link PrivateMariaDb} (turning
 * the shared server read-only would break the tests beside this one); the service writes as a
 * user of its own, granted {@code SELECT} on the database and {@code INSERT} on the purchase
 * table, as in production, so that {@code read_only} applies to it and a grant can be revoked.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DatabaseRefusesWritesIT {

    private static final Duration PATIENCE = Duration.ofSeconds(90);
    private static final String DATABASE = "purchases";
    private static final String USER = "'purchases'@'%'";
    private static final String INSERT_GRANT = " INSERT ON " + DATABASE + ".purchase ";

    private PrivateMariaDb mariaDb;
    private TestBroker broker;
    private PurchasesServiceRunner service;

    @BeforeAll
    void start() throws Exception {
        mariaDb = PrivateMariaDb.start();
        String password = UUID.randomUUID().toString();
        mariaDb.asRoot("CREATE DATABASE " + DATABASE, "CREATE USER " + USER + " IDENTIFIED BY '" + password + "'",
                "GRANT SELECT ON " + DATABASE + ".* TO " + USER);
        broker = TestBroker.create("purchases-db-refuses");
        service = new PurchasesServiceRunner("mysql", broker, Map.of(
                "spring.datasource.url", mariaDb.jdbcUrl(DATABASE),
                "spring.datasource.username", "purchases",
                "spring.datasource.password", password,
                "spring.flyway.user", mariaDb.rootUser(),
                "spring.flyway.password", mariaDb.rootPassword(),
                "spring.datasource.hikari.maximum-pool-size", "4"));
        // A table-level grant takes effect on open connections at their next statement.
        mariaDb.asRoot("GRANT" + INSERT_GRANT + "TO " + USER);
    }

    @AfterAll
    void stop() throws Exception {
        try (PrivateMariaDb database = mariaDb; TestBroker vhost = broker) {
            if (service != null) {
                service.close();
            }
        }
    }

    @Test
    void aDatabaseTurnedReadOnlyMidStreamParksNothingAndStoresEverythingOnceWritableAgain() throws Exception {
        writeAStreamWhileTheDatabaseRefusesWrites("SET GLOBAL read_only = ON", "SET GLOBAL read_only = OFF", "read-only");
    }

    @Test
    void anInsertGrantRevokedMidStreamParksNothingAndStoresEverythingOnceGrantedAgain() throws Exception {
        writeAStreamWhileTheDatabaseRefusesWrites("REVOKE" + INSERT_GRANT + "FROM " + USER, "GRANT" + INSERT_GRANT + "TO " + USER,
                "INSERT command denied");
    }

    /**
     * A BEFORE INSERT trigger refuses two purchases of one batch for their data, one with an error
     * of its own ({@code SIGNAL SQLSTATE '45000'}, not known to be a data error: proven bad
     * because its neighbours are stored) and one with a data exception ({@code '22003'}).
     */
    @Test
    void purchasesTheDatabaseRejectsForTheirOwnDataAreParkedAloneAndTheirNeighboursStored() throws Exception {
        mariaDb.asRoot("CREATE TRIGGER " + DATABASE + ".refuse_closed_stores BEFORE INSERT ON " + DATABASE + ".purchase "
                + "FOR EACH ROW BEGIN "
                + "IF NEW.store_id = 666 THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'store 666 is closed'; END IF; "
                + "IF NEW.store_id = 667 THEN SIGNAL SQLSTATE '22003' SET MESSAGE_TEXT = 'store 667 is out of range'; END IF; "
                + "END");
        try {
            List<Purchase> good = List.of(TestPurchases.atStore(5), TestPurchases.atStore(5), TestPurchases.atStore(5));
            Purchase closed = TestPurchases.atStore(666);
            Purchase outOfRange = TestPurchases.atStore(667);
            long parkedBefore = broker.messageCount(Topology.PARKING_QUEUE);

            TestPurchases.publishBatch(broker, "5", List.of(WireFormat.encode(good.get(0)), WireFormat.encode(closed),
                    WireFormat.encode(good.get(1)), WireFormat.encode(outOfRange), WireFormat.encode(good.get(2))));

            await("the bad purchases parked").atMost(PATIENCE)
                    .until(() -> broker.messageCount(Topology.PARKING_QUEUE) == parkedBefore + 2);
            for (Purchase purchase : good) {
                assertThat(service.find(purchase.purchaseId())).isEqualTo(purchase);
            }
            assertThat(service.find(closed.purchaseId())).isNull();
            assertThat(service.find(outOfRange.purchaseId())).isNull();
        } finally {
            mariaDb.asRoot("DROP TRIGGER " + DATABASE + ".refuse_closed_stores");
        }
    }

    private void writeAStreamWhileTheDatabaseRefusesWrites(String refuse, String accept, String reason) throws Exception {
        long parkedBefore = broker.messageCount(Topology.PARKING_QUEUE);
        double rejectedBefore = service.counter("purchases.rejected");
        long rowsBefore = service.storedCount();
        PurchaseStream stream = new PurchaseStream(broker);
        try (stream) {
            await("the stream is being stored").atMost(PATIENCE).until(() -> service.storedCount() >= rowsBefore + 50);

            mariaDb.asRoot(refuse);
            try {
                int publishedWhenRefused = stream.size();
                double failuresWhenRefused = service.counter("purchases.write.failures");
                await("readiness DOWN with the reason while the database refuses writes").atMost(Duration.ofSeconds(30))
                        .until(() -> service.readinessStatus() == 503 && readiness().contains(reason));
                await("writes retried for a while, the stream going on").atMost(PATIENCE)
                        .until(() -> service.counter("purchases.write.failures") >= failuresWhenRefused + 8
                                && stream.size() >= publishedWhenRefused + 50);
                assertThat(broker.messageCount(Topology.PARKING_QUEUE)).as("parked while refused").isEqualTo(parkedBefore);
            } finally {
                mariaDb.asRoot(accept);
            }
            stream.awaitMore(50, PATIENCE);
        }

        List<Purchase> published = stream.published();
        List<UUID> publishedIds = published.stream().map(Purchase::purchaseId).toList();
        await("every purchase stored").atMost(PATIENCE).until(() -> storedIds().containsAll(publishedIds));
        await("readiness UP again").atMost(PATIENCE).until(() -> service.readinessStatus() == 200);
        assertThat(storedIds()).as("each purchase stored exactly once").doesNotHaveDuplicates().containsAll(publishedIds);
        for (Purchase purchase : published.subList(0, 20)) {
            assertThat(service.find(purchase.purchaseId())).isEqualTo(purchase);
        }
        assertThat(broker.messageCount(Topology.PARKING_QUEUE)).as("parked").isEqualTo(parkedBefore);
        assertThat(service.counter("purchases.rejected")).isEqualTo(rejectedBefore);
    }

    private String readiness() {
        return service.http().get().uri("/actuator/health/readiness").retrieve().body(String.class);
    }

    private List<UUID> storedIds() throws SQLException {
        return mariaDb.purchaseIds(DATABASE);
    }
}
