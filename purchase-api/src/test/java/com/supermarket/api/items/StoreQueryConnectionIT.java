package com.supermarket.api.items;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.broker.testing.TestBroker;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory.ConfirmType;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.boot.amqp.autoconfigure.CachingConnectionFactoryConfigurer;
import org.springframework.boot.amqp.autoconfigure.RabbitConnectionFactoryBeanConfigurer;
import org.springframework.boot.amqp.autoconfigure.RabbitProperties;
import org.springframework.core.io.DefaultResourceLoader;

/**
 * The store queries' connection ({@link StoreQueryClient#connectionOfItsOwn}) on the real broker:
 * made from the application's settings as Spring Boot makes its own, it tries every address.
 */
class StoreQueryConnectionIT {

    private static final TestBroker BROKER = TestBroker.create("store-query-connection");

    @AfterAll
    static void close() {
        BROKER.close();
    }

    @Test
    void reachesTheBrokerPastADeadFirstAddressAndIsNeitherConfirmedNorReturned() {
        RabbitProperties rabbit = new RabbitProperties();
        // Nothing listens on port 1: a connection made from the first address alone never opens.
        rabbit.setAddresses(List.of("127.0.0.1:1", BROKER.host() + ":" + BROKER.port()));
        rabbit.setUsername(BROKER.username());
        rabbit.setPassword(BROKER.password());
        rabbit.setVirtualHost(BROKER.vhost());
        rabbit.setPublisherConfirmType(ConfirmType.CORRELATED);
        rabbit.setPublisherReturns(true);

        CachingConnectionFactory factory = StoreQueryClient.connectionOfItsOwn(
                new RabbitConnectionFactoryBeanConfigurer(new DefaultResourceLoader(), rabbit),
                new CachingConnectionFactoryConfigurer(rabbit), "test store queries");
        try {
            Connection connection = factory.createConnection();

            assertThat(connection.isOpen()).isTrue();
            assertThat(connection.getDelegate().getClientProvidedName()).isEqualTo("test store queries");
            assertThat(factory.isPublisherConfirms()).isFalse();
            assertThat(factory.isSimplePublisherConfirms()).isFalse();
            assertThat(factory.isPublisherReturns()).isFalse();
        } finally {
            factory.destroy();
        }
    }
}
