package com.supermarket.api.items;

import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The store RPC template: direct reply-to (the template's default) with the reply timeout. */
@Configuration(proxyBeanMethods = false)
class RpcConfiguration {

    @Bean
    RabbitTemplate rpcTemplate(CachingConnectionFactory connectionFactory, RpcTimeout timeout) {
        RabbitTemplate template = new RabbitTemplate(connectionFactory);
        template.setReplyTimeout(timeout.replyTimeout().toMillis());
        return template;
    }
}
