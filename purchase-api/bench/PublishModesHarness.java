import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.supermarket.contract.BrokerSettings;
import com.supermarket.contract.BrokerSetup;
import com.supermarket.contract.BrokerTopology;
import com.supermarket.contract.ManagementClient;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseItem;
import com.supermarket.contract.Topology;
import com.supermarket.contract.WireFormat;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.LongAdder;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;

/**
 * Broker-side cost of the two publish modes without HTTP in the way: P publisher threads, each
 * on its own confirm-mode channel, publish a purchase (to the ingress fanout, or to purchaseX
 * then storeX) and wait for its confirms before the next one, as a request thread of
 * purchase-api does. Prints purchases/s and the broker's CPU per 1000 purchases, per round.
 *
 * Usage: java -cp "contract/target/classes:$(cat /tmp/contract-cp.txt)" \
 *          purchase-api/bench/PublishModesHarness.java [rounds] [seconds] [publishers]
 */
public class PublishModesHarness {

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        int publishers = args.length > 2 ? Integer.parseInt(args[2]) : 32;
        long brokerPid = brokerPid();
        ManagementClient management = new ManagementClient(URI.create("http://localhost:15672"), "guest", "guest");
        for (int round = 1; round <= rounds; round++) {
            for (boolean twice : new boolean[] {false, true}) {
                String vhost = "bench-harness-" + UUID.randomUUID().toString().substring(0, 8);
                management.send("PUT", "api/vhosts/" + vhost, null);
                management.send("PUT", "api/permissions/" + vhost + "/guest",
                        "{\"configure\":\".*\",\"write\":\".*\",\"read\":\".*\"}".getBytes());
                try {
                    ConnectionFactory factory = new ConnectionFactory();
                    factory.setVirtualHost(vhost);
                    try (Connection connection = factory.newConnection()) {
                        CachingConnectionFactory declaring = new CachingConnectionFactory(factory);
                        try {
                            BrokerSetup setup = new BrokerSetup(new RabbitAdmin(declaring), management, vhost,
                                    new BrokerSettings(URI.create("http://localhost:15672"), 4, true, null, Duration.ofSeconds(1), null, 0));
                            if (!setup.ensure()) {
                                throw new IllegalStateException(setup.problem());
                            }
                        } finally {
                            declaring.destroy();
                        }
                        while (BrokerTopology.shardQueues(management, vhost, Topology.STORE_EXCHANGE).size() < 4
                                || BrokerTopology.shardQueues(management, vhost, Topology.PURCHASE_EXCHANGE).size() < 4) {
                            Thread.sleep(200);
                        }
                        long cpuBefore = cpuTicks(brokerPid);
                        long start = System.nanoTime();
                        long done = run(connection, twice, publishers, seconds);
                        double elapsed = (System.nanoTime() - start) / 1e9;
                        long cpuMs = (cpuTicks(brokerPid) - cpuBefore) * 10; // 100 ticks per second
                        System.out.printf("%s round %d: %.0f purchases/s, broker CPU %d ms per 1000 purchases%n",
                                twice ? "TWICE " : "FANOUT", round, done / elapsed, cpuMs * 1000 / Math.max(1, done));
                    }
                } finally {
                    management.send("DELETE", "api/vhosts/" + vhost, null);
                }
            }
        }
    }

    private static long run(Connection connection, boolean twice, int publishers, int seconds) throws Exception {
        LongAdder done = new LongAdder();
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < publishers; p++) {
            Channel channel = connection.createChannel();
            channel.confirmSelect();
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    while (System.nanoTime() < deadline) {
                        int store = ThreadLocalRandom.current().nextInt(1, 1025);
                        List<PurchaseItem> items = new ArrayList<>();
                        for (int i = 0; i < 5; i++) {
                            items.add(new PurchaseItem(ThreadLocalRandom.current().nextInt(1, 100_001), 1));
                        }
                        UUID id = UUID.randomUUID();
                        byte[] body = WireFormat.encode(new Purchase(id, store, store * 1000, LocalDate.of(2021, 1, 1), items, Instant.now()));
                        AMQP.BasicProperties props = new AMQP.BasicProperties.Builder().deliveryMode(2)
                                .contentType("application/json").messageId(id.toString()).build();
                        for (String exchange : twice ? Topology.SHARDED_EXCHANGES : List.of(Topology.INGRESS_EXCHANGE)) {
                            channel.basicPublish(exchange, Integer.toString(store), true, props, body);
                        }
                        channel.waitForConfirmsOrDie(5000);
                        done.increment();
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }));
        }
        for (Thread thread : threads) {
            thread.join();
        }
        return done.sum();
    }

    private static long brokerPid() throws Exception {
        Process pgrep = new ProcessBuilder("pgrep", "-o", "-f", "beam.smp").start();
        return Long.parseLong(new String(pgrep.getInputStream().readAllBytes()).strip());
    }

    private static long cpuTicks(long pid) throws Exception {
        String[] stat = Files.readString(Path.of("/proc/" + pid + "/stat")).split(" ");
        return Long.parseLong(stat[13]) + Long.parseLong(stat[14]);
    }
}
