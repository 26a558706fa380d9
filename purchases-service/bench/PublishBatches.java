import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseBatch;
import com.supermarket.contract.PurchaseItem;
import com.supermarket.contract.Topology;
import com.supermarket.contract.WireFormat;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Publishes N purchases of 5 items as PurchaseBatch messages of B purchases, all of one store each
 * (so of one shard), persistent, with confirms every 500 messages. Used by drain.sh.
 * Usage: java -cp <contract classpath> PublishBatches.java <vhost> <purchases> <batch>
 */
public class PublishBatches {
    public static void main(String[] args) throws Exception {
        String vhost = args[0];
        int purchases = Integer.parseInt(args[1]);
        int batch = Integer.parseInt(args[2]);
        ConnectionFactory factory = new ConnectionFactory();
        factory.setVirtualHost(vhost);
        try (Connection connection = factory.newConnection(); Channel channel = connection.createChannel()) {
            channel.confirmSelect();
            ThreadLocalRandom random = ThreadLocalRandom.current();
            for (int sent = 0; sent < purchases; sent += batch) {
                int bucket = random.nextInt(256);
                List<byte[]> elements = new ArrayList<>(batch);
                for (int i = 0; i < batch; i++) {
                    int store = bucket + 1;
                    List<PurchaseItem> items = new ArrayList<>();
                    for (int line = 0; line < 5; line++) {
                        items.add(new PurchaseItem(random.nextInt(1, 100_001), random.nextInt(1, 4)));
                    }
                    elements.add(WireFormat.encode(new Purchase(UUID.randomUUID(), store, store * 1000 + i,
                            LocalDate.of(2021, 1, 1), items, Instant.now())));
                }
                channel.basicPublish(Topology.INGRESS_EXCHANGE, Topology.routingKey(bucket + 1, 256),
                        new AMQP.BasicProperties.Builder().type(PurchaseBatch.MESSAGE_TYPE).deliveryMode(2)
                                .contentType(WireFormat.CONTENT_TYPE).build(), PurchaseBatch.frame(elements));
                if ((sent / batch) % 500 == 0) {
                    channel.waitForConfirmsOrDie(30_000);
                }
            }
            channel.waitForConfirmsOrDie(30_000);
        }
    }
}
