package com.supermarket.contract;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.contract.testing.TestBroker;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory.ConfirmType;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.boot.amqp.autoconfigure.CachingConnectionFactoryConfigurer;
import org.springframework.boot.amqp.autoconfigure.RabbitConnectionFactoryBeanConfigurer;
import org.springframework.boot.amqp.autoconfigure.RabbitProperties;
import org.springframework.core.io.DefaultResourceLoader;

/**
 * A service's own connection ({@link OwnConnection}) on the real broker: made from the
 * application's settings as Spring Boot makes its own, it tries every address.
 */
class OwnConnectionIT {

    private static final TestBroker BROKER = TestBroker.create("own-connection");

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

        CachingConnectionFactory factory = OwnConnection.of(
                new RabbitConnectionFactoryBeanConfigurer(new DefaultResourceLoader(), rabbit),
                new CachingConnectionFactoryConfigurer(rabbit), "test own connection");
        try {
            Connection connection = factory.createConnection();

            assertThat(connection.isOpen()).isTrue();
            assertThat(connection.getDelegate().getClientProvidedName()).isEqualTo("test own connection");
            assertThat(factory.isPublisherConfirms()).isFalse();
            assertThat(factory.isSimplePublisherConfirms()).isFalse();
            assertThat(factory.isPublisherReturns()).isFalse();
        } finally {
            factory.destroy();
        }
    }
}
