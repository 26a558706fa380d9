package com.supermarket.api.broker;

import com.rabbitmq.client.Channel;
import com.supermarket.contract.BrokerTopology;
import com.supermarket.contract.ManagementClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.stereotype.Component;

/**
 * Applies the platform's broker topology at startup (idempotent, so any service may start
 * first), and the sharding and dead-letter policies unless the deployment provides them. A
 * broker without the sharding plugin fails startup with the message that says how to enable
 * it; readiness turns UP only after this ran.
 */
@Component
class TopologyInitializer implements ApplicationRunner {

    private static final Logger log = LoggerFactory.getLogger(TopologyInitializer.class);

    private final CachingConnectionFactory connectionFactory;
    private final BrokerProperties properties;

    TopologyInitializer(CachingConnectionFactory connectionFactory, BrokerProperties properties) {
        this.connectionFactory = connectionFactory;
        this.properties = properties;
    }

    @Override
    public void run(ApplicationArguments args) throws Exception {
        BrokerTopology topology = new BrokerTopology(properties.shardsPerNode());
        try (Connection connection = connectionFactory.createConnection();
             Channel channel = connection.createChannel(false)) {
            topology.declare(channel);
        }
        var rabbit = connectionFactory.getRabbitConnectionFactory();
        if (properties.managePolicies()) {
            topology.applyPolicies(new ManagementClient(properties.managementUrl(), rabbit.getUsername(), rabbit.getPassword()),
                    rabbit.getVirtualHost());
        }
        log.info("broker topology applied in vhost '{}' ({} shards per node, policies {})", rabbit.getVirtualHost(),
                properties.shardsPerNode(), properties.managePolicies() ? "applied" : "left to the deployment");
    }
}
