package com.supermarket.store.broker;

import com.rabbitmq.client.Channel;
import com.supermarket.contract.BrokerTopology;
import com.supermarket.contract.ManagementClient;
import com.supermarket.contract.Topology;
import java.util.Map;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.boot.amqp.autoconfigure.RabbitProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

@Configuration(proxyBeanMethods = false)
class BrokerConfiguration {

    @Bean
    ManagementClient managementClient(BrokerProperties broker, RabbitProperties rabbit) {
        return new ManagementClient(broker.managementUrl(), rabbit.determineUsername(), rabbit.determinePassword());
    }

    @Bean
    BrokerReady brokerReady(ConnectionFactory connectionFactory, ManagementClient management,
                            BrokerProperties broker, RabbitProperties rabbit) throws Exception {
        String vhost = rabbit.determineVirtualHost() == null ? "/" : rabbit.determineVirtualHost();
        BrokerTopology topology = new BrokerTopology(broker.shardsPerNode());
        try (Connection connection = connectionFactory.createConnection();
             Channel channel = connection.createChannel(false)) {
            topology.declare(channel);
        }
        if (broker.managePolicies()) {
            topology.applyPolicies(management, vhost);
        }
        return new BrokerReady(vhost);
    }

    /**
     * The RPC queue as a bean too, so that Spring's admin declares it again whenever the
     * connection is re-established (it is not durable, so a broker restart drops it). Same
     * arguments as {@link BrokerTopology#declare}.
     */
    @Bean
    Queue storeRpcQueue() {
        return new Queue(Topology.STORE_RPC_QUEUE, false, false, false, Map.of());
    }
}
